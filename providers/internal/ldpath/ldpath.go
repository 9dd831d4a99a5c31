// Package ldpath finds out, without loading anything, which shared
// libraries an ELF library needs and which of them the dynamic loader would
// not find: it reads DT_NEEDED, DT_RPATH and DT_RUNPATH (debug/elf) and
// resolves each name the way glibc's ld.so does, recursively. ONNX Runtime
// only says "Failed to load shared library" when a provider library's
// dependency is missing; this names the library.
//
// Search order for a name without a slash, as in ld.so(8): a library
// already loaded (here: the Preloaded directories, whose libraries svc
// loads before the provider), DT_RPATH of the object and of the objects
// that loaded it (when the object has no DT_RUNPATH), LD_LIBRARY_PATH,
// DT_RUNPATH of the object, /etc/ld.so.cache, the default directories.
// $ORIGIN (and ${ORIGIN}) in RPATH/RUNPATH is the object's directory.
package ldpath

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Search is where the loader looks.
type Search struct {
	// Preloaded directories hold libraries loaded before the one resolved
	// (with RTLD_GLOBAL): a needed name found there is satisfied first.
	Preloaded []string
	// LibraryPath is $LD_LIBRARY_PATH, split.
	LibraryPath []string
	// Cache maps sonames to paths (/etc/ld.so.cache); nil = none.
	Cache map[string]string
	// Defaults are the directories searched last.
	Defaults []string
}

// System is this machine's loader search: $LD_LIBRARY_PATH,
// /etc/ld.so.cache (ignored when unreadable) and the default directories,
// with the preloaded directories given.
func System(preloaded []string) Search {
	s := Search{Preloaded: preloaded, LibraryPath: SplitPath(os.Getenv("LD_LIBRARY_PATH")), Defaults: DefaultDirs(runtime.GOARCH)}
	if c, err := ReadCache("/etc/ld.so.cache", runtime.GOARCH); err == nil {
		s.Cache = c
	}
	return s
}

// SplitPath splits a colon- or semicolon-separated list of directories,
// dropping empty entries (ld.so reads an empty entry as the current
// directory; svc does not follow it there).
func SplitPath(v string) []string {
	var out []string
	for _, d := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ';' }) {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// DefaultDirs are glibc's trusted directories on Debian-like and other
// common layouts for goarch.
func DefaultDirs(goarch string) []string {
	triplet := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[goarch]
	var out []string
	if triplet != "" {
		out = append(out, "/lib/"+triplet, "/usr/lib/"+triplet)
	}
	return append(out, "/lib64", "/usr/lib64", "/lib", "/usr/lib")
}

// Missing is a needed library the loader would not find.
type Missing struct {
	// Name is the DT_NEEDED entry, e.g. "libcublasLt.so.13".
	Name string
	// NeededBy is the path of the first library that needs it.
	NeededBy string
}

// Result is what resolving a library found.
type Result struct {
	// Found maps each needed name to the file it resolves to.
	Found map[string]string
	// Missing lists the names not found, in the order they were met
	// (breadth-first from the library).
	Missing []Missing
	// deps maps each visited file to the files its needs resolved to.
	deps map[string][]string
	root string
}

// LoadOrder lists the resolved files, the library itself excluded, so
// that each comes after every file it needs: the order to dlopen them in
// when they are not on the loader's own path.
func (r Result) LoadOrder() []string {
	var out []string
	done := map[string]bool{}
	var visit func(p string)
	visit = func(p string) {
		if done[p] {
			return
		}
		done[p] = true
		for _, d := range r.deps[p] {
			visit(d)
		}
		if p != r.root {
			out = append(out, p)
		}
	}
	visit(r.root)
	return out
}

// MissingNames lists the missing names.
func (r Result) MissingNames() []string {
	out := make([]string, len(r.Missing))
	for i, m := range r.Missing {
		out[i] = m.Name
	}
	return out
}

// object is one library to visit: its path and the DT_RPATH directories
// inherited from the objects that loaded it.
type object struct {
	path  string
	rpath []string
}

// Resolve reads the library at path and every library it needs,
// recursively, and reports what resolves where and what is missing. The
// error is for path itself (missing, not ELF); dependencies that exist but
// cannot be read are reported as missing.
func (s Search) Resolve(path string) (Result, error) {
	f, err := elf.Open(path)
	if err != nil {
		return Result{}, fmt.Errorf("read %s: %w", path, err)
	}
	class, machine := f.Class, f.Machine
	f.Close()
	res := Result{Found: map[string]string{}, deps: map[string][]string{}, root: path}
	missing := map[string]bool{}
	seen := map[string]bool{path: true}
	queue := []object{{path: path}}
	for len(queue) > 0 {
		o := queue[0]
		queue = queue[1:]
		needed, rpath, runpath, err := dynamic(o.path)
		if err != nil {
			continue
		}
		origin := filepath.Dir(o.path)
		// DT_RPATH applies to the object and the ones it loads, unless the
		// object has a DT_RUNPATH.
		var inherited []string
		if len(runpath) == 0 {
			inherited = append(expand(rpath, origin), o.rpath...)
		}
		for _, name := range needed {
			if p, ok := res.Found[name]; ok {
				res.deps[o.path] = append(res.deps[o.path], p)
				continue
			}
			if missing[name] {
				continue
			}
			p, ok := s.find(name, inherited, expand(runpath, origin), class, machine)
			if !ok {
				missing[name] = true
				res.Missing = append(res.Missing, Missing{Name: name, NeededBy: o.path})
				continue
			}
			res.Found[name] = p
			res.deps[o.path] = append(res.deps[o.path], p)
			if !seen[p] {
				seen[p] = true
				queue = append(queue, object{path: p, rpath: inherited})
			}
		}
	}
	return res, nil
}

// Find resolves one name as a library without RPATH/RUNPATH would (e.g.
// one ONNX Runtime dlopens by name, such as libcudnn.so.9).
func (s Search) Find(name string) (string, bool) {
	return s.find(name, nil, nil, elf.ELFCLASS64, hostMachine())
}

func hostMachine() elf.Machine {
	switch runtime.GOARCH {
	case "arm64":
		return elf.EM_AARCH64
	case "386":
		return elf.EM_386
	case "arm":
		return elf.EM_ARM
	}
	return elf.EM_X86_64
}

// find resolves a needed name in the loader's order.
func (s Search) find(name string, rpath, runpath []string, class elf.Class, machine elf.Machine) (string, bool) {
	if strings.Contains(name, "/") {
		return name, fits(name, class, machine)
	}
	for _, dirs := range [][]string{s.Preloaded, rpath, s.LibraryPath, runpath} {
		for _, d := range dirs {
			if p := filepath.Join(d, name); fits(p, class, machine) {
				return p, true
			}
		}
	}
	if p, ok := s.Cache[name]; ok && fits(p, class, machine) {
		return p, true
	}
	for _, d := range s.Defaults {
		if p := filepath.Join(d, name); fits(p, class, machine) {
			return p, true
		}
	}
	return "", false
}

// fits reports whether path is an ELF file the loader would take for an
// object of this class and machine (it skips others and searches on).
func fits(path string, class elf.Class, machine elf.Machine) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Class == class && f.Machine == machine
}

// dynamic reads an ELF file's DT_NEEDED, DT_RPATH and DT_RUNPATH entries.
func dynamic(path string) (needed, rpath, runpath []string, err error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	if needed, err = f.DynString(elf.DT_NEEDED); err != nil {
		return nil, nil, nil, err
	}
	rp, _ := f.DynString(elf.DT_RPATH)
	rn, _ := f.DynString(elf.DT_RUNPATH)
	for _, v := range rp {
		rpath = append(rpath, SplitPath(v)...)
	}
	for _, v := range rn {
		runpath = append(runpath, SplitPath(v)...)
	}
	return needed, rpath, runpath, nil
}

// expand replaces $ORIGIN and ${ORIGIN} with the object's directory.
func expand(dirs []string, origin string) []string {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		d = strings.ReplaceAll(d, "${ORIGIN}", origin)
		d = strings.ReplaceAll(d, "$ORIGIN", origin)
		out = append(out, d)
	}
	return out
}

// ErrNotCache is returned by ReadCache for a file that is not an
// ld.so.cache in the format glibc has written since 2.32.
var ErrNotCache = errors.New("not a glibc ld.so.cache (glibc-ld.so.cache1.1)")
