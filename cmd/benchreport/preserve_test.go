package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPreserveSections(t *testing.T) {
	soak := "<!-- soak:begin -->\n## Soak\n\nall good\n<!-- soak:end -->\n"
	other := "<!-- gpu-2:begin -->\nGPU rows\n<!-- gpu-2:end -->"
	tests := []struct {
		name, old, fresh, want string
	}{
		{"no old file", "", "# Benchmarks\n", "# Benchmarks\n"},
		{"nothing to keep", "# Old\n", "# Benchmarks\n", "# Benchmarks\n"},
		{"appended", "# Old\n\n" + soak, "# Benchmarks\n", "# Benchmarks\n\n" + soak},
		{"appended after a blank line", "# Old\n" + soak, "# Benchmarks\n\n", "# Benchmarks\n\n" + soak},
		{"two, in order, the last without newline", soak + "text\n" + other, "# B", "# B\n\n" + soak + "\n" + other + "\n"},
		{"replaced in place", soak, "# B\n<!-- soak:begin -->\nstale\n<!-- soak:end -->\n## After\n", "# B\n" + soak + "## After\n"},
		{"mismatched markers are not a section", "<!-- a:begin -->x<!-- b:end -->\n", "# B\n", "# B\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(preserveSections([]byte(tt.old), []byte(tt.fresh))); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestRunKeepsSections: rewriting BENCHMARKS.md keeps a section another tool
// wrote there.
func TestRunKeepsSections(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "BENCHMARKS.md")
	section := "<!-- soak:begin -->\n## Soak\n\nzero 5xx\n<!-- soak:end -->\n"
	if err := os.WriteFile(out, []byte("# Benchmarks\n\nold text\n\n"+section), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-dir", filepath.Join(dir, "none"), "-out", out}, nil); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(md), "\n\n"+section) || strings.Contains(string(md), "old text") {
		t.Errorf("BENCHMARKS.md:\n%s", md)
	}
}
