// Package onnxrt owns the process-wide ONNX Runtime environment: it finds the
// shared library, loads it once, and tears it down on shutdown.
package onnxrt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// EnvLibraryVar names the environment variable that points at the library.
const EnvLibraryVar = "ONNXRUNTIME_LIB"

// LibraryFileNames lists the file names of the ONNX Runtime shared library on
// the current OS, most specific first.
func LibraryFileNames() []string {
	switch runtime.GOOS {
	case "windows":
		return []string{"onnxruntime.dll"}
	case "darwin":
		return []string{"libonnxruntime.dylib", "libonnxruntime.1.dylib"}
	default:
		return []string{"libonnxruntime.so", "libonnxruntime.so.1"}
	}
}

// Candidate is one place the library may be loaded from.
type Candidate struct {
	// Source says where the candidate came from, for messages.
	Source string
	// Path is a file path, or a bare library name for the system loader.
	Path string
	// System is true for a bare name resolved by the dynamic loader.
	System bool
}

// Search describes where to look for the library, in order: the environment
// variable, the configuration file, lib/ next to the executable, the system
// loader.
type Search struct {
	EnvValue   string // value of ONNXRUNTIME_LIB
	ConfigPath string // runtime.library from the configuration file
	ExeDir     string // directory of the running executable
}

// DefaultSearch reads the environment and the executable's location.
func DefaultSearch(configPath string) Search {
	s := Search{EnvValue: os.Getenv(EnvLibraryVar), ConfigPath: configPath}
	if exe, err := os.Executable(); err == nil {
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		s.ExeDir = filepath.Dir(exe)
	}
	return s
}

// Candidates lists the places to try, in order. An explicit setting (the
// environment variable or the configuration file) is the only candidate when
// present: a user who names a library means that library.
func (s Search) Candidates() []Candidate {
	if s.EnvValue != "" {
		return []Candidate{{Source: "$" + EnvLibraryVar, Path: s.EnvValue}}
	}
	if s.ConfigPath != "" {
		return []Candidate{{Source: "config runtime.library", Path: s.ConfigPath}}
	}
	var out []Candidate
	if s.ExeDir != "" {
		for _, name := range LibraryFileNames() {
			out = append(out, Candidate{Source: "lib/ next to the executable", Path: filepath.Join(s.ExeDir, "lib", name)})
		}
	}
	for _, name := range LibraryFileNames() {
		out = append(out, Candidate{Source: "system loader", Path: name, System: true})
	}
	return out
}

// ErrLibraryNotFound is wrapped by errors from Load when no candidate loads.
var ErrLibraryNotFound = errors.New("ONNX Runtime library not found")

// notFound builds the one-line error that tells the user what was tried.
func notFound(s Search, tried []string) error {
	hint := "run 'make lib' (it puts the library in build/lib), put it in lib/ next to the svc binary, or set " + EnvLibraryVar + "=/path/to/" + LibraryFileNames()[0]
	if s.EnvValue != "" || s.ConfigPath != "" {
		hint = "fix the path, or unset it to search lib/ next to the executable and the system loader"
	}
	return fmt.Errorf("%w: tried %s; %s", ErrLibraryNotFound, strings.Join(tried, ", "), hint)
}
