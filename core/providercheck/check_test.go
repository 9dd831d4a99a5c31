package providercheck_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/onnxrt/onnxrttest"
	"github.com/svc-dev/svc/core/providercheck"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/providers/cpu"
)

func TestMain(m *testing.M) { onnxrttest.Main(m) }

func TestInputs(t *testing.T) {
	specs := []tensor.Spec{
		{Name: "x", DType: tensor.Float32, Shape: []int64{-1, 3}, Required: true},
		{Name: "ids", DType: tensor.Int64, Shape: []int64{2}, Required: true},
		{Name: "flag", DType: tensor.Bool, Shape: []int64{}, Required: true},
		{Name: "opt", DType: tensor.Float32, Shape: []int64{1}},
	}
	a, err := providercheck.Inputs(specs)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := providercheck.Inputs(specs)
	x := a[0].Data.([]float32)
	if len(x) != 3 || a[0].Shape[0] != 1 || x[0] == x[1] || x[0] < 0 || x[0] >= 1 {
		t.Errorf("x = %v %v: want 1×3 distinct values in [0,1)", a[0].Shape, x)
	}
	if bx := b[0].Data.([]float32); bx[0] != x[0] {
		t.Error("inputs differ between calls")
	}
	for _, id := range a[1].Data.([]int64) {
		if id < 0 || id > 9 {
			t.Errorf("id %d outside 0–9", id)
		}
	}
	if len(a[2].Shape) != 0 || len(a[2].Data.([]bool)) != 1 || a[3] != nil {
		t.Errorf("scalar %v, optional %v", a[2], a[3])
	}
	if _, err := providercheck.Inputs([]tensor.Spec{{Name: "seq", Required: true}}); err == nil || !strings.Contains(err.Error(), `input "seq" has no known rank`) {
		t.Errorf("an input of unknown rank: %v", err)
	}
}

// On the CPU alone the check loads the real model, runs it and reads the
// placement from ONNX Runtime's profile: every node on the CPU provider.
func TestRunCPU(t *testing.T) {
	env := onnxrttest.Load(t)
	avail, err := env.AvailableProviders()
	if err != nil {
		t.Fatal(err)
	}
	host := providers.NewHost(env.LibraryPath(), avail)
	set := providers.NewSet(providers.SetParams{Providers: []providers.Provider{cpu.New()}})
	rows, err := providercheck.Run(set, host, providercheck.Options{File: "../../testdata/models/classifier.onnx", Runs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("rows %+v", rows)
	}
	r := rows[0]
	if r.Provider != "cpu" || r.Err != "" || r.Speedup != 1 || !math.IsNaN(r.MaxAbsDiff) || r.Mean <= 0 || r.First <= 0 {
		t.Errorf("cpu row %+v", r)
	}
	if len(r.Placement) != 1 || r.Placement[0].Provider != "CPUExecutionProvider" || r.Placement[0].Nodes == 0 {
		t.Errorf("placement %v, want every node on the CPU", r.Placement)
	}
	var out bytes.Buffer
	if err := providercheck.Write(&out, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if f := strings.Fields(lines[len(lines)-1]); len(lines) != 2 || !strings.HasPrefix(lines[0], "PROVIDER  LOAD") || len(f) != 8 ||
		f[0] != "cpu" || strings.Join(f[4:7], " ") != "1× reference CPUExecutionProvider" {
		t.Errorf("table:\n%s", out.String())
	}

	// A model that does not load is an error naming it.
	if _, err := providercheck.Run(set, host, providercheck.Options{File: "/nonexistent.onnx"}); err == nil || !strings.Contains(err.Error(), "the model on the CPU provider") {
		t.Errorf("missing model: %v", err)
	}
}
