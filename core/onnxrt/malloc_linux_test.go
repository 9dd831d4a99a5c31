//go:build linux && cgo

package onnxrt

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMallocMmapThreshold runs a probe in fresh processes (the threshold
// is process-wide and glibc's adjusts itself as blocks come and go): a
// 2 MiB block allocated again right after one was freed is mapped on its
// own once fixMallocThreshold ran, and comes from the heap without it (the
// threshold glibc raised on the first free) or when the environment sets
// MALLOC_MMAP_THRESHOLD_ above it (which fixMallocThreshold leaves alone).
func TestMallocMmapThreshold(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want string
	}{
		{"fixed", []string{"SVC_MALLOC_PROBE=fix"}, "mapped"},
		{"glibc's default", []string{"SVC_MALLOC_PROBE=nofix"}, "heap"},
		{"environment wins", []string{"SVC_MALLOC_PROBE=fix", "MALLOC_MMAP_THRESHOLD_=8388608"}, "heap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestMallocProbe$", "-test.v")
			cmd.Env = append(withoutMallocEnv(os.Environ()), tt.env...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("probe: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "probe: "+tt.want+"\n") {
				t.Fatalf("want %q:\n%s", tt.want, out)
			}
		})
	}
}

// TestMallocProbe is the probe TestMallocMmapThreshold runs; alone it
// does nothing.
func TestMallocProbe(t *testing.T) {
	mode := os.Getenv("SVC_MALLOC_PROBE")
	if mode == "" {
		return
	}
	if mode == "fix" {
		if err := fixMallocThreshold(); err != nil {
			t.Fatal(err)
		}
	}
	mapped, ok := mmappedOnReuse(2 << 20)
	if !ok {
		t.Fatal("the C library cannot tell mapped blocks (glibc ≥ 2.33 can)")
	}
	if mapped {
		os.Stdout.WriteString("probe: mapped\n")
	} else {
		os.Stdout.WriteString("probe: heap\n")
	}
}

func withoutMallocEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "MALLOC_") && !strings.HasPrefix(kv, "SVC_MALLOC_PROBE=") {
			out = append(out, kv)
		}
	}
	return out
}
