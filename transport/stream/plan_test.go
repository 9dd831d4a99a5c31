package stream

import (
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/seq"
	"github.com/svc-dev/svc/core/tensor"
)

func TestResolveShape(t *testing.T) {
	f32 := func(shape ...int64) tensor.Spec { return tensor.Spec{Name: "x", DType: tensor.Float32, Shape: shape} }
	tests := []struct {
		name  string
		spec  tensor.Spec
		shape []string // ?shape=, nil: none
		want  []int64
		err   string
	}{
		{name: "samples", spec: f32(-1), want: []int64{-1}},
		{name: "batch of samples", spec: f32(-1, -1), want: []int64{1, -1}},
		{name: "batch fixed rows", spec: f32(-1, 1), want: []int64{1, 1}},
		{name: "fixed", spec: f32(2, 3), want: []int64{2, 3}},
		{name: "scalar", spec: tensor.Spec{Name: "x", DType: tensor.Float32, Shape: []int64{}}, want: []int64{}},
		{name: "rank 1 fixed", spec: f32(4), want: []int64{4}},
		{name: "open inner", spec: f32(-1, 3, -1), want: []int64{1, 3, -1}},
		{name: "several", spec: f32(-1, -1, -1), err: "input 'x' is float32 [-1, -1, -1], with 2 dynamic axes besides its batch: give the shape of each binary message with ?shape=, such as ?shape=1,4,-1"},
		{name: "several without batch", spec: f32(-1, 3, -1, 2, -1), err: "input 'x' is float32 [-1, 3, -1, 2, -1], with 2 dynamic axes besides its batch: give the shape of each binary message with ?shape=, such as ?shape=1,3,4,2,-1"},
		{name: "unknown rank", spec: tensor.Spec{Name: "x", DType: tensor.Int8}, err: "input 'x' is int8 of unknown rank: give the shape"},
		{name: "given", spec: f32(-1, -1, -1), shape: []string{"1,20,40"}, want: []int64{1, 20, 40}},
		{name: "given open", spec: f32(-1, -1, -1), shape: []string{"2, -1, 40"}, want: []int64{2, -1, 40}},
		{name: "given unknown rank", spec: tensor.Spec{Name: "x", DType: tensor.Int8}, shape: []string{"-1,3"}, want: []int64{-1, 3}},
		{name: "given scalar", spec: tensor.Spec{Name: "x", DType: tensor.Int8}, shape: []string{""}, want: nil},
		{name: "given two open", spec: f32(-1, -1, -1), shape: []string{"1,-1,-1"}, err: "shape=1,-1,-1: only one axis can be -1; input 'x' is float32 [-1, -1, -1]"},
		{name: "given rank", spec: f32(-1, -1, -1), shape: []string{"1,20"}, err: "shape=1,20: rank 2, the input's is 3"},
		{name: "given fixed axis", spec: f32(-1, 3), shape: []string{"1,4"}, err: "shape=1,4: axis 1 is 4, the input's is 3"},
		{name: "given word", spec: f32(-1, -1, -1), shape: []string{"1,a,4"}, err: "shape=1,a,4: 'a' is not a size"},
		{name: "given -2", spec: f32(-1, -1), shape: []string{"1,-2"}, err: "'-2' is not a size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveShape(tt.spec, tt.shape)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) || (len(got) > 0 && !reflect.DeepEqual(got, tt.want)) {
				t.Fatalf("shape %v, want %v", got, tt.want)
			}
		})
	}
}

// tallySpecs are the inputs of testdata/models/tally.onnx.
var tallySpecs = []tensor.Spec{
	{Name: "counts", DType: tensor.Int32, Shape: []int64{-1, -1}, Required: true},
	{Name: "grid", DType: tensor.Float32, Shape: []int64{-1, -1, -1}},
	{Name: "state", DType: tensor.Float32, Shape: []int64{-1, 1}, Required: true},
}

var vadSpecs = []tensor.Spec{
	{Name: "input", DType: tensor.Float32, Shape: []int64{-1, -1}, Required: true},
	{Name: "state", DType: tensor.Float32, Shape: []int64{2, -1, 128}, Required: true},
	{Name: "sr", DType: tensor.Int64, Shape: []int64{}, Required: true},
}

func stateAt(i int) *seq.Layout {
	return &seq.Layout{Pairs: []seq.Pair{{Input: "state", Output: "stateN", In: i}}}
}

func TestNewPlan(t *testing.T) {
	tests := []struct {
		name   string
		specs  []tensor.Spec
		state  int
		query  map[string][]string
		stream string
		shape  []int64
		binErr string
		err    string
	}{
		{name: "vad", specs: vadSpecs, state: 1, query: map[string][]string{"sr": {"16000"}}, stream: "input", shape: []int64{1, -1}},
		{name: "vad without sr", specs: vadSpecs, state: 1, err: "input 'sr' needs a value: add ?sr=VALUE to the URL"},
		{name: "vad sr streamed", specs: vadSpecs, state: 1, query: map[string][]string{"input": {"sr"}}, stream: "sr", shape: []int64{}},
		{name: "vad sr twice", specs: vadSpecs, state: 1, query: map[string][]string{"input": {"sr"}, "sr": {"8000"}}, err: "input=sr: 'sr' also has a value in the URL"},
		{name: "vad state streamed", specs: vadSpecs, state: 1, query: map[string][]string{"input": {"state"}, "sr": {"8000"}}, err: "input=state: svc keeps state 'state'; stream one of the inputs input, sr"},
		{name: "vad unknown", specs: vadSpecs, state: 1, query: map[string][]string{"input": {"audio"}, "sr": {"8000"}}, err: "input=audio: the model has no input 'audio' (inputs: input, sr)"},
		{name: "tally default is the float", specs: tallySpecs, state: 2, err: "input 'grid' is float32 [-1, -1, -1], with 2 dynamic axes"},
		{name: "tally grid shaped", specs: tallySpecs, state: 2, query: map[string][]string{"shape": {"1,2,-1"}}, stream: "grid", shape: []int64{1, 2, -1}},
		{name: "tally counts", specs: tallySpecs, state: 2, query: map[string][]string{"input": {"counts"}}, stream: "counts", shape: []int64{1, -1}},
		{name: "only strings", specs: []tensor.Spec{{Name: "text", DType: tensor.String, Shape: []int64{-1}, Required: true}, {Name: "state", DType: tensor.Float32, Shape: []int64{1}}}, state: 1,
			stream: "text", binErr: "input 'text' is string: binary messages carry numbers or booleans; send JSON text steps"},
		{name: "all in the query", specs: []tensor.Spec{{Name: "x", DType: tensor.Int64, Shape: []int64{1}}, {Name: "state", DType: tensor.Float32, Shape: []int64{1}}}, state: 1,
			query: map[string][]string{"x": {"3"}}, stream: "", binErr: "binary messages have no input to go to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := newPlan(tt.specs, stateAt(tt.state), tt.query, 1<<20)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			stream := ""
			if p.stream >= 0 {
				stream = tt.specs[p.stream].Name
			}
			if stream != tt.stream {
				t.Errorf("streams %q, want %q", stream, tt.stream)
			}
			if tt.binErr != "" {
				if p.binErr == nil || !strings.Contains(p.binErr.Error(), tt.binErr) {
					t.Errorf("binary messages: %v, want %q", p.binErr, tt.binErr)
				}
				return
			}
			if !reflect.DeepEqual(p.shape, tt.shape) {
				t.Errorf("shape %v, want %v", p.shape, tt.shape)
			}
		})
	}
}

func le(size int, vals ...uint64) []byte {
	b := make([]byte, size*len(vals))
	for i, v := range vals {
		switch size {
		case 1:
			b[i] = byte(v)
		case 2:
			binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
		case 4:
			binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
		case 8:
			binary.LittleEndian.PutUint64(b[8*i:], v)
		}
	}
	return b
}

// TestBinary: a binary message is the streamed input's elements in its
// own type; its length gives the open axis or must match the shape.
func TestBinary(t *testing.T) {
	minus3 := int64(-3)
	tests := []struct {
		name  string
		dtype tensor.DType
		shape []int64 // declared
		query map[string][]string
		data  []byte
		want  *tensor.Tensor
		err   string
	}{
		{name: "float32 samples", dtype: tensor.Float32, shape: []int64{-1, -1}, data: le(4, uint64(math.Float32bits(0.5)), uint64(math.Float32bits(-2))),
			want: &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, 2}, Data: []float32{0.5, -2}}},
		{name: "float64 fixed", dtype: tensor.Float64, shape: []int64{-1, 1}, data: le(8, math.Float64bits(1e300)),
			want: &tensor.Tensor{DType: tensor.Float64, Shape: []int64{1, 1}, Data: []float64{1e300}}},
		{name: "float16", dtype: tensor.Float16, shape: []int64{-1}, data: le(2, 0x3c00, 0xc000),
			want: &tensor.Tensor{DType: tensor.Float16, Shape: []int64{2}, Data: []uint16{0x3c00, 0xc000}}},
		{name: "int8", dtype: tensor.Int8, shape: []int64{-1, 3}, data: []byte{1, 0xff, 0x80},
			want: &tensor.Tensor{DType: tensor.Int8, Shape: []int64{1, 3}, Data: []int8{1, -1, -128}}},
		{name: "int16", dtype: tensor.Int16, shape: []int64{-1}, data: le(2, 0xfffe),
			want: &tensor.Tensor{DType: tensor.Int16, Shape: []int64{1}, Data: []int16{-2}}},
		{name: "int32 rows", dtype: tensor.Int32, shape: []int64{-1, -1, 2}, data: le(4, 1, 2, 3, 4),
			want: &tensor.Tensor{DType: tensor.Int32, Shape: []int64{1, 2, 2}, Data: []int32{1, 2, 3, 4}}},
		{name: "int64", dtype: tensor.Int64, shape: []int64{}, data: le(8, uint64(minus3)),
			want: &tensor.Tensor{DType: tensor.Int64, Shape: []int64{}, Data: []int64{-3}}},
		{name: "uint8", dtype: tensor.Uint8, shape: []int64{-1}, data: []byte{200, 7},
			want: &tensor.Tensor{DType: tensor.Uint8, Shape: []int64{2}, Data: []uint8{200, 7}}},
		{name: "uint16", dtype: tensor.Uint16, shape: []int64{-1}, data: le(2, 65535),
			want: &tensor.Tensor{DType: tensor.Uint16, Shape: []int64{1}, Data: []uint16{65535}}},
		{name: "uint32", dtype: tensor.Uint32, shape: []int64{-1}, data: le(4, 1<<31),
			want: &tensor.Tensor{DType: tensor.Uint32, Shape: []int64{1}, Data: []uint32{1 << 31}}},
		{name: "uint64", dtype: tensor.Uint64, shape: []int64{-1}, data: le(8, 1<<63),
			want: &tensor.Tensor{DType: tensor.Uint64, Shape: []int64{1}, Data: []uint64{1 << 63}}},
		{name: "bool", dtype: tensor.Bool, shape: []int64{-1, -1}, data: []byte{1, 0, 1},
			want: &tensor.Tensor{DType: tensor.Bool, Shape: []int64{1, 3}, Data: []bool{true, false, true}}},
		{name: "shape from the query", dtype: tensor.Int32, shape: []int64{-1, -1, -1}, query: map[string][]string{"shape": {"1,-1,3"}}, data: le(4, 1, 2, 3, 4, 5, 6),
			want: &tensor.Tensor{DType: tensor.Int32, Shape: []int64{1, 2, 3}, Data: []int32{1, 2, 3, 4, 5, 6}}},
		{name: "bool not 0 or 1", dtype: tensor.Bool, shape: []int64{-1}, data: []byte{2}, err: "input 'x': bool element 0 is byte 2, expected 0 or 1"},
		{name: "not whole elements", dtype: tensor.Float32, shape: []int64{-1, -1}, data: []byte{1, 2, 3},
			err: "input 'x' is float32, shape [1, -1]: a binary message of 3 bytes does not fit; it takes a positive multiple of 4 bytes (one float32 each), little-endian"},
		{name: "empty", dtype: tensor.Float32, shape: []int64{-1}, data: nil, err: "a binary message of 0 bytes does not fit; it takes a positive multiple of 4 bytes"},
		{name: "not whole rows", dtype: tensor.Int32, shape: []int64{-1, -1, 2}, data: le(4, 1, 2, 3),
			err: "input 'x' is int32, shape [1, -1, 2]: a binary message of 12 bytes does not fit; it takes a positive multiple of 8 bytes (2 int32 for each step of axis 1)"},
		{name: "exact too long", dtype: tensor.Float32, shape: []int64{-1, 1}, data: le(4, 1, 2),
			err: "input 'x' is float32, shape [1, 1]: a binary message of 8 bytes does not fit; it takes exactly 4 bytes (1 float32)"},
		{name: "zero rows", dtype: tensor.Float32, shape: []int64{-1, 0, -1}, data: le(4, 1), err: "input 'x' is float32 [-1, 0, -1]: axis 1 is 0, so a binary message holds no element and none can fit; send JSON text steps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs := []tensor.Spec{{Name: "x", DType: tt.dtype, Shape: tt.shape, Required: true}, {Name: "state", DType: tensor.Float32, Shape: []int64{1}, Required: true}}
			p, err := newPlan(specs, stateAt(1), tt.query, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			in, err := p.binary(tt.data)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(in) != 2 || in[1] != nil || !reflect.DeepEqual(in[0], tt.want) {
				t.Fatalf("inputs %+v, want [%+v <nil>]", in, tt.want)
			}
		})
	}
}

// TestBinaryNeedsOthers: binary messages give one input; another that is
// required and has no value is named in the step's error.
func TestBinaryNeedsOthers(t *testing.T) {
	p, err := newPlan(tallySpecs, stateAt(2), map[string][]string{"shape": {"1,1,-1"}}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.binary(le(4, 0))
	if want := "input 'counts' needs a value: binary messages give only 'grid'; send JSON text steps that name 'counts' too"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestText(t *testing.T) {
	tests := []struct {
		name  string
		query map[string][]string
		body  string
		want  []*tensor.Tensor // counts, grid, state
		err   string
	}{
		{name: "flat", body: `{"inputs": {"counts": {"shape": [1, 3], "data": [1, 2, 3]}}}`,
			want: []*tensor.Tensor{{DType: tensor.Int32, Shape: []int64{1, 3}, Data: []int32{1, 2, 3}}, nil, nil}},
		{name: "data before shape", body: `{"inputs": {"counts": {"data": [4, 5], "shape": [2, 1]}}}`,
			want: []*tensor.Tensor{{DType: tensor.Int32, Shape: []int64{2, 1}, Data: []int32{4, 5}}, nil, nil}},
		{name: "nested, no shape", body: `{"inputs": {"counts": {"data": [[7, 8]]}, "grid": {"shape": [1, 2, 2], "data": [0.5, 1, 1.5, 2]}}}`,
			want: []*tensor.Tensor{{DType: tensor.Int32, Shape: []int64{1, 2}, Data: []int32{7, 8}}, {DType: tensor.Float32, Shape: []int64{1, 2, 2}, Data: []float32{0.5, 1, 1.5, 2}}, nil}},
		{name: "query value", query: map[string][]string{"input": {"grid"}, "shape": {"1,1,-1"}, "counts": {"9"}}, body: `{"inputs": {}}`,
			want: []*tensor.Tensor{{DType: tensor.Int32, Shape: []int64{1, 1}, Data: []int32{9}}, nil, nil}},
		{name: "step replaces the query value", query: map[string][]string{"input": {"grid"}, "shape": {"1,1,-1"}, "counts": {"9"}}, body: `{"inputs": {"counts": {"shape": [1, 1], "data": [2]}}}`,
			want: []*tensor.Tensor{{DType: tensor.Int32, Shape: []int64{1, 1}, Data: []int32{2}}, nil, nil}},
		{name: "required absent", body: `{"inputs": {"grid": {"shape": [1, 1, 1], "data": [1]}}}`, err: `input 'counts' needs a value: name it in the step's "inputs"`},
		{name: "no inputs", body: `{}`, err: `input 'counts' needs a value`},
		{name: "state", body: `{"inputs": {"state": {"shape": [1, 1], "data": [100]}}}`, err: "svc keeps state 'state': a step gives the inputs counts, grid"},
		{name: "unknown", body: `{"inputs": {"volume": {"shape": [1], "data": [1]}}}`, err: "the model has no input 'volume' (inputs: counts, grid)"},
		{name: "twice", body: `{"inputs": {"counts": {"data": [[1]]}, "counts": {"data": [[1]]}}}`, err: "input 'counts' is given twice"},
		{name: "malformed", body: `{"inputs": {"counts": {"data": [1, 2}}}`, err: "Invalid JSON body"},
		{name: "not JSON", body: `hello`, err: "Invalid JSON body"},
		{name: "not an object", body: `[1, 2]`, err: `a JSON step is an object: send {"inputs": {"NAME": {"shape": [...], "data": [...]}}}`},
		{name: "other key", body: `{"input": [0]}`, err: `a JSON step has the key 'input': send {"inputs"`},
		{name: "inputs twice", body: `{"inputs": {}, "inputs": {}}`, err: `a JSON step has "inputs" twice`},
		{name: "inputs not an object", body: `{"inputs": [1]}`, err: `a JSON step's "inputs" is an object of the inputs by name`},
		{name: "input not an object", body: `{"inputs": {"counts": [1]}}`, err: `input 'counts' is an object: {"shape": [...], "data": [...]}`},
		{name: "input other key", body: `{"inputs": {"counts": {"datatype": "INT32", "data": [1]}}}`, err: `input 'counts' has the key 'datatype': it takes "shape" and "data"`},
		{name: "no data", body: `{"inputs": {"counts": {"shape": [1, 1]}}}`, err: `input 'counts' has no "data"`},
		{name: "bad shape", body: `{"inputs": {"counts": {"shape": [1, -1], "data": [1]}}}`, err: `the "shape" of input 'counts' is an array of non-negative integers`},
		{name: "shape not an array", body: `{"inputs": {"counts": {"shape": "1x1", "data": [1]}}}`, err: `the "shape" of input 'counts' is an array`},
		{name: "count", body: `{"inputs": {"counts": {"shape": [1, 3], "data": [1, 2]}}}`, err: "Invalid input for 'counts': shape [1, 3] needs 3 elements, got 2"},
		{name: "rank", body: `{"inputs": {"counts": {"shape": [3], "data": [1, 2, 3]}}}`, err: "Invalid shape for 'counts': expected rank 2"},
		{name: "element type", body: `{"inputs": {"counts": {"shape": [1, 2], "data": [1, 2.5]}}}`, err: "Invalid value for 'counts' at [1]: 2.5 is not an integer (int32)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.query
			if q == nil {
				q = map[string][]string{"input": {"counts"}}
			}
			p, err := newPlan(tallySpecs, stateAt(2), q, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			in, err := p.text([]byte(tt.body))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(in, tt.want) {
				for i := range in {
					t.Logf("input %d: %+v", i, in[i])
				}
				t.Fatalf("inputs differ from %v", tt.want)
			}
		})
	}
}
