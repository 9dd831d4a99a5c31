package main_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestAccessLogModes serves with each access-log mode, from the flag or the
// configuration file, sends a 200, a 400 and a 404, stops the server (which
// writes out every buffered line) and reads which request lines it wrote.
func TestAccessLogModes(t *testing.T) {
	t.Parallel()
	writeCfg := func(t *testing.T, mode string) string {
		p := filepath.Join(t.TempDir(), "svc.yml")
		if err := os.WriteFile(p, []byte("serve:\n  access_log: "+mode+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		args func(t *testing.T) []string
		want []string // "path status" of the request lines
	}{
		{"default", func(*testing.T) []string { return nil },
			[]string{"/health 200", "/predict 400", "/nope 404"}},
		{"flag off", func(*testing.T) []string { return []string{"--access-log", "off"} },
			nil},
		{"flag errors", func(*testing.T) []string { return []string{"--access-log", "errors"} },
			[]string{"/predict 400", "/nope 404"}},
		{"flag sampled, every success", func(*testing.T) []string { return []string{"--access-log", "sampled:1"} },
			[]string{"/health 200", "/predict 400", "/nope 404"}},
		{"file errors", func(t *testing.T) []string { return []string{"-c", writeCfg(t, "errors")} },
			[]string{"/predict 400", "/nope 404"}},
		{"flag over file", func(t *testing.T) []string { return []string{"-c", writeCfg(t, "off"), "--access-log", "all"} },
			[]string{"/health 200", "/predict 400", "/nope 404"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, append([]string{model("classifier.onnx")}, tt.args(t)...)...)
			if r := s.get("/health"); r.Status != http.StatusOK {
				t.Fatalf("/health: %d", r.Status)
			}
			if r := s.predict(`{"input": [[1, 2, 3]]}`); r.Status != http.StatusBadRequest {
				t.Fatalf("/predict with a short row: %d %s", r.Status, r.Body)
			}
			if r := s.get("/nope"); r.Status != http.StatusNotFound {
				t.Fatalf("/nope: %d", r.Status)
			}
			if code := s.stop(syscall.SIGTERM); code != 0 {
				t.Fatalf("exit code %d\n%s", code, s.stderr)
			}
			var got []string
			for _, rec := range s.accessLogs() {
				status, _ := rec["status"].(float64)
				got = append(got, fmt.Sprintf("%v %d", rec["path"], int(status)))
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("request lines %q, want %q\n%s", got, tt.want, s.stderr)
			}
		})
	}
}

// TestAccessLogBadValue: a bad mode fails start-up with one line, at the
// file's line for the file and as a usage error for the flag.
func TestAccessLogBadValue(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte("name: x\nserve:\n  port: 0\n  access_log: verbose\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runSvc(t, nil, "serve", model("classifier.onnx"), "-c", cfg)
	oneLineError(t, code, stderr, 1, cfg+": line 4: serve.access_log must be one of all, errors, sampled", `"verbose"`)
	code, _, stderr = runSvc(t, nil, "serve", model("classifier.onnx"), "--access-log", "sampled:2")
	oneLineError(t, code, stderr, 2, "--access-log sample rate must be a fraction in (0, 1]", `"2"`)
}
