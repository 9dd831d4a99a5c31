// Package onnxrttest finds and loads the ONNX Runtime library that tests
// run against, for every package whose tests need the real runtime.
//
// The library is the first of onnxrt.LibraryFileNames in the directory
// $ONNXRUNTIME_TEST_LIB (make sets it to build/lib/<os>-<arch>) or, when
// that is unset, in build/lib/<os>-<arch> of the module the test runs in
// ('make lib' puts it there). A missing library fails the tests, saying
// where it was looked for: it never skips them.
package onnxrttest

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/svc-dev/svc/core/onnxrt"
)

// EnvVar names the environment variable with the directory of the test
// library.
const EnvVar = "ONNXRUNTIME_TEST_LIB"

// Find returns the path of the test library, for a TestMain, which has no
// testing.TB to fail (tests call LibraryPath). When the library is not
// there the error wraps onnxrt.ErrLibraryNotFound and says where it looked
// and how to fix it.
func Find() (string, error) {
	if dir := os.Getenv(EnvVar); dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", fmt.Errorf("find the ONNX Runtime test library: $%s: %w", EnvVar, err)
		}
		return findIn(abs, "$"+EnvVar)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the ONNX Runtime test library: %w", err)
	}
	root, err := moduleRoot(wd)
	if err != nil {
		return "", fmt.Errorf("find the ONNX Runtime test library: $%s is unset and %w", EnvVar, err)
	}
	return findIn(filepath.Join(root, "build", "lib", runtime.GOOS+"-"+runtime.GOARCH), "build/lib, $"+EnvVar+" unset")
}

// LibraryPath returns the path of the test library, for a test that hands
// it on (to a child process, or as ONNXRUNTIME_LIB or runtime.library). It
// fails tb when the library is missing.
func LibraryPath(tb testing.TB) string {
	tb.Helper()
	lib, err := Find()
	if err != nil {
		tb.Fatal(err)
	}
	return lib
}

// findIn returns the first library file name present in dir; source says
// where dir came from, for the error.
func findIn(dir, source string) (string, error) {
	names := onnxrt.LibraryFileNames()
	for _, name := range names {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w for the tests: none of %s in %s (%s); run 'make lib' (make test does it) or set %s to the directory that holds it",
		onnxrt.ErrLibraryNotFound, strings.Join(names, ", "), dir, source, EnvVar)
}

// moduleRoot returns the nearest directory at or above dir with a go.mod.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod at or above %s", dir)
		}
	}
}

// loaded is the process's environment, loaded once.
var loaded struct {
	once sync.Once
	env  *onnxrt.Env
	err  error
}

// load loads the test library into this process the first time and returns
// the same environment, or error, afterwards.
func load() (*onnxrt.Env, error) {
	loaded.once.Do(func() {
		lib, err := Find()
		if err != nil {
			loaded.err = err
			return
		}
		if loaded.env, err = onnxrt.Load(onnxrt.Search{EnvValue: lib}, false); err != nil {
			loaded.err = fmt.Errorf("load the ONNX Runtime test library: %w", err)
		}
	})
	return loaded.env, loaded.err
}

// Load initialises ONNX Runtime with the test library for this test process
// and returns the environment. The first call loads it; later calls, from
// any test, return the same environment, which stays loaded until the
// process ends (or Main closes it). It fails tb when the library is missing
// or does not load. A process has one environment: a test that loads ONNX
// Runtime through the code under test (onnxrt.Load) must not also call
// Load or Main; it takes LibraryPath instead.
func Load(tb testing.TB) *onnxrt.Env {
	tb.Helper()
	env, err := load()
	if err != nil {
		tb.Fatal(err)
	}
	return env
}

// Main is the TestMain of a package whose tests run ONNX Runtime: it loads
// the test library as Load does, runs the tests, closes the environment and
// exits with the tests' status. When the library is missing or does not
// load, it says why on stderr and exits with status 1 without running any
// test. Tests that passed fail all the same when goroutines they started
// are still running at the end (goleak).
//
//	func TestMain(m *testing.M) { onnxrttest.Main(m) }
func Main(m *testing.M) {
	os.Exit(run(m, func() (io.Closer, error) {
		env, err := load()
		if err != nil {
			return nil, err
		}
		return env, nil
	}, os.Stderr))
}

// runner is what run needs of testing.M.
type runner interface{ Run() int }

// run loads the environment, runs m and closes the environment; it returns
// the exit status.
func run(m runner, load func() (io.Closer, error), stderr io.Writer) int {
	env, err := load()
	if err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		return 1
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(stderr, "after the tests: %v\n", err)
			code = 1
		}
	}
	if err := env.Close(); err != nil {
		fmt.Fprintf(stderr, "after the tests: %v\n", err)
		return max(code, 1)
	}
	return code
}
