//go:build unix

package watch

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
)

// patience bounds a wait for the watch: it only turns a hang into a
// failure.
const patience = time.Minute

// TestWatchRefusedFile: a FIFO, or a link to /dev/zero, renamed over the
// model is not read by the watch (which would block on the FIFO, and read
// /dev/zero without end): it reloads, and the load refuses it where
// reloads report their failures.
func TestWatchRefusedFile(t *testing.T) {
	tests := []struct {
		name string
		make func(path string) error
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"link to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "model.onnx")
			rename(t, testModel(t, "reload_v1.onnx"), file)
			reloads, skipped := watching(t, Options{Path: file, File: file, MaxSize: 1 << 20})
			if err := tt.make(file + ".tmp"); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(file+".tmp", file); err != nil {
				t.Fatal(err)
			}
			select {
			case <-reloads:
			case err := <-skipped:
				t.Fatalf("skipped with %v", err)
			case <-time.After(patience):
				// A watch blocked opening the FIFO gets a writer, and
				// then the end of the file, so that the test ends.
				if w, err := os.OpenFile(file, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					_ = w.Close()
				}
				t.Fatalf("no reload after %v", patience)
			}
			var mf *core.ModelFileError
			if err := check(file, 1<<20); !errors.As(err, &mf) {
				t.Fatalf("check = %v, want a *core.ModelFileError", err)
			}
		})
	}
}
