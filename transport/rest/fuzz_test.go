package rest

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

// fuzzSpecs are the input sets FuzzDecodeRequest picks from.
var fuzzSpecs = [][]tensor.Spec{
	{{Name: "input", DType: tensor.Float32, Shape: []int64{-1, 4}, Required: true}},
	{{Name: "x", DType: tensor.Float32}},
	{
		{Name: "ids", DType: tensor.Int64, Shape: []int64{-1, -1}, Required: true},
		{Name: "mask", DType: tensor.Uint8, Shape: []int64{-1, -1}},
		{Name: "s", DType: tensor.String, Shape: []int64{-1}},
		{Name: "b", DType: tensor.Bool, Shape: []int64{}},
	},
	{
		{Name: "a", DType: tensor.Float16, Shape: []int64{2, -1}},
		{Name: "b", DType: tensor.BFloat16, Shape: []int64{-1}},
		{Name: "c", DType: tensor.Float64, Shape: []int64{1}},
		{Name: "d", DType: tensor.Int8, Shape: nil},
	},
	{
		{Name: "i16", DType: tensor.Int16, Shape: []int64{-1, 2, 2}},
		{Name: "i32", DType: tensor.Int32, Shape: []int64{}},
		{Name: "u16", DType: tensor.Uint16, Shape: nil},
		{Name: "u32", DType: tensor.Uint32, Shape: []int64{3}},
		{Name: "u64", DType: tensor.Uint64, Shape: []int64{-1}},
		{Name: "s", DType: tensor.String, Shape: []int64{}},
	},
}

// dataTypes is the Go type of Data for each DType.
var dataTypes = map[tensor.DType]reflect.Type{
	tensor.Float32: reflect.TypeFor[[]float32](), tensor.Float64: reflect.TypeFor[[]float64](),
	tensor.Float16: reflect.TypeFor[[]uint16](), tensor.BFloat16: reflect.TypeFor[[]uint16](),
	tensor.Int8: reflect.TypeFor[[]int8](), tensor.Int16: reflect.TypeFor[[]int16](),
	tensor.Int32: reflect.TypeFor[[]int32](), tensor.Int64: reflect.TypeFor[[]int64](),
	tensor.Uint8: reflect.TypeFor[[]uint8](), tensor.Uint16: reflect.TypeFor[[]uint16](),
	tensor.Uint32: reflect.TypeFor[[]uint32](), tensor.Uint64: reflect.TypeFor[[]uint64](),
	tensor.Bool: reflect.TypeFor[[]bool](), tensor.String: reflect.TypeFor[[]string](),
}

func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"input": [[5.1, 3.5, 1.4, 0.2]]}`), uint8(0))
	f.Add([]byte(`{"x": [[[1e3]]]}`), uint8(1))
	f.Add([]byte(`{"ids": [[101, 2023]], "s": ["a\u00e9"], "b": true}`), uint8(2))
	f.Add([]byte(`{"a": [[1, 2], [3, 4]], "b": [1.5e38], "c": 0.1, "d": [[-128]]}`), uint8(3))
	f.Add([]byte(`{"i16": [[1, 2], [3, 4]], "u64": [18446744073709551615]}`), uint8(4))
	f.Fuzz(func(t *testing.T, body []byte, sel uint8) {
		specs := fuzzSpecs[int(sel)%len(fuzzSpecs)]
		out, err := DecodeRequest(body, specs)
		out2, err2 := DecodeRequest(body, specs)
		if !reflect.DeepEqual(err, err2) || !reflect.DeepEqual(out, out2) {
			t.Fatalf("not deterministic: %v / %v", err, err2)
		}
		if err != nil {
			var e *tensorjson.Error
			if !errors.As(err, &e) {
				t.Fatalf("error is %T, not *tensorjson.Error: %v", err, err)
			}
			if e.Message == "" || len(e.Message) > 600 {
				t.Fatalf("bad message length %d: %q", len(e.Message), e.Message)
			}
			if out != nil {
				t.Fatal("tensors with an error")
			}
			if !json.Valid(body) {
				return
			}
			// Valid JSON: only our own rules (or the depth limit) may refuse it.
			if strings.HasPrefix(e.Message, "Invalid JSON body") && !strings.Contains(e.Message, "nesting depth") {
				t.Fatalf("valid JSON refused as malformed: %s", e.Message)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON: %q", body)
		}
		if len(out) != len(specs) {
			t.Fatalf("%d tensors for %d specs", len(out), len(specs))
		}
		for i, tt := range out {
			s := specs[i]
			if tt == nil {
				if s.Required {
					t.Fatalf("required input %s missing", s.Name)
				}
				continue
			}
			if tt.DType != s.DType {
				t.Fatalf("%s: dtype %v", s.Name, tt.DType)
			}
			if reflect.TypeOf(tt.Data) != dataTypes[s.DType] {
				t.Fatalf("%s: data %T for %v", s.Name, tt.Data, s.DType)
			}
			if tt.Shape == nil {
				t.Fatalf("%s: nil shape", s.Name)
			}
			n := 1
			for _, d := range tt.Shape {
				if d < 0 {
					t.Fatalf("%s: negative dim in %v", s.Name, tt.Shape)
				}
				n *= int(d)
			}
			if tt.Len() != n {
				t.Fatalf("%s: Len %d, shape %v", s.Name, tt.Len(), tt.Shape)
			}
			if s.Shape != nil {
				if len(tt.Shape) != len(s.Shape) {
					t.Fatalf("%s: shape %v for spec %v", s.Name, tt.Shape, s.Shape)
				}
				for j, d := range s.Shape {
					if d >= 0 && tt.Shape[j] != d {
						t.Fatalf("%s: shape %v for spec %v", s.Name, tt.Shape, s.Shape)
					}
				}
			}
			// Decoded values are finite, encode to valid JSON and decode back
			// to the same tensor.
			enc := tensorjson.AppendJSON(nil, tt)
			if !json.Valid(enc) {
				t.Fatalf("%s: invalid encoding %s", s.Name, enc)
			}
			back, err := DecodeRequest(append(append([]byte(`{"`+s.Name+`": `), enc...), '}'),
				[]tensor.Spec{{Name: s.Name, DType: s.DType, Shape: tt.Shape}})
			if err != nil {
				t.Fatalf("%s: re-decoding %s: %v", s.Name, enc, err)
			}
			if !reflect.DeepEqual(back[0].Shape, tt.Shape) || !reflect.DeepEqual(back[0].Data, tt.Data) {
				t.Fatalf("%s: round trip %v %v -> %v %v", s.Name, tt.Shape, tt.Data, back[0].Shape, back[0].Data)
			}
		}
	})
}
