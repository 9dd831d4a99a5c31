package oip

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport"
)

// modelRunner is a model with each kind of input and output the protocol
// tells apart: "x" FP32 [-1, 2] (required), "n" INT64 of unknown rank,
// "seq" a sequence (not a tensor); outputs "y" FP32 [-1, 2], "h" FP16 [2]
// and "seq_out", a sequence. Predict copies "x" to "y".
type modelRunner struct{}

func (modelRunner) Specs() []tensor.Spec {
	return []tensor.Spec{
		{Name: "x", DType: tensor.Float32, Shape: []int64{-1, 2}, Required: true},
		{Name: "n", DType: tensor.Int64},
		{Name: "seq", DType: tensor.Invalid},
	}
}

func (modelRunner) Info() core.ModelInfo {
	return core.ModelInfo{Name: "m", Version: "3",
		Inputs: []core.InputSpec{
			{Name: "x", Type: "float32", Shape: []int64{-1, 2}, Required: true, Kind: core.KindTensor},
			{Name: "n", Type: "int64", Kind: core.KindTensor},
			{Name: "seq", Type: "seq(float32)", Kind: core.KindSequence},
		},
		Outputs: []core.OutputSpec{
			{Name: "y", Type: "float32", Shape: []int64{-1, 2}, Kind: core.KindTensor},
			{Name: "h", Type: "float16", Shape: []int64{2}, Kind: core.KindTensor},
			{Name: "seq_out", Type: "seq(map(string,float32))", Kind: core.KindSequence},
		}}
}

func (modelRunner) Predict(_ context.Context, in []*tensor.Tensor) (core.Result, error) {
	y := &tensor.Tensor{DType: tensor.Float32, Shape: in[0].Shape, Data: slices.Clone(in[0].Data.([]float32))}
	h := &tensor.Tensor{DType: tensor.Float16, Shape: []int64{2}, Data: []uint16{0x3c00, 0}}
	return core.NewResult([]*tensor.Tensor{y, h, h}), nil
}

func TestView(t *testing.T) {
	v := NewView(modelRunner{}, nil)
	want := ModelMetadata{Name: "served", Versions: []string{"3"}, Platform: Platform,
		Inputs:  []TensorMetadata{{Name: "x", Datatype: "FP32", Shape: []int64{-1, 2}}, {Name: "n", Datatype: "INT64", Shape: []int64{-1}}},
		Outputs: []TensorMetadata{{Name: "y", Datatype: "FP32", Shape: []int64{-1, 2}}, {Name: "h", Datatype: "FP16", Shape: []int64{2}}}}
	if got := v.Metadata("served"); !reflect.DeepEqual(got, want) {
		t.Errorf("metadata %+v\nwant %+v", got, want)
	}
	if v.Version() != "3" || v.Spec(1).Name != "n" || v.OutputName(1) != "h" || v.OutputDatatype(1, &Request{}) != tensor.Float16 {
		t.Errorf("version %q, spec 1 %q, output 1 %q %v", v.Version(), v.Spec(1).Name, v.OutputName(1), v.OutputDatatype(1, &Request{}))
	}
	if v.inputList != "'x', 'n', 'seq'" || v.outputList != "'y', 'h', 'seq_out'" {
		t.Errorf("lists %q, %q", v.inputList, v.outputList)
	}
	// A model without tensors lists none, and its metadata has empty lists.
	if got := listOrNone(nil); got != "none" {
		t.Errorf("listOrNone(nil) = %q", got)
	}
	if m := NewView(noTensors{}, nil).Metadata("e"); m.Inputs == nil || m.Outputs == nil || len(m.Inputs)+len(m.Outputs) != 0 {
		t.Errorf("metadata of a model without tensors: %+v", m)
	}
}

// noTensors is a model with a sequence input and output only.
type noTensors struct{ modelRunner }

func (noTensors) Specs() []tensor.Spec { return []tensor.Spec{{Name: "s", DType: tensor.Invalid}} }

func (noTensors) Info() core.ModelInfo {
	return core.ModelInfo{Inputs: []core.InputSpec{{Name: "s", Type: "seq(float32)", Kind: core.KindSequence}},
		Outputs: []core.OutputSpec{{Name: "o", Type: "seq(float32)", Kind: core.KindSequence}}}
}

// header is a complete, valid header for input "x", changed by edit.
func header(edit func(h *InputHeader)) *InputHeader {
	h := &InputHeader{Pos: 1, Name: "x", Datatype: "FP32", Shape: []int64{3, 2}, HasName: true, HasDatatype: true, HasShape: true}
	if edit != nil {
		edit(h)
	}
	return h
}

// TestCheckInput: every refusal of an input, in each dialect (the
// messages differ only in how they name a field and where the data goes).
func TestCheckInput(t *testing.T) {
	tests := []struct {
		name            string
		in              *InputHeader
		wantJSON, proto string // proto "": as JSON
	}{
		{"no name", header(func(h *InputHeader) { h.Name, h.HasName = "", false }),
			`Invalid inputs[1]: "name" is missing`, `Invalid inputs[1]: name is missing`},
		{"empty name", header(func(h *InputHeader) { h.Name = "" }),
			`Unknown input ''; the model's inputs are: 'x', 'n', 'seq'`, ""},
		{"unknown", header(func(h *InputHeader) { h.Name = "z" }),
			`Unknown input 'z'; the model's inputs are: 'x', 'n', 'seq'`, ""},
		{"unknown, long name", header(func(h *InputHeader) { h.Name = strings.Repeat("z", 300) }),
			`Unknown input '` + strings.Repeat("z", 64) + `...'; the model's inputs are: 'x', 'n', 'seq'`, ""},
		{"not a tensor", header(func(h *InputHeader) { h.Name = "seq" }),
			`Input 'seq' is not a tensor; the Open Inference Protocol carries tensors only`, ""},
		{"shared memory", header(func(h *InputHeader) { h.Refused = InputParameter(JSON, ParamSharedMemory) }),
			`Input parameters.shared_memory_region: the shared-memory extension is not supported; send the data in the body`, "-"},
		{"shared memory", header(func(h *InputHeader) { h.Refused = InputParameter(Protobuf, ParamSharedMemory) }),
			"-", `Input parameters.shared_memory_region: the shared-memory extension is not supported; send the data in the request`},
		{"no datatype", header(func(h *InputHeader) { h.Datatype, h.HasDatatype = "", false }),
			`Input 'x': "datatype" is missing (the model takes FP32)`, `Input 'x': datatype is missing (the model takes FP32)`},
		{"unknown datatype", header(func(h *InputHeader) { h.Datatype = "float" }),
			`Invalid datatype 'float' for input 'x': expected one of BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FP16, BF16, FP32, FP64, BYTES`, ""},
		{"wrong datatype", header(func(h *InputHeader) { h.Datatype = "FP64" }),
			`Invalid datatype for input 'x': the model takes FP32, got FP64`, ""},
		{"no shape", header(func(h *InputHeader) { h.Shape, h.HasShape = nil, false }),
			`Input 'x': "shape" is missing`, `Input 'x': shape is missing`},
		{"wrong rank", header(func(h *InputHeader) { h.Shape = []int64{6} }),
			`Invalid shape for 'x': expected rank 2 [-1, 2], got rank 1 [6]`, ""},
		{"wrong dimension", header(func(h *InputHeader) { h.Shape = []int64{2, 3} }),
			`Invalid shape for 'x': expected [-1, 2], got [2, 3]`, ""},
		{"negative dimension", header(func(h *InputHeader) { h.Shape = []int64{-3, 2} }),
			`Invalid shape for 'x': [-3, 2] has a negative dimension`, ""},
		{"too many elements", header(func(h *InputHeader) {
			h.Name, h.Datatype, h.Shape = "n", "INT64", []int64{1 << 40, 1 << 40}
		}), `Invalid shape for 'n': [1099511627776, 1099511627776] has too many elements`, ""},
	}
	for _, tt := range tests {
		for _, d := range []Dialect{JSON, Protobuf} {
			want := tt.wantJSON
			if d == Protobuf && tt.proto != "" {
				want = tt.proto
			}
			if want == "-" {
				continue // the other dialect's refusal
			}
			t.Run(tt.name+"/"+dialectName(d), func(t *testing.T) {
				req := NewView(modelRunner{}, nil).NewRequest()
				_, _, err := req.CheckInput(d, tt.in)
				assertRefusal(t, err, KindInvalid, want)
			})
		}
	}
}

func dialectName(d Dialect) string {
	if d == JSON {
		return "json"
	}
	return "protobuf"
}

// assertRefusal checks that err is an *Error of kind k with message msg.
func assertRefusal(t *testing.T, err error, k Kind, msg string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want an *Error %q", err, err, msg)
	}
	if e.Kind != k || e.Message != msg {
		t.Fatalf("refusal %d %q\nwant    %d %q", e.Kind, e.Message, k, msg)
	}
}

// TestCheckInputAccepts: the index and element count of accepted inputs,
// any shape for an input of unknown rank, each input once.
func TestCheckInputAccepts(t *testing.T) {
	req := NewView(modelRunner{}, nil).NewRequest()
	k, n, err := req.CheckInput(JSON, header(nil))
	if err != nil || k != 0 || n != 6 {
		t.Fatalf("x: %d, %d, %v", k, n, err)
	}
	for _, shape := range [][]int64{{}, {0}, {2, 3, 4}} {
		other := NewView(modelRunner{}, nil).NewRequest()
		k, n, err = other.CheckInput(Protobuf, header(func(h *InputHeader) { h.Name, h.Datatype, h.Shape = "n", "INT64", shape }))
		want, _ := elementCount("n", shape)
		if err != nil || k != 1 || n != want {
			t.Errorf("n %v: %d, %d, %v", shape, k, n, err)
		}
	}
	_, _, err = req.CheckInput(JSON, header(nil))
	assertRefusal(t, err, KindInvalid, "Duplicate input 'x'")
	// A refused input leaves its name free: the request failed anyway,
	// but the check does not count it.
	req = NewView(modelRunner{}, nil).NewRequest()
	if _, _, err := req.CheckInput(JSON, header(func(h *InputHeader) { h.Datatype = "INT8" })); err == nil {
		t.Fatal("wrong datatype accepted")
	}
	if _, _, err := req.CheckInput(JSON, header(nil)); err != nil {
		t.Errorf("x after a refused x: %v", err)
	}
}

// wideRunner is a model of 70 optional FP32 inputs, "i0" to "i69".
type wideRunner struct{ modelRunner }

func (wideRunner) Specs() []tensor.Spec {
	specs := make([]tensor.Spec, 70)
	for i := range specs {
		specs[i] = tensor.Spec{Name: "i" + strconv.Itoa(i), DType: tensor.Float32}
	}
	return specs
}

func (wideRunner) Info() core.ModelInfo { return core.ModelInfo{} }

// TestDuplicatesOfManyInputs: each input counts once, past the 64th too.
func TestDuplicatesOfManyInputs(t *testing.T) {
	req := NewView(wideRunner{}, nil).NewRequest()
	order := []int{0, 63, 64, 69, 5, 66}
	for _, k := range order {
		h := &InputHeader{Name: "i" + strconv.Itoa(k), Datatype: "FP32", Shape: []int64{1}, HasName: true, HasDatatype: true, HasShape: true}
		if got, _, err := req.CheckInput(JSON, h); err != nil || got != k {
			t.Fatalf("i%d: %d, %v", k, got, err)
		}
	}
	for k := range 70 {
		h := &InputHeader{Name: "i" + strconv.Itoa(k), Datatype: "FP32", Shape: []int64{1}, HasName: true, HasDatatype: true, HasShape: true}
		_, _, err := req.CheckInput(JSON, h)
		if slices.Contains(order, k) {
			assertRefusal(t, err, KindInvalid, "Duplicate input 'i"+strconv.Itoa(k)+"'")
		} else if err != nil {
			t.Errorf("i%d: %v", k, err)
		}
	}
}

func TestCheckRequired(t *testing.T) {
	req := NewView(modelRunner{}, nil).NewRequest()
	assertRefusal(t, req.CheckRequired(), KindInvalid, "Missing required input: 'x'")
	// Checked is not sent: the tensor makes the input present.
	if _, _, err := req.CheckInput(JSON, header(nil)); err != nil {
		t.Fatal(err)
	}
	assertRefusal(t, req.CheckRequired(), KindInvalid, "Missing required input: 'x'")
	req.SetInput(0, &tensor.Tensor{DType: tensor.Float32, Shape: []int64{0, 2}, Data: []float32{}})
	if err := req.CheckRequired(); err != nil {
		t.Fatal(err)
	}
}

func TestAddOutput(t *testing.T) {
	tests := []struct {
		name            string
		out             OutputHeader
		wantJSON, proto string // proto "": as JSON
	}{
		{"no name", OutputHeader{Pos: 2}, `Invalid outputs[2]: "name" is missing`, `Invalid outputs[2]: name is missing`},
		{"no name and a refused parameter", OutputHeader{Pos: 2, Refused: OutputParameter(ParamClassification)},
			`Invalid outputs[2]: "name" is missing`, `Invalid outputs[2]: name is missing`},
		{"classification", OutputHeader{Name: "y", HasName: true, Refused: OutputParameter(ParamClassification)},
			"Output parameters.classification: the classification extension is not supported", ""},
		{"shared memory", OutputHeader{Name: "y", HasName: true, Refused: OutputParameter(ParamSharedMemory)},
			"Output parameters.shared_memory_region: the shared-memory extension is not supported", ""},
		{"unknown", OutputHeader{Name: "q", HasName: true}, "Unknown output 'q'; the model's outputs are: 'y', 'h', 'seq_out'", ""},
		{"not a tensor", OutputHeader{Name: "seq_out", HasName: true},
			"Output 'seq_out' is a sequence, not a tensor; the Open Inference Protocol carries tensors only", ""},
		{"duplicate", OutputHeader{Name: "h", HasName: true}, "Duplicate output 'h'", ""},
	}
	for _, tt := range tests {
		for _, d := range []Dialect{JSON, Protobuf} {
			want := tt.wantJSON
			if d == Protobuf && tt.proto != "" {
				want = tt.proto
			}
			t.Run(tt.name+"/"+dialectName(d), func(t *testing.T) {
				req := NewView(modelRunner{}, nil).NewRequest()
				req.SelectOutputs(2)
				if err := req.AddOutput(d, &OutputHeader{Name: "h", HasName: true}); err != nil {
					t.Fatal(err)
				}
				assertRefusal(t, req.AddOutput(d, &tt.out), KindInvalid, want)
			})
		}
	}
}

func TestParameters(t *testing.T) {
	for _, key := range []string{"binary_data_size", "binary_data", "other", ""} {
		if InputParameter(JSON, key) != nil || OutputParameter(key) != nil {
			t.Errorf("parameter %q refused", key)
		}
	}
	if InputParameter(JSON, ParamClassification) != nil {
		t.Error("classification refused on an input")
	}
	assertRefusal(t, InvalidBool(JSON, "parameters.binary_data_output"), KindInvalid, "Invalid parameters.binary_data_output: expected true or false")
	assertRefusal(t, InvalidBool(Protobuf, "parameters.binary_data_output"), KindInvalid, "Invalid parameters.binary_data_output: expected a bool_param")
	assertRefusal(t, UnknownModel("other", "m"), KindNotFound, "Unknown model 'other'; this server serves 'm'")
	assertRefusal(t, UnknownVersion("9", "m", "3"), KindNotFound, "Unknown version '9' of model 'm'; it has version '3'")
}

// TestResponseOutputs: which outputs a response carries and which go as
// binary data.
func TestResponseOutputs(t *testing.T) {
	y, h := RequestedOutput{Index: 0}, RequestedOutput{Index: 1}
	tests := []struct {
		name         string
		outputs      []OutputHeader // nil: the request names none
		binaryOutput bool
		want         []RequestedOutput
		binary       []bool
	}{
		{"all tensor outputs", nil, false, []RequestedOutput{y, h}, []bool{false, false}},
		{"all binary", nil, true, []RequestedOutput{y, h}, []bool{true, true}},
		{"none", []OutputHeader{}, true, []RequestedOutput{}, []bool{}},
		{"named, in order", []OutputHeader{{Name: "h", HasName: true}, {Name: "y", HasName: true}}, false,
			[]RequestedOutput{h, y}, []bool{false, false}},
		{"binary_data over binary_data_output", []OutputHeader{
			{Name: "y", HasName: true, Binary: false, BinarySet: true},
			{Name: "h", HasName: true},
		}, true, []RequestedOutput{{Index: 0, BinarySet: true}, h}, []bool{false, true}},
		{"binary_data alone", []OutputHeader{{Name: "h", HasName: true, Binary: true, BinarySet: true}}, false,
			[]RequestedOutput{{Index: 1, Binary: true, BinarySet: true}}, []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := NewView(modelRunner{}, nil).NewRequest()
			req.SetBinaryOutput(tt.binaryOutput)
			if tt.outputs != nil {
				req.SelectOutputs(len(tt.outputs))
			}
			for i := range tt.outputs {
				if err := req.AddOutput(JSON, &tt.outputs[i]); err != nil {
					t.Fatal(err)
				}
			}
			got := req.ResponseOutputs()
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("outputs %+v, want %+v", got, tt.want)
			}
			for i, o := range got {
				if req.Binary(o) != tt.binary[i] {
					t.Errorf("output %d binary %v, want %v", i, req.Binary(o), tt.binary[i])
				}
			}
		})
	}
}

// TestRun runs a request and reads its outputs back through the view.
func TestRun(t *testing.T) {
	v := NewView(modelRunner{}, nil)
	req := v.NewRequest()
	x := &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, 2}, Data: []float32{1, 2}}
	req.SetInput(0, x)
	q := (&transport.Inferences{}).Step(context.Background())
	defer q.End()
	res, err := v.Run(q, &req, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	if err := v.CheckResult(res); err != nil {
		t.Fatal(err)
	}
	y, err := v.OutputTensor(res, 0, &req)
	if err != nil || !reflect.DeepEqual(y.Data, []float32{1, 2}) {
		t.Fatalf("y = %+v, %v", y, err)
	}
	short := core.NewResult([]*tensor.Tensor{x})
	if err := v.CheckResult(short); err == nil || err.Error() != "the run gave 1 outputs, the model has 3" {
		t.Errorf("a result short of outputs: %v", err)
	}
}
