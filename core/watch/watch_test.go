package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func testModel(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// watching runs Run over o until the test ends; each reload and each
// skipped change is sent on the channels returned.
// It returns once the watch is in place.
func watching(t *testing.T, o Options) (reloads <-chan struct{}, skipped <-chan error) {
	t.Helper()
	r, s := make(chan struct{}, 16), make(chan error, 16)
	o.Reload = func(context.Context) error { r <- struct{}{}; return nil }
	o.Skipped = func(err error) { s <- err }
	started := make(chan struct{})
	o.Started = func() { close(started) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, o) }()
	select {
	case <-started:
	case err := <-done:
		cancel()
		t.Fatalf("Run: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return r, s
}

// rename writes b beside path and renames it over path.
func rename(t *testing.T, b []byte, path string) {
	t.Helper()
	if err := os.WriteFile(path+".tmp", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

// TestWatchFolder: in a model folder, a change to any file (here a file
// beside the model) reloads once it has settled; the model renamed over
// with bytes that do not parse is skipped, then a good one reloads.
func TestWatchFolder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "model.onnx")
	rename(t, testModel(t, "reload_v1.onnx"), file)
	if err := os.MkdirAll(filepath.Join(dir, "extra"), 0o755); err != nil {
		t.Fatal(err)
	}
	reloads, skipped := watching(t, Options{Path: dir, File: file})

	rename(t, []byte("labels"), filepath.Join(dir, "extra", "labels.txt"))
	<-reloads
	rename(t, []byte("not onnx"), file)
	if err := <-skipped; !errors.Is(err, ErrNotONNX) {
		t.Fatalf("skipped with %v", err)
	}
	rename(t, testModel(t, "reload_v2.onnx"), file)
	<-reloads
}

// TestCheck: whole models parse; a file cut short, an empty one and one
// that is missing do not.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	whole := testModel(t, "reload_v1.onnx")
	tests := []struct {
		name string
		data []byte
		ok   bool
	}{
		{"whole", whole, true},
		{"half", whole[:len(whole)/2], false},
		{"empty", nil, false},
		{"text", []byte("not a model"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.name+".onnx")
			if err := os.WriteFile(p, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := check(p, 0); (err == nil) != tt.ok || err != nil && !errors.Is(err, ErrNotONNX) {
				t.Fatalf("check = %v", err)
			}
		})
	}
	if err := check(filepath.Join(dir, "missing.onnx"), 0); !errors.Is(err, ErrNotONNX) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestWatchFolderRecreated: a model folder deleted (its model goes
// missing: skipped) and then made again, renamed into place whole, reloads:
// the watch does not go blind with the directory it watched.
func TestWatchFolderRecreated(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "model")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "model.onnx")
	rename(t, testModel(t, "reload_v1.onnx"), file)
	reloads, skipped := watching(t, Options{Path: dir, File: file})

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := <-skipped; !errors.Is(err, ErrNotONNX) {
		t.Fatalf("skipped with %v", err)
	}
	next := filepath.Join(parent, "next")
	if err := os.Mkdir(next, 0o755); err != nil {
		t.Fatal(err)
	}
	rename(t, testModel(t, "reload_v2.onnx"), filepath.Join(next, "model.onnx"))
	if err := os.Rename(next, dir); err != nil {
		t.Fatal(err)
	}
	<-reloads
	// The new folder is watched: a change in it reloads again.
	rename(t, testModel(t, "reload_v1.onnx"), file)
	<-reloads
}
