package tensor

import (
	"testing"
)

func TestDTypeNames(t *testing.T) {
	want := []struct {
		d    DType
		name string
		size int
	}{
		{Float32, "float32", 4}, {Float64, "float64", 8}, {Float16, "float16", 2}, {BFloat16, "bfloat16", 2},
		{Int8, "int8", 1}, {Int16, "int16", 2}, {Int32, "int32", 4}, {Int64, "int64", 8},
		{Uint8, "uint8", 1}, {Uint16, "uint16", 2}, {Uint32, "uint32", 4}, {Uint64, "uint64", 8},
		{Bool, "bool", 1}, {String, "string", 0},
	}
	for _, w := range want {
		if got := w.d.String(); got != w.name {
			t.Errorf("DType(%d).String() = %q, want %q", w.d, got, w.name)
		}
		if got := w.d.Size(); got != w.size {
			t.Errorf("%v.Size() = %d, want %d", w.d, got, w.size)
		}
		if got, ok := ParseDType(w.name); !ok || got != w.d {
			t.Errorf("ParseDType(%q) = %v, %v", w.name, got, ok)
		}
	}
	for _, s := range []string{"", "invalid", "Float32", "float", "int", "double"} {
		if d, ok := ParseDType(s); ok {
			t.Errorf("ParseDType(%q) = %v, true; want false", s, d)
		}
	}
	if Invalid.String() != "invalid" || DType(200).String() != "invalid" || DType(200).Size() != 0 {
		t.Error("invalid dtypes")
	}
}
