package main_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestProfilesWrittenAtStop serves with SVC_CPUPROFILE and SVC_MEMPROFILE
// and checks that both profiles are written when the server stops: gzipped
// pprof protocol buffers of the right kind, the allocation profile holding
// the request's large body buffer by its allocation site.
func TestProfilesWrittenAtStop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	s := startServerEnv(t, []string{"SVC_CPUPROFILE=" + cpu, "SVC_MEMPROFILE=" + mem}, model("classifier.onnx"))
	// 8 MiB of body. Go samples an allocation of n bytes with probability
	// 1 - exp(-n/512 KiB): a 1 MiB buffer is missed one run in seven, a
	// buffer over 8 MiB about once in ten million.
	body := `{"input": [[5.1, 3.5, 1.4, 0.2]]` + strings.Repeat(" ", 8<<20) + `}`
	if r := s.predict(body); r.Status != 200 {
		t.Fatalf("predict: %d %s", r.Status, r.Body)
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit code %d\nstderr:\n%s", code, s.stderr)
	}
	tests := []struct {
		path string
		want []string // strings of the profile's string table
	}{
		{cpu, []string{"samples", "cpu", "nanoseconds"}},
		{mem, []string{"alloc_space", "inuse_space", "transport.ReadBody"}},
	}
	for _, tt := range tests {
		f, err := os.Open(tt.path)
		if err != nil {
			t.Fatalf("profile not written: %v", err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: not gzipped: %v", tt.path, err)
		}
		raw, err := io.ReadAll(zr)
		_ = f.Close()
		if err != nil {
			t.Fatalf("%s: %v", tt.path, err)
		}
		for _, w := range tt.want {
			if !bytes.Contains(raw, []byte(w)) {
				t.Errorf("%s: no %q in the profile", filepath.Base(tt.path), w)
			}
		}
	}
}

// TestProfileFileNotWritable: a profile path that cannot be created stops
// the server before it serves, with an error naming the variable.
func TestProfileFileNotWritable(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "no such dir")
	for _, name := range []string{"SVC_CPUPROFILE", "SVC_MEMPROFILE"} {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runSvc(t, []string{name + "=" + filepath.Join(missing, "x.prof")},
				"serve", model("classifier.onnx"), "--host", "127.0.0.1", "--port", "0")
			if code == 0 || !strings.Contains(stderr, name+": open ") || !strings.Contains(stderr, "no such file or directory") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s\nwant a failure naming %s", code, stdout, stderr, name)
			}
			if strings.Contains(stdout, "URL") {
				t.Fatalf("served before failing:\n%s", stdout)
			}
		})
	}
}

// TestProfilesPerWorker: with serve.workers, each worker writes its own
// profiles (cpu.workerN.prof), not all to the one path they inherit.
func TestProfilesPerWorker(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServerEnv(t, []string{"SVC_CPUPROFILE=" + filepath.Join(dir, "cpu.prof"), "SVC_MEMPROFILE=" + filepath.Join(dir, "mem")},
		model("classifier.onnx"), "--workers", "2")
	if r := s.predict(`{"input": [[5.1, 3.5, 1.4, 0.2]]}`); r.Status != 200 {
		t.Fatalf("predict: %d %s", r.Status, r.Body)
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit code %d\nstderr:\n%s", code, s.stderr)
	}
	for _, name := range []string{"cpu.worker1.prof", "cpu.worker2.prof", "mem.worker1", "mem.worker2"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Size() == 0 {
			entries, _ := os.ReadDir(dir)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("%s: %v (size %d); the directory holds %v", name, err, size(fi), names)
		}
	}
}

func size(fi os.FileInfo) int64 {
	if fi == nil {
		return -1
	}
	return fi.Size()
}
