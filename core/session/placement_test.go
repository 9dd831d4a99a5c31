package session_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/session"
	"github.com/svc-dev/svc/providers/cpu"
)

func TestProfilePlacement(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "ort")
	// Two runs: a node counts once however many kernel events it has;
	// session events and events without a provider do not count.
	profile := `[
{"cat":"Session","name":"model_loading_uri","args":{}},
{"cat":"Node","name":"conv_kernel_time","args":{"provider":"WebGpuExecutionProvider","op_name":"Conv"}},
{"cat":"Node","name":"conv_fence_before","args":{"provider":"WebGpuExecutionProvider"}},
{"cat":"Node","name":"add_kernel_time","args":{"provider":"WebGpuExecutionProvider","op_name":"Add"}},
{"cat":"Node","name":"clip_kernel_time","args":{"provider":"CPUExecutionProvider","op_name":"Clip"}},
{"cat":"Node","name":"conv_kernel_time","args":{"provider":"WebGpuExecutionProvider","op_name":"Conv"}},
{"cat":"Node","name":"odd_kernel_time","args":{}}
]`
	if err := os.WriteFile(prefix+"_2026-11-23_22-00-00.json", []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := session.ProfilePlacement(prefix)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.String(); got != "WebGpuExecutionProvider 2, CPUExecutionProvider 1" {
		t.Errorf("placement %q", got)
	}
	if p.Of("CPUExecutionProvider") != 1 || p.Of("CUDAExecutionProvider") != 0 {
		t.Errorf("Of: %v", p)
	}
	if _, err := session.ProfilePlacement(filepath.Join(dir, "none")); err == nil {
		t.Error("no profile: no error")
	}
	if err := os.WriteFile(filepath.Join(dir, "bad_1.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := session.ProfilePlacement(filepath.Join(dir, "bad")); err == nil {
		t.Error("a broken profile: no error")
	}
}

// On the CPU provider every node runs there: the probe says so without a
// session.
func TestProbePlacementCPU(t *testing.T) {
	p, err := session.ProbePlacement("/nonexistent.onnx", config.Runtime{}, cpu.New(), config.Config{}.ProviderOptions())
	if err != nil || p.String() != "all on CPUExecutionProvider" {
		t.Errorf("ProbePlacement on the CPU = %q, %v", p, err)
	}
}
