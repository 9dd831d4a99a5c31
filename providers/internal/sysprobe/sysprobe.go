// Package sysprobe looks at the real machine for the providers: whether a
// file or device node exists, whether shared libraries load, how many CUDA
// devices the driver sees. Nothing here runs until a provider asks.
package sysprobe

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"

	"github.com/svc-dev/svc/providers/internal/ldpath"
)

// Probe is the real machine.
type Probe struct{}

// Exists reports whether path exists.
func (Probe) Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// cudaResult names the CUresult codes cuInit returns when there is nothing
// to run on; the rest are reported by number.
func cudaResult(code int) string {
	switch code {
	case 3:
		return "CUDA_ERROR_NOT_INITIALIZED"
	case 35:
		return "CUDA_ERROR_INSUFFICIENT_DRIVER (the driver is older than the CUDA runtime)"
	case 100:
		return "CUDA_ERROR_NO_DEVICE"
	case 101:
		return "CUDA_ERROR_INVALID_DEVICE"
	case 304:
		return "CUDA_ERROR_OPERATING_SYSTEM"
	case 999:
		return "CUDA_ERROR_UNKNOWN"
	}
	return "CUresult " + strconv.Itoa(code)
}

// Unresolved is a library the dynamic loader would not find.
type Unresolved struct {
	// Name is the library's name, e.g. "libcublasLt.so.13".
	Name string
	// NeededBy is the path of the first library that needs it ("" for a
	// library asked for by name).
	NeededBy string
}

// Resolution is what resolving libraries the way the loader would found.
type Resolution struct {
	// Missing lists what the loader would not find, each name once.
	Missing []Unresolved
	// Preload lists the files found in the extra directories, each after
	// the files it needs: what must be loaded (RTLD_GLOBAL) before the
	// libraries, since the loader itself does not search there.
	Preload []string
}

// Resolve resolves the DT_NEEDED entries of the libraries at paths,
// recursively, and the bare names (with what they need), the way the
// dynamic loader would, with dirs searched first. On other systems than
// Linux it cannot tell and returns nothing.
func (Probe) Resolve(paths, names, dirs []string) Resolution {
	if runtime.GOOS != "linux" {
		return Resolution{}
	}
	return ResolveWith(ldpath.System(dirs), paths, names)
}

// ResolveWith is Resolve with a given loader search.
func ResolveWith(s ldpath.Search, paths, names []string) Resolution {
	var out Resolution
	seen, queued := map[string]bool{}, map[string]bool{}
	add := func(u Unresolved) {
		if !seen[u.Name] {
			seen[u.Name] = true
			out.Missing = append(out.Missing, u)
		}
	}
	preload := func(res ldpath.Result, self string) {
		for _, f := range append(res.LoadOrder(), self) {
			if f != "" && !queued[f] && within(f, s.Preloaded) {
				queued[f] = true
				out.Preload = append(out.Preload, f)
			}
		}
	}
	for _, p := range paths {
		res, err := s.Resolve(p)
		if err != nil {
			add(Unresolved{Name: filepath.Base(p)})
			continue
		}
		for _, m := range res.Missing {
			add(Unresolved{Name: m.Name, NeededBy: m.NeededBy})
		}
		preload(res, "")
	}
	for _, n := range names {
		f, ok := s.Find(n)
		if !ok {
			add(Unresolved{Name: n})
			continue
		}
		if res, err := s.Resolve(f); err == nil {
			for _, m := range res.Missing {
				add(Unresolved{Name: m.Name, NeededBy: m.NeededBy})
			}
			preload(res, f)
		}
	}
	return out
}

// within reports whether file is directly in one of dirs.
func within(file string, dirs []string) bool {
	d := filepath.Dir(file)
	for _, x := range dirs {
		if filepath.Clean(x) == d {
			return true
		}
	}
	return false
}

// versionRE matches an ONNX Runtime version string: ORT_VERSION, which
// ONNX Runtime compiles into its provider libraries as a NUL-terminated
// string.
var versionRE = regexp.MustCompile(`^1\.[0-9]{1,3}\.[0-9]{1,3}$`)

// Versions lists the distinct strings in the library's read-only data
// (.rodata) that look like an ONNX Runtime version ("1.29.0"), in file
// order. Besides the library's own version there may be others (a bundled
// library's), so a caller checks that the version it wants is among them.
func (Probe) Versions(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	sec := f.Section(".rodata")
	if sec == nil {
		return nil, nil
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var out []string
	seen := map[string]bool{}
	for _, s := range bytes.Split(data, []byte{0}) {
		if len(s) < 5 || len(s) > 9 || s[0] != '1' || !versionRE.Match(s) {
			continue
		}
		if v := string(s); !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out, nil
}
