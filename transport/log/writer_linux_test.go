package log

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLogWritersSharePipe: two LogWriters (two workers' logs) write
// batches far larger than the pipe holds (one page: it is full all the
// time) into one pipe at once; every line the reader gets is whole, and
// each writer's lines arrive all and in order.
func TestLogWritersSharePipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, os.Getpagesize()); err != nil {
		t.Fatal(err)
	}
	const writers, lines = 2, 3000
	pad := strings.Repeat("-", 200)
	got := make(chan []string, 1)
	go func() {
		var all []string
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			all = append(all, sc.Text())
		}
		got <- all
	}()
	var wg sync.WaitGroup
	// Each writer has a file of its own on the pipe, as each worker has
	// its stderr: an *os.File would make its users' writes wait for each
	// other, which processes do not.
	files := make([]*os.File, writers)
	for k := range files {
		fd, err := unix.Dup(int(w.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		files[k] = os.NewFile(uintptr(fd), fmt.Sprint("stderr of writer ", k))
	}
	for k := range writers {
		lw := NewWriter(files[k], 4<<20)
		if !lw.lines {
			t.Fatal("a pipe is not written line by line")
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range lines {
				fmt.Fprintf(lw, "writer %d line %d %s\n", k, i, pad)
			}
			if err := lw.Close(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, f := range files {
		f.Close()
	}
	w.Close()
	next := make([]int, writers)
	for _, l := range <-got {
		var k, i int
		var rest string
		if n, _ := fmt.Sscanf(l, "writer %d line %d %s", &k, &i, &rest); n != 3 || rest != pad || k < 0 || k >= writers {
			t.Fatalf("a torn line: %.120q", l)
		}
		if i != next[k] {
			t.Fatalf("writer %d: line %d after line %d", k, i, next[k]-1)
		}
		next[k]++
	}
	for k, n := range next {
		if n != lines {
			t.Errorf("writer %d: %d lines of %d", k, n, lines)
		}
	}
}
