package soak

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procRoot is /proc (a test points it elsewhere).
type procFS struct{ root string }

// children lists the pids whose parent is pid.
func (p procFS) children(pid int) ([]int, error) {
	ents, err := os.ReadDir(p.root)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range ents {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(p.root, e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		if ppid, ok := parentOf(b); ok && ppid == pid {
			out = append(out, child)
		}
	}
	return out, nil
}

// parentOf reads the ppid from a /proc/<pid>/stat line: the field after the
// state, which follows the command in parentheses (which may hold spaces
// and parentheses itself).
func parentOf(stat []byte) (int, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// rss is the process's VmRSS in bytes.
func (p procFS) rss(pid int) (int64, error) {
	f, err := os.Open(filepath.Join(p.root, strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) != 2 || f[1] != "kB" {
				return 0, fmt.Errorf("pid %d: VmRSS %q", pid, v)
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("pid %d: no VmRSS", pid)
}

// fds counts the process's open file descriptors.
func (p procFS) fds(pid int) (int, error) {
	ents, err := os.ReadDir(filepath.Join(p.root, strconv.Itoa(pid), "fd"))
	return len(ents), err
}

// memory is the process's VmRSS and VmHWM (its peak RSS), in bytes.
func (p procFS) memory(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile(filepath.Join(p.root, strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, 0, err
	}
	return parseMemory(b)
}

// parseMemory reads VmRSS and VmHWM from a /proc/PID/status.
func parseMemory(status []byte) (rss, hwm int64, err error) {
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		key, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, 0, fmt.Errorf("%s %q", key, v)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, 0, err
		}
		if key == "VmRSS" {
			rss = kb << 10
		} else {
			hwm = kb << 10
		}
		found++
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("no VmRSS and VmHWM")
	}
	return rss, hwm, nil
}

// unixSockets are the inodes of the machine's unix sockets
// (/proc/net/unix).
func (p procFS) unixSockets() map[string]bool {
	out := map[string]bool{}
	b, err := os.ReadFile(filepath.Join(p.root, "net", "unix"))
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		if f := strings.Fields(line); len(f) >= 7 {
			out[f[6]] = true
		}
	}
	return out
}

// fdKinds counts a process's open files by kind: unix sockets (by the
// inodes of unix), other sockets, pipes, anonymous inodes, files.
func (p procFS) fdKinds(pid int, unix map[string]bool) map[string]int {
	out := map[string]int{}
	dir := filepath.Join(p.root, strconv.Itoa(pid), "fd")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		kind := "file"
		switch {
		case strings.HasPrefix(target, "socket:["):
			kind = "socket"
			if unix[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] {
				kind = "unix"
			}
		case strings.HasPrefix(target, "pipe:"):
			kind = "pipe"
		case strings.HasPrefix(target, "anon_inode:"):
			kind = "anon"
		}
		out[kind]++
	}
	return out
}
