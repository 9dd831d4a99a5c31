//go:build linux && amd64

// make lib-old fetches ONNX Runtime 1.24.1 for linux/amd64 only.

package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// oldORT returns ONNX Runtime 1.24.1's library, which 'make lib-old'
// fetches: svc accepts it as runtime.library.
func oldORT(t *testing.T) string {
	t.Helper()
	skipShort(t, "needs ONNX Runtime 1.24.1 (make lib-old)")
	p := filepath.Join(repoRoot, "build", "ort-old", "linux-amd64", "libonnxruntime.so.1")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("ONNX Runtime 1.24.1 missing at %s: run 'make lib-old' (make test does it)", p)
	}
	return p
}

// TestWarmUpDividesByNoZero serves int_mod.onnx (integer Div and Mod of its
// two inputs) with ONNX Runtime 1.24.1, which raises SIGFPE on an integer
// division by zero: the warm-up must not feed it one, and the answers must
// be right.
func TestWarmUpDividesByNoZero(t *testing.T) {
	t.Parallel()
	lib := oldORT(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "svc.yml")
	if err := os.WriteFile(cfg, []byte("runtime:\n  library: "+lib+"\n  warmup: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// runtime.library, not the test library of $ONNXRUNTIME_LIB (which
	// would win).
	code, stdout, stderr := runSvc(t, []string{"ONNXRUNTIME_LIB="}, "version", "--config", cfg)
	if code != 0 || !strings.Contains(stdout, "onnxruntime 1.24.1 ") {
		t.Fatalf("svc version with runtime.library: exit %d\n%s%s", code, stdout, stderr)
	}
	s := startServerEnv(t, []string{"ONNXRUNTIME_LIB="}, model("int_mod.onnx"), "--config", cfg)
	if recs := s.logRecords("model ready"); len(recs) != 1 {
		t.Fatalf("model ready records %v", recs)
	}
	tests := []struct {
		name, body, want string
	}{
		{"signs", `{"a": [7, -7, 7, -7], "b": [2, 2, -2, -2]}`, `{"quotient":[3,-3,-3,3],"remainder":[1,1,-1,-1]}`},
		{"large", `{"a": [9223372036854775807], "b": [10]}`, `{"quotient":[922337203685477580],"remainder":[7]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.predict(tt.body)
			if r.Status != 200 || !strings.Contains(string(r.Body), tt.want) {
				t.Errorf("predict %s: %d %s, want %s", tt.body, r.Status, r.Body, tt.want)
			}
		})
	}
	s.stopNoPanic()
}
