package tensor

import (
	"runtime"
	"slices"
	"testing"
	"time"
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

// TestPooledStorageReused checks that a slice given back on one goroutine
// is handed out again on another, for a request of the same class.
func TestPooledStorageReused(t *testing.T) {
	s := MakeSlice[float32](30000)
	p := unsafe.SliceData(s)
	done := make(chan struct{})
	go func() {
		defer close(done)
		PutSlice(s)
	}()
	<-done
	r := MakeSlice[float32](29000)
	defer PutSlice(r)
	if unsafe.SliceData(r) != p {
		t.Fatal("storage given back on another goroutine was not reused")
	}
}

// TestFreeListTrim runs a free list through gets, puts and trims and
// checks what each trim keeps: the buffers that some moment since the
// previous trim needed, the most recently returned.
func TestFreeListTrim(t *testing.T) {
	type op struct {
		put, get int  // buffers given back, then taken
		trim     bool // then a trim of the unused
		all      bool // then Trim's emptying
	}
	tests := []struct {
		name string
		ops  []op
		want []int // the buffers left (by the order they were first put), oldest first
	}{
		{"a first trim keeps what was put", []op{{put: 3, trim: true}}, []int{0, 1, 2}},
		{"unused for a whole period: dropped", []op{{put: 3, trim: true}, {trim: true}}, nil},
		{"all of them in use at one moment: kept", []op{{put: 3, trim: true}, {get: 3}, {put: 3, trim: true}}, []int{0, 1, 2}},
		{"two of three in use at most: the oldest dropped", []op{{put: 3, trim: true}, {get: 2}, {put: 2, trim: true}}, []int{1, 2}},
		{"a period's low point counts, not its end", []op{{put: 3, trim: true}, {get: 3}, {put: 3}, {get: 1}, {put: 1, trim: true}}, []int{0, 1, 2}},
		{"emptied", []op{{put: 3, all: true}}, nil},
		{"emptied, then used again", []op{{put: 2, all: true}, {put: 1, trim: true}, {get: 1}, {put: 1, trim: true}}, []int{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l freeList
			ids := map[*uint64]int{}
			var taken [][]uint64
			for _, o := range tt.ops {
				for range o.put {
					var b []uint64
					if n := len(taken); n > 0 {
						b, taken = taken[n-1], taken[:n-1]
					} else {
						b = make([]uint64, 1)
						ids[&b[0]] = len(ids)
					}
					l.put(b)
				}
				for range o.get {
					b := l.get()
					if b == nil {
						t.Fatal("get found the list empty")
					}
					taken = append(taken, b)
				}
				if o.trim {
					l.trim(false)
				}
				if o.all {
					l.trim(true)
				}
			}
			var got []int
			for _, b := range l.bufs {
				got = append(got, ids[&b[0]])
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("left %v, want %v", got, tt.want)
			}
		})
	}
}

// TestPoolsTrimmedByCollections gives buffers back and lets the garbage
// collector run: the cleanup it triggers trims the pools, so buffers
// nobody takes are gone after a few collections. Trim empties the rest.
func TestPoolsTrimmedByCollections(t *testing.T) {
	const n = 5 * MinPooled / 4 // a class no other test uses
	c := classFor(n)
	held := func() int {
		l := &classPools[c]
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.bufs)
	}
	for _, s := range [][]byte{MakeSlice[byte](n), MakeSlice[byte](n), MakeSlice[byte](n)} {
		PutSlice(s)
	}
	if got := held(); got != 3 {
		t.Fatalf("the class holds %d buffers, want 3", got)
	}
	if buffers, bytes := Retained(); buffers < 3 || bytes < 3*n {
		t.Fatalf("Retained() = %d buffers, %d bytes; want at least 3 of %d bytes", buffers, bytes, n)
	}
	deadline := time.Now().Add(30 * time.Second)
	for held() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d unused buffers still held after 30 s of collections", held())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}

	PutSlice(MakeSlice[byte](n))
	PutSlice(MakeSlice[uint16](MinPooled))
	Trim()
	if buffers, bytes := Retained(); buffers != 0 || bytes != 0 {
		t.Fatalf("after Trim, Retained() = %d buffers, %d bytes", buffers, bytes)
	}
}
