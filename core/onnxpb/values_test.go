package onnxpb

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestElemTypeName(t *testing.T) {
	tests := []struct {
		typ  int32
		name string
		size int
	}{
		{ElemFloat, "float32", 4},
		{ElemUint8, "uint8", 1},
		{ElemInt8, "int8", 1},
		{ElemUint16, "uint16", 2},
		{ElemInt16, "int16", 2},
		{ElemInt32, "int32", 4},
		{ElemInt64, "int64", 8},
		{ElemString, "string", 0},
		{ElemBool, "bool", 1},
		{ElemFloat16, "float16", 2},
		{ElemDouble, "float64", 8},
		{ElemUint32, "uint32", 4},
		{ElemUint64, "uint64", 8},
		{ElemComplex64, "complex64", 8},
		{ElemComplex128, "complex128", 16},
		{ElemBFloat16, "bfloat16", 2},
		{ElemUndefined, "undefined", 0},
		{99, "unknown(99)", 0},
		{-1, "unknown(-1)", 0},
	}
	for _, tt := range tests {
		if got := ElemTypeName(tt.typ); got != tt.name {
			t.Errorf("ElemTypeName(%d) = %q, want %q", tt.typ, got, tt.name)
		}
		if got := ElemTypeSize(tt.typ); got != tt.size {
			t.Errorf("ElemTypeSize(%d) = %d, want %d", tt.typ, got, tt.size)
		}
	}
	// The constants are the TensorProto.DataType numbers of onnx.proto.
	nums := map[int32]int32{ElemFloat: 1, ElemUint8: 2, ElemInt8: 3, ElemUint16: 4, ElemInt16: 5, ElemInt32: 6,
		ElemInt64: 7, ElemString: 8, ElemBool: 9, ElemFloat16: 10, ElemDouble: 11, ElemUint32: 12, ElemUint64: 13, ElemBFloat16: 16}
	for c, n := range nums {
		if c != n {
			t.Errorf("%s = %d, want %d", ElemTypeName(c), c, n)
		}
	}
}

func TestTypeString(t *testing.T) {
	f32 := &TypeProto{Tensor: &TensorType{ElemType: ElemFloat}}
	tests := []struct {
		typ  *TypeProto
		want string
	}{
		{nil, "unknown"},
		{&TypeProto{}, "unknown"},
		{f32, "float32"},
		{&TypeProto{Tensor: &TensorType{ElemType: ElemString, Shape: []Dim{}}}, "string"},
		{&TypeProto{Sequence: &SequenceType{Elem: &TypeProto{Map: &MapType{KeyType: ElemString, Value: f32}}}}, "seq(map(string,float32))"},
		{&TypeProto{Sequence: &SequenceType{Elem: &TypeProto{Map: &MapType{KeyType: ElemInt64, Value: f32}}}}, "seq(map(int64,float32))"},
		{&TypeProto{Sequence: &SequenceType{}}, "seq(unknown)"},
		{&TypeProto{Optional: &OptionalType{Elem: f32}}, "optional(float32)"},
		{&TypeProto{SparseTensor: &TensorType{ElemType: ElemInt64}}, "sparse_tensor(int64)"},
	}
	for _, tt := range tests {
		if got := tt.typ.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}

	shapes := []struct {
		tt   *TensorType
		want string
	}{
		{nil, "?"},
		{&TensorType{}, "?"},
		{&TensorType{Shape: []Dim{}}, "[]"},
		{&TensorType{Shape: []Dim{DimParam("batch"), DimValue(4), DimUnknown(), DimValue(0)}}, "[batch,4,?,0]"},
	}
	for _, s := range shapes {
		if got := s.tt.ShapeString(); got != s.want {
			t.Errorf("ShapeString() = %q, want %q", got, s.want)
		}
	}
	if !DimValue(3).IsFixed() || DimParam("n").IsFixed() || DimUnknown().IsFixed() {
		t.Error("IsFixed is wrong")
	}
}

func TestFloat16(t *testing.T) {
	tests := []struct {
		bits uint16
		want float32
	}{
		{0x0000, 0},
		{0x3c00, 1},
		{0xc000, -2},
		{0x4000, 2},
		{0x3555, 0.333251953125},
		{0x7bff, 65504},
		{0x0400, 1.0 / 16384},         // smallest normal
		{0x0001, 1.0 / (1 << 24)},     // smallest subnormal
		{0x83ff, -1023.0 / (1 << 24)}, // largest negative subnormal
		{0x7c00, float32(math.Inf(1))},
		{0xfc00, float32(math.Inf(-1))},
	}
	for _, tt := range tests {
		if got := Float16(tt.bits).Float32(); got != tt.want {
			t.Errorf("Float16(%#04x) = %v, want %v", tt.bits, got, tt.want)
		}
	}
	if v := Float16(0x7e00).Float32(); !math.IsNaN(float64(v)) {
		t.Errorf("Float16 NaN = %v", v)
	}
	if v := Float16(0x8000).Float32(); v != 0 || !math.Signbit(float64(v)) {
		t.Errorf("Float16 -0 = %v", v)
	}
	for bits, want := range map[uint16]float32{0x3f80: 1, 0xc000: -2, 0x4049: 3.140625, 0x0000: 0} {
		if got := BFloat16(bits).Float32(); got != want {
			t.Errorf("BFloat16(%#04x) = %v, want %v", bits, got, want)
		}
	}
}

func TestValues(t *testing.T) {
	tests := []struct {
		name   string
		tensor *TensorProto
		want   any
	}{
		{"float raw", &TensorProto{DataType: ElemFloat, Dims: []int64{2}, RawData: []byte{0, 0, 128, 63, 0, 0, 0, 192}}, []float32{1, -2}},
		{"float typed", &TensorProto{DataType: ElemFloat, Dims: []int64{2}, FloatData: []float32{1, -2}}, []float32{1, -2}},
		{"float scalar", &TensorProto{DataType: ElemFloat, FloatData: []float32{0.5}}, []float32{0.5}},
		{"double raw", &TensorProto{DataType: ElemDouble, Dims: []int64{1}, RawData: []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}}, []float64{1}},
		{"double typed", &TensorProto{DataType: ElemDouble, Dims: []int64{1}, DoubleData: []float64{math.Pi}}, []float64{math.Pi}},
		{"int8 raw", &TensorProto{DataType: ElemInt8, Dims: []int64{2}, RawData: []byte{0x80, 0x7f}}, []int8{-128, 127}},
		{"int8 typed", &TensorProto{DataType: ElemInt8, Dims: []int64{2}, Int32Data: []int32{-128, 127}}, []int8{-128, 127}},
		{"uint8 raw", &TensorProto{DataType: ElemUint8, Dims: []int64{2}, RawData: []byte{0, 255}}, []uint8{0, 255}},
		{"uint8 typed", &TensorProto{DataType: ElemUint8, Dims: []int64{2}, Int32Data: []int32{0, 255}}, []uint8{0, 255}},
		{"int16 raw", &TensorProto{DataType: ElemInt16, Dims: []int64{1}, RawData: []byte{0x00, 0x80}}, []int16{-32768}},
		{"int16 typed", &TensorProto{DataType: ElemInt16, Dims: []int64{1}, Int32Data: []int32{-32768}}, []int16{-32768}},
		{"uint16 raw", &TensorProto{DataType: ElemUint16, Dims: []int64{1}, RawData: []byte{0xff, 0xff}}, []uint16{65535}},
		{"uint16 typed", &TensorProto{DataType: ElemUint16, Dims: []int64{1}, Int32Data: []int32{65535}}, []uint16{65535}},
		{"int32 raw", &TensorProto{DataType: ElemInt32, Dims: []int64{2}, RawData: []byte{0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0}}, []int32{-1, 1}},
		{"int32 typed", &TensorProto{DataType: ElemInt32, Dims: []int64{2}, Int32Data: []int32{-1, 1}}, []int32{-1, 1}},
		{"uint32 raw", &TensorProto{DataType: ElemUint32, Dims: []int64{1}, RawData: []byte{0xff, 0xff, 0xff, 0xff}}, []uint32{math.MaxUint32}},
		{"uint32 typed", &TensorProto{DataType: ElemUint32, Dims: []int64{1}, Uint64Data: []uint64{math.MaxUint32}}, []uint32{math.MaxUint32}},
		{"int64 raw", &TensorProto{DataType: ElemInt64, Dims: []int64{1}, RawData: []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}, []int64{-2}},
		{"int64 typed", &TensorProto{DataType: ElemInt64, Dims: []int64{2}, Int64Data: []int64{-2, 1 << 40}}, []int64{-2, 1 << 40}},
		{"uint64 raw", &TensorProto{DataType: ElemUint64, Dims: []int64{1}, RawData: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}, []uint64{math.MaxUint64}},
		{"uint64 typed", &TensorProto{DataType: ElemUint64, Dims: []int64{1}, Uint64Data: []uint64{math.MaxUint64}}, []uint64{math.MaxUint64}},
		{"bool raw", &TensorProto{DataType: ElemBool, Dims: []int64{3}, RawData: []byte{1, 0, 2}}, []bool{true, false, true}},
		{"bool typed", &TensorProto{DataType: ElemBool, Dims: []int64{2}, Int32Data: []int32{0, 1}}, []bool{false, true}},
		{"float16 raw", &TensorProto{DataType: ElemFloat16, Dims: []int64{1}, RawData: []byte{0x00, 0x3c}}, []Float16{0x3c00}},
		{"float16 typed", &TensorProto{DataType: ElemFloat16, Dims: []int64{1}, Int32Data: []int32{0x3c00}}, []Float16{0x3c00}},
		{"bfloat16 raw", &TensorProto{DataType: ElemBFloat16, Dims: []int64{1}, RawData: []byte{0x80, 0x3f}}, []BFloat16{0x3f80}},
		{"bfloat16 typed", &TensorProto{DataType: ElemBFloat16, Dims: []int64{1}, Int32Data: []int32{0x3f80}}, []BFloat16{0x3f80}},
		{"string", &TensorProto{DataType: ElemString, Dims: []int64{2}, StringData: [][]byte{[]byte("a"), {}}}, []string{"a", ""}},
		{"string scalar", &TensorProto{DataType: ElemString, StringData: [][]byte{[]byte("x")}}, []string{"x"}},
		{"empty tensor", &TensorProto{DataType: ElemFloat, Dims: []int64{0, 3}}, []float32{}},
		{"raw wins over typed", &TensorProto{DataType: ElemInt64, Dims: []int64{1}, RawData: []byte{5, 0, 0, 0, 0, 0, 0, 0}, Int64Data: []int64{9}}, []int64{5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.tensor.Values()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Values() = %#v, want %#v", got, tt.want)
			}
			// NewTensor from the values gives back the same values, and
			// RawBytes matches the raw_data NewTensor wrote.
			nt, err := NewTensor("x", tt.tensor.Dims, got)
			if err != nil {
				t.Fatal(err)
			}
			if nt.DataType != tt.tensor.DataType {
				t.Errorf("NewTensor DataType = %d, want %d", nt.DataType, tt.tensor.DataType)
			}
			again, err := nt.Values()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(again, tt.want) {
				t.Errorf("NewTensor(...).Values() = %#v, want %#v", again, tt.want)
			}
			if tt.tensor.DataType != ElemString {
				raw, err := tt.tensor.RawBytes()
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(raw, nt.RawData) {
					t.Errorf("RawBytes() = %v, want %v", raw, nt.RawData)
				}
			}
		})
	}
}

func TestValuesErrors(t *testing.T) {
	tests := []struct {
		name   string
		tensor *TensorProto
	}{
		{"raw too short", &TensorProto{DataType: ElemFloat, Dims: []int64{2}, RawData: []byte{0, 0, 0, 0}}},
		{"raw too long", &TensorProto{DataType: ElemUint8, Dims: []int64{1}, RawData: []byte{1, 2}}},
		{"typed count", &TensorProto{DataType: ElemFloat, Dims: []int64{3}, FloatData: []float32{1}}},
		{"int32_data count", &TensorProto{DataType: ElemInt8, Dims: []int64{2}, Int32Data: []int32{1}}},
		{"no data", &TensorProto{DataType: ElemInt64, Dims: []int64{1}}},
		{"wrong typed field", &TensorProto{DataType: ElemInt64, Dims: []int64{1}, Int32Data: []int32{1}}},
		{"string count", &TensorProto{DataType: ElemString, Dims: []int64{2}, StringData: [][]byte{[]byte("a")}}},
		{"negative dim", &TensorProto{DataType: ElemFloat, Dims: []int64{-1}}},
		{"overflow", &TensorProto{DataType: ElemFloat, Dims: []int64{1 << 40, 1 << 40}}},
		{"complex", &TensorProto{DataType: ElemComplex64, Dims: []int64{1}, FloatData: []float32{1, 2}}},
		{"undefined", &TensorProto{DataType: ElemUndefined, Dims: []int64{1}}},
		{"unknown type", &TensorProto{DataType: 77, Dims: []int64{1}, RawData: []byte{1}}},
		{"external", &TensorProto{DataType: ElemFloat, Dims: []int64{1}, DataLocation: LocationExternal}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if v, err := tt.tensor.Values(); err == nil {
				t.Errorf("Values() = %v, want an error", v)
			}
			if v, err := tt.tensor.RawBytes(); err == nil {
				t.Errorf("RawBytes() = %v, want an error", v)
			}
		})
	}
	_, err := (&TensorProto{DataType: ElemFloat, DataLocation: LocationExternal}).Values()
	if !errors.Is(err, ErrExternalData) {
		t.Errorf("external tensor: err = %v, want ErrExternalData", err)
	}
}

func TestNewTensorErrors(t *testing.T) {
	tests := []struct {
		name   string
		dims   []int64
		values any
	}{
		{"count", []int64{3}, []float32{1, 2}},
		{"string count", []int64{2}, []string{"a"}},
		{"scalar count", nil, []int64{1, 2}},
		{"unsupported type", []int64{1}, []int{1}},
		{"not a slice", []int64{1}, 1.5},
		{"negative dim", []int64{-2}, []float32{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewTensor("x", tt.dims, tt.values); err == nil {
				t.Error("NewTensor succeeded, want an error")
			}
		})
	}
	// NewTensor copies dims.
	d := []int64{2}
	nt, err := NewTensor("x", d, []float32{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	d[0] = 5
	if nt.Dims[0] != 2 {
		t.Error("NewTensor kept the caller's dims slice")
	}
}

func TestExternal(t *testing.T) {
	dir := t.TempDir()
	// Two float32 tensors back to back: [1, 2] at offset 0 and [3] at 8.
	data := []byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64}
	if err := os.WriteFile(filepath.Join(dir, "w.data"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "v.data"), data[8:], 0o644); err != nil {
		t.Fatal(err)
	}
	ext := func(dims []int64, kv ...string) *TensorProto {
		t := &TensorProto{Name: "w", DataType: ElemFloat, Dims: dims, DataLocation: LocationExternal}
		for i := 0; i+1 < len(kv); i += 2 {
			t.ExternalData = append(t.ExternalData, StringEntry{kv[i], kv[i+1]})
		}
		return t
	}
	ok := []struct {
		name   string
		tensor *TensorProto
		ref    ExternalRef
		want   []float32
	}{
		{"offset and length", ext([]int64{2}, "location", "w.data", "offset", "0", "length", "8"),
			ExternalRef{Location: "w.data", Offset: 0, Length: 8}, []float32{1, 2}},
		{"second tensor", ext([]int64{1}, "location", "w.data", "offset", "8", "length", "4", "checksum", "abc"),
			ExternalRef{Location: "w.data", Offset: 8, Length: 4, Checksum: "abc"}, []float32{3}},
		{"no length reads to the end", ext([]int64{1}, "location", "w.data", "offset", "8"),
			ExternalRef{Location: "w.data", Offset: 8, Length: -1}, []float32{3}},
		{"subdirectory", ext([]int64{1}, "location", "sub/v.data"),
			ExternalRef{Location: "sub/v.data", Length: -1}, []float32{3}},
	}
	for _, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.tensor.IsExternal() {
				t.Fatal("IsExternal() = false")
			}
			ref, err := tt.tensor.External()
			if err != nil {
				t.Fatal(err)
			}
			if ref != tt.ref {
				t.Errorf("External() = %+v, want %+v", ref, tt.ref)
			}
			loaded, err := tt.tensor.LoadExternal(dir)
			if err != nil {
				t.Fatal(err)
			}
			if loaded.IsExternal() || !tt.tensor.IsExternal() {
				t.Error("LoadExternal: want an internal copy and the original unchanged")
			}
			got, err := loaded.Values()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("values = %v, want %v", got, tt.want)
			}
		})
	}
	bad := []struct {
		name   string
		tensor *TensorProto
	}{
		{"no location", ext([]int64{1}, "offset", "0")},
		{"bad offset", ext([]int64{1}, "location", "w.data", "offset", "x")},
		{"negative length", ext([]int64{1}, "location", "w.data", "length", "-4")},
		{"escapes directory", ext([]int64{1}, "location", "../w.data")},
		{"absolute", ext([]int64{1}, "location", filepath.Join(dir, "w.data"))},
		{"backslash", ext([]int64{1}, "location", `sub\v.data`)},
		{"missing file", ext([]int64{1}, "location", "nope.data")},
		{"length mismatch", ext([]int64{2}, "location", "w.data", "length", "4")},
		{"past end of file", ext([]int64{2}, "location", "w.data", "offset", "8", "length", "8")},
		{"short rest of file", ext([]int64{2}, "location", "w.data", "offset", "8")},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			loaded, err := tt.tensor.LoadExternal(dir)
			if err == nil {
				// Some problems only show when decoding the values.
				if _, err = loaded.Values(); err == nil {
					t.Error("LoadExternal + Values succeeded, want an error")
				}
			}
		})
	}
	internal := &TensorProto{DataType: ElemFloat, FloatData: []float32{1}}
	if _, err := internal.External(); err == nil {
		t.Error("External() of an internal tensor succeeded")
	}
	if got, err := internal.LoadExternal(dir); err != nil || got != internal {
		t.Errorf("LoadExternal of an internal tensor = %v, %v; want the tensor itself", got, err)
	}
}
