package onnxpb

import (
	"bytes"
	"math"
	"reflect"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// Wire-building helpers with literal field numbers, independent of the
// package's constants, so the tests check the numbers against onnx.proto.

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func vint(num protowire.Number, v uint64) []byte {
	b := protowire.AppendTag(nil, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func sint(num protowire.Number, v int64) []byte { return vint(num, uint64(v)) }

func fx32(num protowire.Number, f float32) []byte {
	b := protowire.AppendTag(nil, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, math.Float32bits(f))
}

func fx64(num protowire.Number, v uint64) []byte {
	b := protowire.AppendTag(nil, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

func lenb(num protowire.Number, body []byte) []byte {
	b := protowire.AppendTag(nil, num, protowire.BytesType)
	return protowire.AppendBytes(b, body)
}

func str(num protowire.Number, s string) []byte { return lenb(num, []byte(s)) }

func msg(num protowire.Number, parts ...[]byte) []byte { return lenb(num, cat(parts...)) }

func group(num protowire.Number, body []byte) []byte {
	b := protowire.AppendTag(nil, num, protowire.StartGroupType)
	b = append(b, body...)
	return protowire.AppendTag(b, num, protowire.EndGroupType)
}

func packedVarints(vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = protowire.AppendVarint(b, v)
	}
	return b
}

func packedF32(vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		b = protowire.AppendFixed32(b, math.Float32bits(v))
	}
	return b
}

func packedF64(vs ...float64) []byte {
	var b []byte
	for _, v := range vs {
		b = protowire.AppendFixed64(b, math.Float64bits(v))
	}
	return b
}

// fullModel sets every field this package models.
func fullModel() *Model {
	tensor := &TensorProto{
		Name:         "t",
		Dims:         []int64{2, 3},
		DataType:     ElemFloat,
		Segment:      &Segment{Begin: 1, End: 2},
		DocString:    "tensor doc",
		RawData:      []byte{1, 2, 3},
		FloatData:    []float32{1.5, -2},
		Int32Data:    []int32{-1, 7},
		Int64Data:    []int64{-3, 1 << 40},
		DoubleData:   []float64{math.Pi},
		Uint64Data:   []uint64{math.MaxUint64},
		StringData:   [][]byte{[]byte("a"), {}},
		DataLocation: LocationExternal,
		ExternalData: []StringEntry{{"location", "w.bin"}, {"offset", "0"}},
	}
	sub := &Graph{Name: "sub", Nodes: []*Node{{OpType: "Identity", Inputs: []string{"a"}, Outputs: []string{"b"}}}}
	return &Model{
		IRVersion:       8,
		OpsetImports:    []OpsetImport{{"", 17}, {"ai.onnx.ml", 3}},
		ProducerName:    "prod",
		ProducerVersion: "1.0",
		Domain:          "com.example",
		ModelVersion:    42,
		DocString:       "model doc",
		MetadataProps:   []StringEntry{{"z", "last"}, {"a", "first"}, {"", ""}},
		Graph: &Graph{
			Name:      "main",
			DocString: "graph doc",
			Nodes: []*Node{{
				Name:      "n0",
				OpType:    "Custom",
				Domain:    "com.example",
				DocString: "node doc",
				Inputs:    []string{"x", "", "y"},
				Outputs:   []string{"z"},
				Attributes: []Attribute{
					{Name: "f", Type: AttrFloat, F: 0},
					{Name: "f2", Type: AttrFloat, F: -1.25, DocString: "attr doc"},
					{Name: "i", Type: AttrInt, I: 0},
					{Name: "i2", Type: AttrInt, I: -7},
					{Name: "s", Type: AttrString, S: []byte{}},
					{Name: "s2", Type: AttrString, S: []byte("UPPER")},
					{Name: "t", Type: AttrTensor, T: tensor},
					{Name: "g", Type: AttrGraph, G: sub},
					{Name: "fs", Type: AttrFloats, Floats: []float32{1, 2.5}},
					{Name: "is", Type: AttrInts, Ints: []int64{-1, 0, 1 << 62}},
					{Name: "ss", Type: AttrStrings, Strings: [][]byte{[]byte("cat"), {}}},
					{Name: "ts", Type: AttrTensors, Tensors: []*TensorProto{tensor, {Name: "u"}}},
					{Name: "gs", Type: AttrGraphs, Graphs: []*Graph{sub, {}}},
					{Name: "ref", Type: AttrInt, RefAttrName: "outer"},
				},
			}, {OpType: "Relu"}},
			Initializers: []*TensorProto{tensor, {Name: "empty", DataType: ElemInt64, RawData: []byte{}}},
			Inputs: []ValueInfo{
				{Name: "x", DocString: "x doc", Type: &TypeProto{Tensor: &TensorType{
					ElemType: ElemFloat,
					Shape:    []Dim{DimParam("batch"), DimValue(0), DimValue(4), DimUnknown(), {Value: 3, Denotation: "DATA_CHANNEL"}},
				}, Denotation: "IMAGE"}},
				{Name: "scalar", Type: &TypeProto{Tensor: &TensorType{ElemType: ElemDouble, Shape: []Dim{}}}},
				{Name: "anyrank", Type: &TypeProto{Tensor: &TensorType{ElemType: ElemString}}},
				{Name: "untyped"},
			},
			Outputs: []ValueInfo{
				{Name: "seqmap", Type: &TypeProto{Sequence: &SequenceType{Elem: &TypeProto{Map: &MapType{
					KeyType: ElemString, Value: &TypeProto{Tensor: &TensorType{ElemType: ElemFloat}},
				}}}}},
				{Name: "opt", Type: &TypeProto{Optional: &OptionalType{Elem: &TypeProto{Tensor: &TensorType{ElemType: ElemInt64, Shape: []Dim{DimValue(1)}}}}}},
				{Name: "sparse", Type: &TypeProto{SparseTensor: &TensorType{ElemType: ElemFloat, Shape: []Dim{DimValue(10), DimValue(10)}}}},
				{Name: "emptyseq", Type: &TypeProto{Sequence: &SequenceType{}}},
				{Name: "emptymap", Type: &TypeProto{Map: &MapType{KeyType: ElemInt64}}},
				{Name: "emptyopt", Type: &TypeProto{Optional: &OptionalType{}}},
			},
			ValueInfo: []ValueInfo{{Name: "z", Type: &TypeProto{Tensor: &TensorType{ElemType: ElemBool, Shape: []Dim{DimParam("n")}}}}},
		},
	}
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		m    *Model
	}{
		{"empty", &Model{}},
		{"header only", &Model{IRVersion: 8, ProducerName: "p", OpsetImports: []OpsetImport{{"", 17}}}},
		{"opset version 0", &Model{OpsetImports: []OpsetImport{{"x", 0}}}},
		{"empty graph", &Model{Graph: &Graph{}}},
		{"negative numbers", &Model{IRVersion: -1, ModelVersion: math.MinInt64}},
		{"full", fullModel()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := Marshal(tt.m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Unmarshal(data)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.m) {
				t.Errorf("round trip mismatch:\n got %#v\nwant %#v", got, tt.m)
				if tt.m.Graph != nil && got.Graph != nil {
					diffGraph(t, got.Graph, tt.m.Graph)
				}
			}
			again, err := Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, data) {
				t.Error("re-encoding the decoded model gives different bytes")
			}
		})
	}
}

// diffGraph reports which part of a graph differs, to make failures readable.
func diffGraph(t *testing.T, got, want *Graph) {
	t.Helper()
	for i := range want.Nodes {
		if i < len(got.Nodes) && !reflect.DeepEqual(got.Nodes[i], want.Nodes[i]) {
			for j := range want.Nodes[i].Attributes {
				if j < len(got.Nodes[i].Attributes) && !reflect.DeepEqual(got.Nodes[i].Attributes[j], want.Nodes[i].Attributes[j]) {
					t.Errorf("node %d attribute %d:\n got %#v\nwant %#v", i, j, got.Nodes[i].Attributes[j], want.Nodes[i].Attributes[j])
				}
			}
		}
	}
	for i := range want.Initializers {
		if i < len(got.Initializers) && !reflect.DeepEqual(got.Initializers[i], want.Initializers[i]) {
			t.Errorf("initializer %d:\n got %#v\nwant %#v", i, got.Initializers[i], want.Initializers[i])
		}
	}
	for _, l := range []struct {
		name      string
		got, want []ValueInfo
	}{{"input", got.Inputs, want.Inputs}, {"output", got.Outputs, want.Outputs}, {"value_info", got.ValueInfo, want.ValueInfo}} {
		if !reflect.DeepEqual(l.got, l.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", l.name, l.got, l.want)
		}
	}
}

// TestGoldenBytes checks the encoding byte for byte against messages built
// with the field numbers of onnx.proto, and decodes them back.
func TestGoldenBytes(t *testing.T) {
	floatTensorType := msg(1, vint(1, 1)) // TypeProto.tensor_type{elem_type: FLOAT}
	tests := []struct {
		name string
		m    *Model
		want []byte
	}{
		{
			name: "model header",
			m: &Model{
				IRVersion: 8, ProducerName: "p", ProducerVersion: "v", Domain: "d", ModelVersion: 3, DocString: "doc",
				OpsetImports:  []OpsetImport{{"", 17}, {"ai.onnx.ml", 3}},
				MetadataProps: []StringEntry{{"k", "v"}},
			},
			want: cat(vint(1, 8), str(2, "p"), str(3, "v"), str(4, "d"), vint(5, 3), str(6, "doc"),
				msg(8, vint(2, 17)), msg(8, str(1, "ai.onnx.ml"), vint(2, 3)),
				msg(14, str(1, "k"), str(2, "v"))),
		},
		{
			name: "graph and node",
			m: &Model{Graph: &Graph{
				Name: "g", DocString: "gd",
				Nodes: []*Node{{Name: "n", OpType: "Add", Domain: "dom", DocString: "nd",
					Inputs: []string{"a", ""}, Outputs: []string{"c"}}},
				Initializers: []*TensorProto{{Name: "w"}},
				Inputs:       []ValueInfo{{Name: "a", DocString: "ad"}},
				Outputs:      []ValueInfo{{Name: "c"}},
				ValueInfo:    []ValueInfo{{Name: "v"}},
			}},
			want: msg(7,
				msg(1, str(1, "a"), str(1, ""), str(2, "c"), str(3, "n"), str(4, "Add"), str(6, "nd"), str(7, "dom")),
				str(2, "g"),
				msg(5, str(8, "w")),
				str(10, "gd"),
				msg(11, str(1, "a"), str(3, "ad")),
				msg(12, str(1, "c")),
				msg(13, str(1, "v"))),
		},
		{
			name: "attributes",
			m: &Model{Graph: &Graph{Nodes: []*Node{{Attributes: []Attribute{
				{Name: "f", Type: AttrFloat, F: 1.5},
				{Name: "f0", Type: AttrFloat},
				{Name: "i", Type: AttrInt, I: -2},
				{Name: "s", Type: AttrString, S: []byte("x")},
				{Name: "t", Type: AttrTensor, T: &TensorProto{DataType: ElemFloat}},
				{Name: "g", Type: AttrGraph, G: &Graph{Name: "sub"}},
				{Name: "fs", Type: AttrFloats, Floats: []float32{1, 2}},
				{Name: "is", Type: AttrInts, Ints: []int64{3, 4}},
				{Name: "ss", Type: AttrStrings, Strings: [][]byte{[]byte("a"), []byte("b")}},
				{Name: "ts", Type: AttrTensors, Tensors: []*TensorProto{{Name: "t1"}}},
				{Name: "gs", Type: AttrGraphs, Graphs: []*Graph{{Name: "g1"}}},
				{Name: "r", Type: AttrInt, DocString: "doc", RefAttrName: "outer"},
			}}}}},
			want: msg(7, msg(1,
				msg(5, str(1, "f"), fx32(2, 1.5), vint(20, 1)),
				msg(5, str(1, "f0"), fx32(2, 0), vint(20, 1)),
				msg(5, str(1, "i"), sint(3, -2), vint(20, 2)),
				msg(5, str(1, "s"), str(4, "x"), vint(20, 3)),
				msg(5, str(1, "t"), msg(5, vint(2, 1)), vint(20, 4)),
				msg(5, str(1, "g"), msg(6, str(2, "sub")), vint(20, 5)),
				msg(5, str(1, "fs"), fx32(7, 1), fx32(7, 2), vint(20, 6)),
				msg(5, str(1, "is"), vint(8, 3), vint(8, 4), vint(20, 7)),
				msg(5, str(1, "ss"), str(9, "a"), str(9, "b"), vint(20, 8)),
				msg(5, str(1, "ts"), msg(10, str(8, "t1")), vint(20, 9)),
				msg(5, str(1, "gs"), msg(11, str(2, "g1")), vint(20, 10)),
				msg(5, str(1, "r"), vint(3, 0), str(13, "doc"), vint(20, 2), str(21, "outer")),
			)),
		},
		{
			name: "types",
			m: &Model{Graph: &Graph{Inputs: []ValueInfo{
				{Name: "x", Type: &TypeProto{Denotation: "IMAGE", Tensor: &TensorType{ElemType: ElemFloat,
					Shape: []Dim{DimParam("batch"), DimValue(3), DimUnknown(), {Value: 0, Denotation: "d"}}}}},
				{Name: "s", Type: &TypeProto{Tensor: &TensorType{ElemType: ElemFloat, Shape: []Dim{}}}},
				{Name: "q", Type: &TypeProto{Sequence: &SequenceType{Elem: &TypeProto{Map: &MapType{
					KeyType: ElemString, Value: &TypeProto{Tensor: &TensorType{ElemType: ElemFloat}}}}}}},
				{Name: "o", Type: &TypeProto{Optional: &OptionalType{Elem: &TypeProto{Tensor: &TensorType{ElemType: ElemFloat}}}}},
				{Name: "sp", Type: &TypeProto{SparseTensor: &TensorType{ElemType: ElemFloat}}},
			}}},
			want: msg(7,
				msg(11, str(1, "x"), msg(2,
					msg(1, vint(1, 1), msg(2,
						msg(1, str(2, "batch")),
						msg(1, vint(1, 3)),
						msg(1),
						msg(1, vint(1, 0), str(3, "d")))),
					str(6, "IMAGE"))),
				msg(11, str(1, "s"), msg(2, msg(1, vint(1, 1), msg(2)))),
				msg(11, str(1, "q"), msg(2, msg(4, msg(1, msg(5, vint(1, 8), msg(2, floatTensorType)))))),
				msg(11, str(1, "o"), msg(2, msg(9, msg(1, floatTensorType)))),
				msg(11, str(1, "sp"), msg(2, msg(8, vint(1, 1)))),
			),
		},
		{
			name: "tensor",
			m: &Model{Graph: &Graph{Initializers: []*TensorProto{{
				Dims: []int64{2, 3}, DataType: ElemFloat, Segment: &Segment{Begin: 1, End: 2},
				FloatData: []float32{1, -1}, Int32Data: []int32{-1, 5}, StringData: [][]byte{[]byte("s")},
				Int64Data: []int64{7}, Name: "w", RawData: []byte{9}, DoubleData: []float64{0.5},
				Uint64Data: []uint64{300}, DocString: "td",
				ExternalData: []StringEntry{{"location", "f"}}, DataLocation: LocationExternal,
			}}}},
			want: msg(7, msg(5,
				vint(1, 2), vint(1, 3), vint(2, 1),
				msg(3, vint(1, 1), vint(2, 2)),
				lenb(4, packedF32(1, -1)),
				lenb(5, packedVarints(math.MaxUint64, 5)),
				str(6, "s"),
				lenb(7, packedVarints(7)),
				str(8, "w"),
				lenb(9, []byte{9}),
				lenb(10, packedF64(0.5)),
				lenb(11, packedVarints(300)),
				str(12, "td"),
				msg(13, str(1, "location"), str(2, "f")),
				vint(14, 1))),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Marshal(tt.m)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Errorf("Marshal:\n got %x\nwant %x", got, tt.want)
			}
			m, err := Unmarshal(tt.want)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m, tt.m) {
				t.Errorf("Unmarshal:\n got %#v\nwant %#v", m, tt.m)
			}
		})
	}
}

func TestPackedAndUnpacked(t *testing.T) {
	inGraph := func(tensor []byte) []byte { return msg(7, msg(5, tensor)) }
	inAttr := func(attr []byte) []byte { return msg(7, msg(1, msg(5, attr))) }
	tests := []struct {
		name     string
		packed   []byte
		unpacked []byte
		check    func(*Model) any
		want     any
	}{
		{
			name:     "float_data",
			packed:   inGraph(lenb(4, packedF32(1, 2.5, -3))),
			unpacked: inGraph(cat(fx32(4, 1), fx32(4, 2.5), fx32(4, -3))),
			check:    func(m *Model) any { return m.Graph.Initializers[0].FloatData },
			want:     []float32{1, 2.5, -3},
		},
		{
			name:     "int32_data",
			packed:   inGraph(lenb(5, packedVarints(1, uint64(math.MaxUint64), 300))),
			unpacked: inGraph(cat(vint(5, 1), sint(5, -1), vint(5, 300))),
			check:    func(m *Model) any { return m.Graph.Initializers[0].Int32Data },
			want:     []int32{1, -1, 300},
		},
		{
			name:     "int64_data",
			packed:   inGraph(lenb(7, packedVarints(1<<40, uint64(math.MaxUint64)))),
			unpacked: inGraph(cat(vint(7, 1<<40), sint(7, -1))),
			check:    func(m *Model) any { return m.Graph.Initializers[0].Int64Data },
			want:     []int64{1 << 40, -1},
		},
		{
			name:     "double_data",
			packed:   inGraph(lenb(10, packedF64(0.5, -2))),
			unpacked: inGraph(cat(fx64(10, math.Float64bits(0.5)), fx64(10, math.Float64bits(-2)))),
			check:    func(m *Model) any { return m.Graph.Initializers[0].DoubleData },
			want:     []float64{0.5, -2},
		},
		{
			name:     "uint64_data",
			packed:   inGraph(lenb(11, packedVarints(math.MaxUint64, 0))),
			unpacked: inGraph(cat(vint(11, math.MaxUint64), vint(11, 0))),
			check:    func(m *Model) any { return m.Graph.Initializers[0].Uint64Data },
			want:     []uint64{math.MaxUint64, 0},
		},
		{
			name:     "dims",
			packed:   inGraph(lenb(1, packedVarints(1, 3, 224))),
			unpacked: inGraph(cat(vint(1, 1), vint(1, 3), vint(1, 224))),
			check:    func(m *Model) any { return m.Graph.Initializers[0].Dims },
			want:     []int64{1, 3, 224},
		},
		{
			name:     "attribute floats",
			packed:   inAttr(lenb(7, packedF32(0.25, 4))),
			unpacked: inAttr(cat(fx32(7, 0.25), fx32(7, 4))),
			check:    func(m *Model) any { return m.Graph.Nodes[0].Attributes[0].Floats },
			want:     []float32{0.25, 4},
		},
		{
			name:     "attribute ints",
			packed:   inAttr(lenb(8, packedVarints(2, 3, uint64(math.MaxUint64)))),
			unpacked: inAttr(cat(vint(8, 2), vint(8, 3), sint(8, -1))),
			check:    func(m *Model) any { return m.Graph.Nodes[0].Attributes[0].Ints },
			want:     []int64{2, 3, -1},
		},
		{
			// A mix of packed and unpacked chunks concatenates, as in protobuf.
			name:     "mixed chunks",
			packed:   inGraph(cat(lenb(4, packedF32(1)), fx32(4, 2.5), lenb(4, packedF32(-3)))),
			unpacked: inGraph(cat(fx32(4, 1), fx32(4, 2.5), fx32(4, -3))),
			check:    func(m *Model) any { return m.Graph.Initializers[0].FloatData },
			want:     []float32{1, 2.5, -3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, in := range []struct {
				form string
				data []byte
			}{{"packed", tt.packed}, {"unpacked", tt.unpacked}} {
				m, err := Unmarshal(in.data)
				if err != nil {
					t.Fatalf("%s: %v", in.form, err)
				}
				if got := tt.check(m); !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: got %v, want %v", in.form, got, tt.want)
				}
			}
		})
	}
}

// TestUnknownFieldsSkipped inserts fields of every wire type, with numbers
// this package does not know, into every message level.
func TestUnknownFieldsSkipped(t *testing.T) {
	junk := cat(vint(999, 5), fx32(998, 1), fx64(997, 2), str(996, "junk"), group(995, vint(1, 1)), msg(994, str(1, "x")))
	// Known field numbers with a wire type that does not match are skipped
	// too (protobuf treats them as unknown fields).
	mismatched := cat(str(1, "not a varint"), vint(2, 1))
	with := cat(junk, vint(1, 8), mismatched, msg(7, junk,
		msg(1, junk, str(4, "Relu"), vint(3, 1), msg(5, junk, str(1, "alpha"), vint(20, 1), fx32(2, 0.5))),
		msg(5, junk, str(8, "w"), vint(2, 1), lenb(9, []byte{0, 0, 128, 63}), str(14, "x")),
		msg(11, junk, str(1, "x"), msg(2, junk, msg(1, junk, vint(1, 1), msg(2, junk, msg(1, junk, str(2, "batch"))))))),
		msg(8, junk, vint(2, 17)), msg(14, junk, str(1, "k"), str(2, "v")))
	want := &Model{
		IRVersion: 8,
		Graph: &Graph{
			Nodes:        []*Node{{OpType: "Relu", Attributes: []Attribute{{Name: "alpha", Type: AttrFloat, F: 0.5}}}},
			Initializers: []*TensorProto{{Name: "w", DataType: ElemFloat, RawData: []byte{0, 0, 128, 63}}},
			Inputs:       []ValueInfo{{Name: "x", Type: &TypeProto{Tensor: &TensorType{ElemType: ElemFloat, Shape: []Dim{DimParam("batch")}}}}},
		},
		OpsetImports:  []OpsetImport{{"", 17}},
		MetadataProps: []StringEntry{{"k", "v"}},
	}
	got, err := Unmarshal(with)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
}

// TestMergeSemantics checks protobuf's rules for repeated occurrences of
// singular fields: scalars take the last value, messages merge, and a oneof
// keeps the last member.
func TestMergeSemantics(t *testing.T) {
	data := cat(vint(1, 7), vint(1, 8),
		msg(7, str(2, "first")), msg(7, str(2, "second"), msg(1, str(4, "Relu"))),
		msg(7, msg(11, str(1, "x"),
			msg(2, msg(1, vint(1, 1))),
			msg(2, msg(4, msg(1, msg(1, vint(1, 7))))), // sequence replaces tensor
			msg(2, str(6, "den")))),
		msg(7, msg(11, str(1, "d"), msg(2, msg(1, msg(2, msg(1, vint(1, 3), str(2, "n")), msg(1, str(2, "m"), vint(1, 4))))))))
	m, err := Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if m.IRVersion != 8 {
		t.Errorf("IRVersion = %d, want 8", m.IRVersion)
	}
	if m.Graph.Name != "second" || len(m.Graph.Nodes) != 1 {
		t.Errorf("graph did not merge: %#v", m.Graph)
	}
	x := m.Graph.Inputs[0].Type
	if x.Tensor != nil || x.Sequence == nil || x.Denotation != "den" || x.String() != "seq(int64)" {
		t.Errorf("oneof: got %#v (%s)", x, x)
	}
	d := m.Graph.Inputs[1].Type.Tensor.Shape
	if want := []Dim{DimParam("n"), DimValue(4)}; !reflect.DeepEqual(d, want) {
		t.Errorf("dim oneof: got %v, want %v", d, want)
	}
}

func TestMarshalDeterministic(t *testing.T) {
	a, err := Marshal(fullModel())
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		b, err := Marshal(fullModel())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatal("Marshal is not deterministic")
		}
	}
}

func TestMarshalErrors(t *testing.T) {
	cyclic := &Graph{Name: "loop"}
	cyclic.Nodes = []*Node{{OpType: "If", Attributes: []Attribute{{Name: "then_branch", Type: AttrGraph, G: cyclic}}}}
	deepType := &TypeProto{Tensor: &TensorType{ElemType: ElemFloat}}
	for range 200 {
		deepType = &TypeProto{Sequence: &SequenceType{Elem: deepType}}
	}
	tests := []struct {
		name string
		m    *Model
	}{
		{"nil model", nil},
		{"nil node", &Model{Graph: &Graph{Nodes: []*Node{nil}}}},
		{"nil initializer", &Model{Graph: &Graph{Initializers: []*TensorProto{nil}}}},
		{"nil attribute tensor", &Model{Graph: &Graph{Nodes: []*Node{{Attributes: []Attribute{{Tensors: []*TensorProto{nil}}}}}}}},
		{"nil attribute graph", &Model{Graph: &Graph{Nodes: []*Node{{Attributes: []Attribute{{Graphs: []*Graph{nil}}}}}}}},
		{"two oneof members", &Model{Graph: &Graph{Inputs: []ValueInfo{{Name: "x", Type: &TypeProto{
			Tensor: &TensorType{}, Sequence: &SequenceType{}}}}}}},
		{"cyclic graph", &Model{Graph: cyclic}},
		{"deep type", &Model{Graph: &Graph{Inputs: []ValueInfo{{Name: "x", Type: deepType}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Marshal(tt.m); err == nil {
				t.Error("Marshal succeeded, want an error")
			}
		})
	}
}

func TestReadWriteFile(t *testing.T) {
	path := t.TempDir() + "/m.onnx"
	want := fullModel()
	if err := WriteFile(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("ReadFile(WriteFile(m)) != m")
	}
	if _, err := ReadFile(t.TempDir() + "/missing.onnx"); err == nil {
		t.Error("ReadFile of a missing file succeeded")
	}
}

func TestUnmarshalDoesNotAlias(t *testing.T) {
	data, err := Marshal(fullModel())
	if err != nil {
		t.Fatal(err)
	}
	m, err := Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range data {
		data[i] = 0xff
	}
	if !reflect.DeepEqual(m, fullModel()) {
		t.Error("decoded model changed when the input buffer was overwritten")
	}
}
