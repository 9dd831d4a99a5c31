package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	committedModels = "../../testdata/models"
	committedDemo   = "../../examples/demo/model.onnx"
	regenerate      = "run `go run ./cmd/genmodels` from the repository root and commit the result"
)

// TestCommittedModelsUpToDate regenerates every model and compares it byte
// for byte with the committed files.
func TestCommittedModelsUpToDate(t *testing.T) {
	tmp := t.TempDir()
	outDir := filepath.Join(tmp, "models")
	demo := filepath.Join(tmp, "demo", "model.onnx")
	if err := generate(outDir, demo); err != nil {
		t.Fatal(err)
	}

	generated := map[string]bool{}
	err := filepath.WalkDir(outDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(outDir, path)
		if err != nil {
			return err
		}
		generated[filepath.ToSlash(rel)] = true
		compareFiles(t, path, filepath.Join(committedModels, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	compareFiles(t, demo, committedDemo)

	// No stale model files may linger next to the generated ones.
	err = filepath.WalkDir(committedModels, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !strings.HasSuffix(path, ".onnx") && !strings.HasSuffix(path, ".data") {
			return nil // README.md and the like are written by hand
		}
		rel, err := filepath.Rel(committedModels, path)
		if err != nil {
			return err
		}
		if !generated[filepath.ToSlash(rel)] {
			t.Errorf("%s is not produced by genmodels: delete it, or %s", path, regenerate)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func compareFiles(t *testing.T, generated, committed string) {
	t.Helper()
	want, err := os.ReadFile(generated)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(committed)
	if err != nil {
		t.Errorf("%s: %v; %s", committed, err, regenerate)
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date (%d bytes, generator makes %d); %s", committed, len(got), len(want), regenerate)
	}
}

// TestDeterministic builds everything twice and expects identical bytes.
func TestDeterministic(t *testing.T) {
	a, err := testModels()
	if err != nil {
		t.Fatal(err)
	}
	b, err := testModels()
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(b) {
		t.Fatal("different number of files")
	}
	for i := range a {
		if a[i].path != b[i].path || !bytes.Equal(a[i].data, b[i].data) {
			t.Errorf("%s differs between two runs", a[i].path)
		}
	}
}

// TestClassifierWeights checks in plain Go that the hand-picked weights
// classify the three documented examples as intended.
func TestClassifierWeights(t *testing.T) {
	examples := []struct {
		x     [4]float32
		label int
	}{
		{[4]float32{5.1, 3.5, 1.4, 0.2}, 0},
		{[4]float32{5.9, 3.0, 4.2, 1.5}, 1},
		{[4]float32{6.7, 3.0, 5.2, 2.3}, 2},
	}
	for _, ex := range examples {
		best, bestScore := -1, float32(0)
		for c := range 3 {
			s := classifierB[c]
			for i := range 4 {
				s += ex.x[i] * classifierW[i*3+c]
			}
			if best < 0 || s > bestScore {
				best, bestScore = c, s
			}
		}
		if best != ex.label {
			t.Errorf("%v: label %d, want %d", ex.x, best, ex.label)
		}
	}
}
