package onnxrt

import (
	"fmt"
	"os"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// Env is the loaded ONNX Runtime environment. There is one per process.
type Env struct {
	libraryPath string
	source      string
	once        sync.Once
	closeErr    error
	memoryLimit int64
}

// Load finds the shared library along s and initialises the environment.
// ONNX Runtime's own log goes to stderr: fatal messages only, or warnings
// and worse when verbose (svc reports errors itself).
func Load(s Search, verbose bool) (*Env, error) {
	disableTelemetry()
	// Best effort: a C library that refuses leaves malloc as it was.
	_ = fixMallocThreshold()
	level := ort.WithLogLevelFatal()
	if verbose {
		level = ort.WithLogLevelWarning()
	}
	var tried []string
	for _, c := range s.Candidates() {
		if !c.System {
			if _, err := os.Stat(c.Path); err != nil {
				tried = append(tried, fmt.Sprintf("%s (%s: not found)", c.Path, c.Source))
				continue
			}
		}
		if err := checkAPI(c.Path); err != nil {
			tried = append(tried, fmt.Sprintf("%s (%s: %v)", c.Path, c.Source, err))
			continue
		}
		ort.SetSharedLibraryPath(c.Path)
		if err := ort.InitializeEnvironment(level); err != nil {
			if c.System {
				tried = append(tried, fmt.Sprintf("%s (%s: not found)", c.Path, c.Source))
			} else {
				tried = append(tried, fmt.Sprintf("%s (%s: %v)", c.Path, c.Source, err))
			}
			continue
		}
		_ = ort.DisableTelemetry()
		bindStrings(c.Path)
		return &Env{libraryPath: c.Path, source: c.Source}, nil
	}
	return nil, notFound(s, tried)
}

// TelemetryEnv is the variable ONNX Runtime reads when it creates its
// environment. Unless it is set, its Linux build then runs a shell command
// (blkid; hostname) and writes /tmp/mat-debug-PID.log and a database under
// ~/.cache: a server must not, and a host without /bin/sh (a FROM scratch
// image) crashes on it. svc sets it to 1 unless the user set it.
const TelemetryEnv = "ORT_DISABLE_TELEMETRY"

// disableTelemetry sets TelemetryEnv before the library is loaded; with
// cgo, os.Setenv reaches the C environment the library reads.
func disableTelemetry() {
	if _, set := os.LookupEnv(TelemetryEnv); !set {
		_ = os.Setenv(TelemetryEnv, "1")
	}
}

// LibraryPath is the path or name the library was loaded from.
func (e *Env) LibraryPath() string { return e.libraryPath }

// Source says which search step found the library.
func (e *Env) Source() string { return e.source }

// Version is the ONNX Runtime version string of the loaded library.
func (e *Env) Version() string { return ort.GetVersion() }

// Close destroys the environment; later calls are no-ops.
func (e *Env) Close() error {
	e.once.Do(func() {
		if err := ort.DestroyEnvironment(); err != nil {
			e.closeErr = fmt.Errorf("destroy ONNX Runtime environment: %w", err)
		}
	})
	return e.closeErr
}

// AvailableProviders is ONNX Runtime's own list of execution providers the
// loaded library offers (names ending in ExecutionProvider).
func (e *Env) AvailableProviders() ([]string, error) {
	return availableProviders(e.libraryPath)
}
