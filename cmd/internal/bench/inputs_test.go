package bench_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/svc-dev/svc/cmd/internal/bench"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/rest"
)

func TestParseShape(t *testing.T) {
	tests := []struct {
		give      string
		wantName  string
		wantShape []int64
		wantErr   string
	}{
		{give: "x=1,3,48,192", wantName: "x", wantShape: []int64{1, 3, 48, 192}},
		{give: " input_ids = 2, 16 ", wantName: "input_ids", wantShape: []int64{2, 16}},
		{give: "scalar=", wantName: "scalar", wantShape: []int64{}},
		{give: "x", wantErr: "want NAME=D0,D1"},
		{give: "=1,2", wantErr: "want NAME=D0,D1"},
		{give: "x=1,0", wantErr: `dimension "0" is not a positive integer`},
		{give: "x=1,-1", wantErr: "not a positive integer"},
		{give: "x=1,,2", wantErr: "not a positive integer"},
		{give: "x=1x3", wantErr: "not a positive integer"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			name, shape, err := bench.ParseShape(tt.give)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || name != tt.wantName || !reflect.DeepEqual(shape, tt.wantShape) {
				t.Fatalf("= %q, %v, %v; want %q, %v", name, shape, err, tt.wantName, tt.wantShape)
			}
		})
	}
}

func TestPlanInputs(t *testing.T) {
	classifier := []bench.Input{{Name: "input", Type: "float32", Shape: []int64{-1, 4}, Required: true}}
	cls := []bench.Input{{Name: "x", Type: "float32", Shape: []int64{-1, 3, -1, -1}, Required: true}}
	scalar := []bench.Input{
		{Name: "x", Type: "float32", Shape: []int64{}, Required: true},
		{Name: "scale", Type: "float32", Shape: []int64{1}, Required: true},
		{Name: "bias", Type: "float32", Shape: []int64{1}, Required: false},
	}
	multi := []bench.Input{
		{Name: "features", Type: "float32", Shape: []int64{-1, 3}, Required: true},
		{Name: "ids", Type: "int64", Shape: []int64{-1, 2}, Required: true},
		{Name: "mask", Type: "bool", Shape: []int64{-1, 2}, Required: true},
		{Name: "text", Type: "string", Shape: []int64{-1}, Required: true},
	}
	fixed := []bench.Input{{Name: "image", Type: "float32", Shape: []int64{1, 3, 4, 4}, Required: true}}
	unknownRank := []bench.Input{{Name: "x", Type: "float32", Required: true}}
	seq := []bench.Input{{Name: "m", Type: "seq(map(string,float32))", Required: true}}

	type shapes = map[string][]int64
	tests := []struct {
		name   string
		inputs []bench.Input
		batch  int64
		shapes shapes
		want   map[string][]int64 // input name → planned shape
		// wantDefaulted lists the dims of the first input set to 1.
		wantDefaulted []int
		wantErr       string
	}{
		{name: "batch dim is 1 by default", inputs: classifier, batch: 1, want: shapes{"input": {1, 4}}},
		{name: "batch dim from --batch", inputs: classifier, batch: 8, want: shapes{"input": {8, 4}}},
		{name: "other dynamic dims are 1", inputs: cls, batch: 2, want: shapes{"x": {2, 3, 1, 1}}, wantDefaulted: []int{2, 3}},
		{name: "shape given", inputs: cls, batch: 1, shapes: shapes{"x": {1, 3, 48, 192}}, want: shapes{"x": {1, 3, 48, 192}}},
		{name: "shape rank differs", inputs: cls, batch: 1, shapes: shapes{"x": {3, 48, 192}}, wantErr: "the model's input has rank 4 [-1, 3, -1, -1]"},
		{name: "shape contradicts a fixed dim", inputs: cls, batch: 1, shapes: shapes{"x": {1, 1, 48, 192}}, wantErr: "dimension 1 is fixed to 3"},
		{name: "shape of an unknown input", inputs: cls, batch: 1, shapes: shapes{"y": {1}}, wantErr: `--shape names "y", but the model's inputs are: 'x'`},
		{name: "rank 0 and optional input left out", inputs: scalar, batch: 1, want: shapes{"x": {}, "scale": {1}}},
		{name: "optional input named by --shape", inputs: scalar, batch: 1, shapes: shapes{"bias": {1}}, want: shapes{"x": {}, "scale": {1}, "bias": {1}}},
		{name: "every dtype", inputs: multi, batch: 2, want: shapes{"features": {2, 3}, "ids": {2, 2}, "mask": {2, 2}, "text": {2}}},
		{name: "fixed shape", inputs: fixed, batch: 1, want: shapes{"image": {1, 3, 4, 4}}},
		{name: "batch without a dynamic first dim", inputs: fixed, batch: 2, wantErr: "--batch 2: no input without --shape has a dynamic first dimension"},
		{name: "unknown rank needs a shape", inputs: unknownRank, batch: 1, wantErr: "give its shape with --shape x=D0,D1"},
		{name: "unknown rank with a shape", inputs: unknownRank, batch: 1, shapes: shapes{"x": {2, 5}}, want: shapes{"x": {2, 5}}},
		{name: "non-tensor input", inputs: seq, batch: 1, wantErr: "cannot generate; give a request body with --input"},
		{name: "too large", inputs: cls, batch: 1, shapes: shapes{"x": {64, 3, 1024, 1024}}, wantErr: "more than"},
		{name: "batch below 1", inputs: cls, batch: 0, wantErr: "--batch 0"},
		{name: "nothing to generate", inputs: scalar[2:], batch: 1, wantErr: "no required inputs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := bench.PlanInputs(tt.inputs, tt.batch, tt.shapes)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]int64{}
			for _, p := range plan {
				got[p.Name] = p.Shape
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("shapes = %v, want %v", got, tt.want)
			}
			if !reflect.DeepEqual(plan[0].DefaultedDims, tt.wantDefaulted) {
				t.Fatalf("defaulted dims = %v, want %v", plan[0].DefaultedDims, tt.wantDefaulted)
			}
		})
	}
}

// specsOf turns /info inputs into the decoder's specs.
func specsOf(t *testing.T, inputs []bench.Input) []tensor.Spec {
	t.Helper()
	specs := make([]tensor.Spec, len(inputs))
	for i, in := range inputs {
		dt, ok := tensor.ParseDType(in.Type)
		if !ok {
			t.Fatalf("type %q", in.Type)
		}
		specs[i] = tensor.Spec{Name: in.Name, DType: dt, Shape: in.Shape, Required: in.Required}
	}
	return specs
}

func TestGenerateEveryDType(t *testing.T) {
	var inputs []bench.Input
	for _, dt := range []string{"float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool", "string"} {
		inputs = append(inputs, bench.Input{Name: "in_" + dt, Type: dt, Shape: []int64{-1, 5, -1}, Required: true})
	}
	inputs = append(inputs, bench.Input{Name: "scalar", Type: "int64", Shape: []int64{}, Required: true})
	plan, err := bench.PlanInputs(inputs, 3, map[string][]int64{"in_string": {2, 5, 4}})
	if err != nil {
		t.Fatal(err)
	}
	bodies := bench.Generate(plan, 4, 7)
	if len(bodies) != 4 {
		t.Fatalf("%d bodies, want 4", len(bodies))
	}
	specs := specsOf(t, inputs)
	for bi, body := range bodies {
		// The server's own decoder accepts every body.
		ts, err := rest.DecodeRequest(body, specs)
		if err != nil {
			t.Fatalf("body %d: %v\n%s", bi, err, body)
		}
		for i, tn := range ts {
			name := specs[i].Name
			want := []int64{3, 5, 1}
			switch name {
			case "in_string":
				want = []int64{2, 5, 4}
			case "scalar":
				want = []int64{}
			}
			if tn.DType != specs[i].DType || !reflect.DeepEqual(tn.Shape, want) {
				t.Fatalf("%s: %v %v, want %v %v", name, tn.DType, tn.Shape, specs[i].DType, want)
			}
			checkValues(t, name, tn)
		}
	}
	// A rank-0 input is a bare number.
	var m map[string]json.RawMessage
	if err := json.Unmarshal(bodies[0], &m); err != nil {
		t.Fatal(err)
	}
	if s := string(m["scalar"]); strings.HasPrefix(s, "[") {
		t.Fatalf("rank-0 input written as %s, want a number", s)
	}
	if !bytes.Equal(bench.Generate(plan, 4, 7)[2], bodies[2]) {
		t.Fatal("the same seed gives different bodies")
	}
	if bytes.Equal(bench.Generate(plan, 1, 8)[0], bodies[0]) {
		t.Fatal("another seed gives the same body")
	}
	if bytes.Equal(bodies[0], bodies[1]) {
		t.Fatal("the rotated bodies are all the same")
	}
}

// checkValues checks the generated values' ranges.
func checkValues(t *testing.T, name string, tn *tensor.Tensor) {
	t.Helper()
	bad := func(v any) { t.Fatalf("%s: value %v out of range", name, v) }
	switch d := tn.Data.(type) {
	case []float32:
		for _, v := range d {
			if v < 0 || v >= 1 {
				bad(v)
			}
		}
	case []float64:
		for _, v := range d {
			if v < 0 || v >= 1 {
				bad(v)
			}
		}
	case []uint16:
		for _, v := range d {
			f := tensor.Float16ToFloat32(v)
			if tn.DType == tensor.BFloat16 {
				f = tensor.BFloat16ToFloat32(v)
			} else if tn.DType == tensor.Uint16 {
				f = float32(v) / 10
			}
			if f < 0 || f > 1 {
				bad(v)
			}
		}
	case []string:
		for _, v := range d {
			if len(v) < 3 || len(v) > 8 || strings.Trim(v, "abcdefghijklmnopqrstuvwxyz") != "" {
				bad(v)
			}
		}
	case []bool:
	default:
		s := fmt.Sprint(d)
		for _, f := range strings.Fields(strings.Trim(s, "[]")) {
			if len(f) != 1 || f[0] < '0' || f[0] > '9' {
				bad(f)
			}
		}
	}
}
