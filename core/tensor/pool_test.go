package tensor

import (
	"testing"
	"unsafe"
)

func TestClassSizes(t *testing.T) {
	for i := 1; i < len(classSizes); i++ {
		if classSizes[i] <= classSizes[i-1] || classSizes[i]%8 != 0 {
			t.Fatalf("class %d: %d after %d", i, classSizes[i], classSizes[i-1])
		}
		// Four classes per power of two: at most 25 % unused.
		if 4*classSizes[i] > 5*classSizes[i-1] {
			t.Fatalf("class %d (%d) is more than 1¼ × class %d (%d)", i, classSizes[i], i-1, classSizes[i-1])
		}
	}
	tests := []struct {
		n    int
		want int // class size, or -1 when not pooled
	}{
		{0, -1},
		{MinPooled - 1, -1},
		{MinPooled, MinPooled},
		{MinPooled + 1, MinPooled / 4 * 5},
		{MinPooled / 4 * 5, MinPooled / 4 * 5},
		{2*MinPooled - 1, 2 * MinPooled},
		{3 << 20, 3 << 20},
		{3<<20 + 1, 7 << 19},
		{maxPooled, maxPooled},
		{maxPooled + 1, -1},
	}
	for _, tt := range tests {
		c := classFor(tt.n)
		got := -1
		if c >= 0 {
			got = classSizes[c]
		}
		if got != tt.want {
			t.Errorf("classFor(%d) is class size %d, want %d", tt.n, got, tt.want)
		}
	}
}

func TestMakeSliceCapacity(t *testing.T) {
	tests := []struct {
		name     string
		make     func(n int) (length, capBytes int)
		n        int
		pooled   bool
		elemSize int
	}{
		{"small float32", func(n int) (int, int) { s := MakeSlice[float32](n); return len(s), cap(s) * 4 }, 100, false, 4},
		{"large float32", func(n int) (int, int) { s := MakeSlice[float32](n); return len(s), cap(s) * 4 }, 50000, true, 4},
		{"large int64", func(n int) (int, int) { s := MakeSlice[int64](n); return len(s), cap(s) * 8 }, 12345, true, 8},
		{"large bool", func(n int) (int, int) { s := MakeSlice[bool](n); return len(s), cap(s) }, 70000, true, 1},
		{"bool under the threshold", func(n int) (int, int) { s := MakeSlice[bool](n); return len(s), cap(s) }, MinPooled - 1, false, 1},
		{"empty", func(n int) (int, int) { s := MakeSlice[uint16](n); return len(s), cap(s) * 2 }, 0, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			length, capBytes := tt.make(tt.n)
			if length != tt.n {
				t.Fatalf("length %d, want %d", length, tt.n)
			}
			if pooled := classOf(capBytes) >= 0; pooled != tt.pooled {
				t.Fatalf("capacity %d bytes: pooled %v, want %v", capBytes, pooled, tt.pooled)
			}
			if !tt.pooled && capBytes != tt.n*tt.elemSize {
				t.Fatalf("capacity %d bytes for %d elements", capBytes, tt.n)
			}
		})
	}
}

func TestPutSliceAndRecycle(t *testing.T) {
	if PutSlice(make([]float32, 1000)) {
		t.Error("a small slice went to the pools")
	}
	if PutSlice(make([]float32, MinPooled/4+1)) {
		t.Error("a slice whose capacity is no class size went to the pools")
	}
	if !PutSlice(MakeSlice[int32](40000)) {
		t.Error("a pooled slice was not taken back")
	}
	var nilSlice []int64
	if PutSlice(nilSlice) {
		t.Error("a nil slice went to the pools")
	}

	// The storage of a pooled slice is 8-byte aligned for every type.
	for range 4 {
		s := MakeSlice[uint8](MinPooled + 3)
		if uintptr(unsafe.Pointer(unsafe.SliceData(s)))%8 != 0 {
			t.Fatal("unaligned storage")
		}
		PutSlice(s)
	}

	big := &Tensor{DType: Float64, Shape: []int64{20000}, Data: MakeSlice[float64](20000)}
	small := &Tensor{DType: Float64, Shape: []int64{2}, Data: []float64{1, 2}}
	strs := &Tensor{DType: String, Shape: []int64{1}, Data: []string{"x"}}
	RecycleAll([]*Tensor{big, nil, small, strs})
	if big.Data != nil {
		t.Error("a recycled tensor kept its data")
	}
	if d, ok := small.Data.([]float64); !ok || d[1] != 2 {
		t.Errorf("a small tensor's data changed: %v", small.Data)
	}
	if d, ok := strs.Data.([]string); !ok || d[0] != "x" {
		t.Errorf("a string tensor's data changed: %v", strs.Data)
	}
}

// TestPooledStorageReused checks that a slice given back is handed out
// again for a request of the same class (sync.Pool may drop items, under
// the race detector on purpose, so it tries a few times).
func TestPooledStorageReused(t *testing.T) {
	for range 50 {
		s := MakeSlice[float32](30000)
		p := unsafe.SliceData(s)
		PutSlice(s)
		r := MakeSlice[float32](29000)
		if unsafe.SliceData(r) == p {
			PutSlice(r)
			return
		}
		PutSlice(r)
	}
	t.Fatal("storage given back was never reused")
}
