package onnxrttest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/onnxrt"
)

func TestMain(m *testing.M) { Main(m) }

// touch creates the files in dir.
func touch(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFind(t *testing.T) {
	names := onnxrt.LibraryFileNames()
	tests := []struct {
		name     string
		files    []string // in $ONNXRUNTIME_TEST_LIB
		relative bool     // $ONNXRUNTIME_TEST_LIB relative to the working directory
		want     string   // file name; "" = not found
	}{
		{name: "every name", files: names, want: names[0]},
		{name: "relative directory", files: names, relative: true, want: names[0]},
		{name: "the last name only", files: names[len(names)-1:], want: names[len(names)-1]},
		{name: "another file", files: []string{"libother.so"}},
		{name: "empty directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			touch(t, dir, tt.files...)
			t.Setenv(EnvVar, dir)
			if tt.relative {
				t.Chdir(filepath.Dir(dir))
				t.Setenv(EnvVar, filepath.Base(dir))
			}
			got, err := Find()
			if tt.want != "" {
				if err != nil || got != filepath.Join(dir, tt.want) {
					t.Fatalf("Find() = %q, %v; want %s", got, err, filepath.Join(dir, tt.want))
				}
				return
			}
			if err == nil {
				t.Fatalf("Find() = %q, want an error", got)
			}
			if !errors.Is(err, onnxrt.ErrLibraryNotFound) {
				t.Errorf("error %v does not wrap onnxrt.ErrLibraryNotFound", err)
			}
			for _, want := range []string{dir, "$" + EnvVar, "make lib", names[0]} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// Unset, the variable falls back to build/lib/<os>-<arch> of the module the
// test runs in, from any of its directories.
func TestFindInModule(t *testing.T) {
	platform := runtime.GOOS + "-" + runtime.GOARCH
	tests := []struct {
		name  string
		files []string // created under a temporary directory
		wd    string   // the working directory, under it
		want  string   // the library found, under it; "" = an error
		err   []string // what the error says
	}{
		{
			name:  "from a package directory",
			files: []string{"go.mod", "build/lib/" + platform + "/" + onnxrt.LibraryFileNames()[0]},
			wd:    "core/onnxrt", want: "build/lib/" + platform + "/" + onnxrt.LibraryFileNames()[0],
		},
		{
			name:  "at the module root",
			files: []string{"go.mod", "build/lib/" + platform + "/" + onnxrt.LibraryFileNames()[0]},
			wd:    ".", want: "build/lib/" + platform + "/" + onnxrt.LibraryFileNames()[0],
		},
		{
			name:  "no make lib yet",
			files: []string{"go.mod", "core/x.go"},
			wd:    "core", err: []string{"build/lib/" + platform, "$" + EnvVar + " unset", "make lib"},
		},
		{
			name:  "outside a module",
			files: []string{"core/x.go"},
			wd:    "core", err: []string{"$" + EnvVar + " is unset", "no go.mod"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range tt.files {
				p := filepath.Join(root, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				touch(t, filepath.Dir(p), filepath.Base(p))
			}
			if err := os.MkdirAll(filepath.Join(root, tt.wd), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Chdir(filepath.Join(root, tt.wd))
			t.Setenv(EnvVar, "")
			got, err := Find()
			if tt.want != "" {
				if want := filepath.Join(root, filepath.FromSlash(tt.want)); err != nil || got != want {
					t.Fatalf("Find() = %q, %v; want %s", got, err, want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Find() = %q, want an error", got)
			}
			for _, want := range tt.err {
				if !strings.Contains(err.Error(), filepath.FromSlash(want)) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

func TestLibraryPathFailsTheTest(t *testing.T) {
	t.Setenv(EnvVar, t.TempDir())
	ft := &fakeTB{TB: t}
	func() {
		defer func() { _ = recover() }()
		LibraryPath(ft)
	}()
	if !ft.failed || !strings.Contains(ft.msg, "make lib") {
		t.Fatalf("LibraryPath without a library: failed %v, message %q", ft.failed, ft.msg)
	}
}

// fakeTB records Fatal and stops the caller as testing's Fatal does (by
// panicking here instead of runtime.Goexit).
type fakeTB struct {
	testing.TB
	failed bool
	msg    string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatal(args ...any) {
	f.failed, f.msg = true, fmt.Sprint(args...)
	panic("Fatal")
}

// TestMain above loaded the library: Load returns that environment, every
// time, and it runs ONNX Runtime.
func TestLoad(t *testing.T) {
	env := Load(t)
	if again := Load(t); again != env {
		t.Fatal("a second Load returned another environment")
	}
	if env.LibraryPath() != LibraryPath(t) {
		t.Errorf("loaded %s, LibraryPath says %s", env.LibraryPath(), LibraryPath(t))
	}
	if v := env.Version(); !strings.HasPrefix(v, "1.") {
		t.Errorf("ONNX Runtime version %q", v)
	}
	avail, err := env.AvailableProviders()
	if err != nil || !strings.Contains(strings.Join(avail, ","), "CPUExecutionProvider") {
		t.Errorf("available providers %v, %v", avail, err)
	}
}

type fakeM struct{ code, runs int }

func (m *fakeM) Run() int { m.runs++; return m.code }

type fakeEnv struct {
	err    error
	closed int
}

func (e *fakeEnv) Close() error { e.closed++; return e.err }

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		loadErr  error
		closeErr error
		code     int // of the tests
		want     int
		runs     int
		stderr   string
	}{
		{name: "tests pass", want: 0, runs: 1},
		{name: "tests fail", code: 1, want: 1, runs: 1},
		{name: "library missing", loadErr: errors.New("no library here; run 'make lib'"), want: 1, runs: 0, stderr: "no library here; run 'make lib'\n"},
		{name: "close fails", closeErr: errors.New("destroy failed"), want: 1, runs: 1, stderr: "after the tests: destroy failed\n"},
		{name: "tests and close fail", code: 2, closeErr: errors.New("destroy failed"), want: 2, runs: 1, stderr: "after the tests: destroy failed\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeM{code: tt.code}
			env := &fakeEnv{err: tt.closeErr}
			var stderr bytes.Buffer
			got := run(m, func() (io.Closer, error) {
				if tt.loadErr != nil {
					return nil, tt.loadErr
				}
				return env, nil
			}, &stderr)
			if got != tt.want || m.runs != tt.runs || stderr.String() != tt.stderr {
				t.Fatalf("run = %d after %d runs, stderr %q; want %d, %d runs, %q", got, m.runs, stderr.String(), tt.want, tt.runs, tt.stderr)
			}
			if wantClosed := tt.runs; env.closed != wantClosed {
				t.Errorf("closed %d times, want %d", env.closed, wantClosed)
			}
		})
	}
}
