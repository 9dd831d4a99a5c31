package mdsection

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sections are the generated sections of BENCHMARKS.md, by the programs
// that write them: make bench (bench), make soak (soak), make
// tokenizer-bench (text), build/bench-tracing.sh (bench-tracing),
// build/bench-reload.sh (reload), build/bench-sequences.sh (sequences),
// cmd/internal/detbench (detect), make textapi-bench (textapi),
// build/bench-cache.sh (bench-cache), build/bench-affinity.sh
// (bench-affinity), build/bench-logger.sh (bench-logger), make ocr-bench
// (ocr).
var sections = []string{"bench", "soak", "text", "bench-tracing", "reload", "sequences", "detect", "textapi", "bench-cache", "bench-affinity", "bench-logger", "ocr"}

// TestBenchmarksFile: BENCHMARKS.md holds each generated section once,
// its markers on lines of their own, begin before end, and no marker
// anywhere else: a marker quoted in the hand-written text was once taken
// for the real one, and a section written into the middle of a sentence.
func TestBenchmarksFile(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	for _, name := range sections {
		begin, end := markers(name)
		b, e := string(begin), string(end)
		if n := strings.Count(text, strings.TrimSuffix(b, "\n")); n != 1 {
			t.Errorf("section %s: its begin marker is in BENCHMARKS.md %d times, want once", name, n)
		}
		if n := strings.Count(text, strings.TrimSuffix(e, "\n")); n != 1 {
			t.Errorf("section %s: its end marker is in BENCHMARKS.md %d times, want once", name, n)
		}
		i, j := lineIndex(doc, begin), lineIndex(doc, end)
		if i < 0 || j < 0 || j < i {
			t.Errorf("section %s: markers at %d and %d, want both on lines of their own, begin first", name, i, j)
		}
	}
	if n, want := strings.Count(text, "<!--"), 2*len(sections); n != want {
		t.Errorf("BENCHMARKS.md holds %d HTML comments, want %d: the markers and nothing else", n, want)
	}
}
