package core

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/providers/cpu"
)

func TestWideThreads(t *testing.T) {
	wd, _ := os.Getwd()
	file := filepath.Join(filepath.Dir(wd), "testdata", "models", "classifier.onnx")
	newPool := func(t *testing.T, withProvider bool, sessions int) *Pool {
		t.Helper()
		var preds []*Predictor
		for i := 0; i < sessions; i++ {
			o := Options{Name: "m", File: file, Runtime: config.Runtime{IntraOpThreads: 1}}
			if withProvider {
				o.Provider = cpu.New()
			}
			pred, err := NewPredictor(o, nil)
			if err != nil {
				t.Fatal(err)
			}
			preds = append(preds, pred)
		}
		pool, err := NewPool(preds...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = pool.Close() })
		return pool
	}
	// A model file over the size bound: sparse, nothing is read from it.
	big := filepath.Join(t.TempDir(), "big.onnx")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxWideModelBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()

	tests := []struct {
		name     string
		adaptive bool
		threads  int
		slots    RunSlots
		file     string
		provider bool
		sessions int
		want     int
	}{
		{"every core for runs alone", true, 1, 2, file, true, 1, 2},
		{"two threads per run on four cores", true, 2, 2, file, true, 1, 4},
		{"off", false, 1, 2, file, true, 1, 0},
		{"runs already get every core", true, 2, 1, file, true, 1, 0},
		{"several sessions", true, 1, 2, file, true, 2, 0},
		{"no provider known", true, 1, 2, file, false, 1, 0},
		{"model file missing", true, 1, 2, filepath.Join(t.TempDir(), "gone.onnx"), true, 1, 0},
		{"model file too large for a second copy", true, 1, 2, big, true, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p loaderParams
			p.Runtime = config.Runtime{IntraOpThreads: tt.threads, AdaptiveThreads: tt.adaptive}
			p.Slots = tt.slots
			p.Source.File = tt.file
			if got := wideThreads(p, newPool(t, tt.provider, tt.sessions)); got != tt.want {
				t.Fatalf("wideThreads = %d, want %d", got, tt.want)
			}
		})
	}
}
