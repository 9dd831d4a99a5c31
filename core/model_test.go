//go:build unix

package core_test

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
)

// patience bounds a wait for a call that must return at once: it only
// turns a hang into a failure.
const patience = time.Minute

// readBounded calls core.ReadModelFile, and fails t if it has not returned
// within patience: a read that blocks on a FIFO is then released by a
// writer that opens and closes it, so that the test ends.
func readBounded(t *testing.T, file string, limit int64) ([]byte, error) {
	t.Helper()
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := core.ReadModelFile(file, limit)
		done <- result{b, err}
	}()
	select {
	case r := <-done:
		return r.b, r.err
	case <-time.After(patience):
		if w, err := os.OpenFile(file, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = w.Close()
		}
		<-done
		t.Fatalf("ReadModelFile(%s) still blocked after %v", file, patience)
		return nil, nil
	}
}

// specialFiles makes, in dir, one of each kind of file that is no regular
// file, by name: a FIFO, a link to /dev/zero, a socket, a directory.
func specialFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{
		"fifo":      filepath.Join(dir, "fifo.onnx"),
		"dev zero":  filepath.Join(dir, "zero.onnx"),
		"socket":    filepath.Join(dir, "sock.onnx"),
		"directory": filepath.Join(dir, "dir.onnx"),
	}
	if err := syscall.Mkfifo(files["fifo"], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", files["dev zero"]); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", files["socket"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	if err := os.Mkdir(files["directory"], 0o755); err != nil {
		t.Fatal(err)
	}
	return files
}

// TestReadModelFile: a regular file, and a link to one, are read whole; a
// FIFO, a link to /dev/zero, a socket and a directory are refused by name,
// at once, as a *core.ModelFileError; so is a file over the limit, naming
// its size and runtime.max_model_size.
func TestReadModelFile(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("onnx"), 1000)
	regular := filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(regular, data, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.onnx")
	if err := os.Symlink("model.onnx", link); err != nil {
		t.Fatal(err)
	}
	special := specialFiles(t, dir)
	// A sparse file: its size takes no room on the disk.
	huge := filepath.Join(dir, "huge.onnx")
	if err := os.WriteFile(huge, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, 3<<30); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		file  string
		limit int64
		want  []string // in the refusal; none: read
	}{
		{"regular", regular, 4000, nil},
		{"no limit", regular, 0, nil},
		{"link to a regular file", link, 4000, nil},
		{"fifo", special["fifo"], 4000, []string{`"` + special["fifo"] + `"`, "is a named pipe (FIFO), not a regular file"}},
		{"link to /dev/zero", special["dev zero"], 4000, []string{`"` + special["dev zero"] + `" (a link to "/dev/zero")`, "is a character device"}},
		{"socket", special["socket"], 4000, []string{"is a socket"}},
		{"directory", special["directory"], 4000, []string{"is a directory"}},
		{"over the limit", regular, 3999, []string{`model file "` + regular + `" is 3.9 KiB (4000 bytes), more than runtime.max_model_size = 3.9 KiB (3999 bytes)`, "raise runtime.max_model_size"}},
		{"over 2 GiB", huge, 64 << 30, []string{`model file "` + huge + `" is 3.0 GiB: an ONNX model file holds at most 2 GiB`, "external data files"}},
		{"over 2 GiB, no limit", huge, 0, []string{"is 3.0 GiB: an ONNX model file holds at most 2 GiB"}},
		{"link over the limit", link, 1024, []string{"(a link to", "is 3.9 KiB (4000 bytes), more than runtime.max_model_size = 1.0 KiB:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := readBounded(t, tt.file, tt.limit)
			if tt.want == nil {
				if err != nil || !bytes.Equal(b, data) {
					t.Fatalf("read %d bytes, %v; want the %d bytes of the file", len(b), err, len(data))
				}
				return
			}
			var mf *core.ModelFileError
			if !errors.As(err, &mf) || mf.File != tt.file {
				t.Fatalf("error %v (%T), want a *core.ModelFileError for %s", err, err, tt.file)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal %q lacks %q", err, w)
				}
			}
		})
	}
	if _, err := core.ReadModelFile(filepath.Join(dir, "missing.onnx"), 0); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestCheckExternalData: external data files are checked as the model file
// is, before anything opens them: regular files inside the model's
// directory, the model file and all of them together within the limit.
func TestCheckExternalData(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "model.onnx")
	for name, size := range map[string]int{"a.bin": 1000, "b.bin": 3000} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	special := specialFiles(t, dir)
	base := func(name string) string { return filepath.Base(special[name]) }
	tests := []struct {
		name      string
		locations []string
		limit     int64
		want      string // in the refusal ("": none)
	}{
		{"within the limit", []string{"a.bin", "b.bin", "a.bin"}, 4100, ""},
		{"no limit", []string{"a.bin", "b.bin"}, 0, ""},
		{"over the limit", []string{"a.bin", "b.bin"}, 4099, `external data file "` + filepath.Join(dir, "b.bin") + `" is 2.9 KiB (3000 bytes), which brings model "` + model + `" with its external data to 4.0 KiB (4100 bytes), more than runtime.max_model_size = 4.0 KiB (4099 bytes)`},
		{"fifo", []string{"a.bin", base("fifo")}, 0, "is a named pipe (FIFO), not a regular file"},
		{"link to /dev/zero", []string{base("dev zero")}, 0, `(a link to "/dev/zero") is a character device`},
		{"socket", []string{base("socket")}, 0, "is a socket"},
		{"directory", []string{base("directory")}, 0, "is a directory"},
		{"outside the directory", []string{"../a.bin"}, 0, `names external data "../a.bin" outside its directory`},
		{"absolute", []string{"/dev/zero"}, 0, `names external data "/dev/zero" outside its directory`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sizes, err := core.CheckExternalData(model, 100, tt.locations, tt.limit)
			if tt.want == "" {
				if err != nil || len(sizes) != 2 || sizes["a.bin"] != 1000 || sizes["b.bin"] != 3000 {
					t.Fatalf("sizes %v, %v", sizes, err)
				}
				return
			}
			var mf *core.ModelFileError
			if !errors.As(err, &mf) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want a *core.ModelFileError with %q", err, tt.want)
			}
		})
	}
}
