package tensor

import (
	"sort"
	"sync"
	"unsafe"
)

// Element storage of large tensors is recycled through size-classed pools.
// A request's input and output tensors are its largest allocations: a
// 1 MiB JSON body of small integers is a 4 MiB int64 tensor in and another
// out. Left to the garbage collector, each request's tensors become garbage
// that the heap is allowed to double over (GOGC 100) before it is
// collected; recycled, they are reused by the next request at the size they
// already have in memory.
//
// Storage below MinPooled bytes is allocated and collected as usual. Above
// it, sizes are rounded up to one of four classes per power of two (at most
// 25 % unused), so a buffer returned by one request fits the next request
// of about the same size.

// MinPooled is the least storage size, in bytes, that is pooled.
const MinPooled = 64 << 10

// maxPooled is the largest pooled storage size in bytes.
const maxPooled = 1 << 30

// classSizes lists the pooled storage sizes, ascending: 2^k × (1, 1¼, 1½,
// 1¾) from MinPooled to maxPooled.
var classSizes = func() []int {
	var s []int
	for size := MinPooled; size < maxPooled; size *= 2 {
		for q := 4; q < 8; q++ {
			s = append(s, size/4*q)
		}
	}
	return append(s, maxPooled)
}()

var classPools = make([]sync.Pool, len(classSizes))

// classFor is the index of the smallest class of at least n bytes, or -1
// when n is outside the pooled range.
func classFor(n int) int {
	if n < MinPooled || n > maxPooled {
		return -1
	}
	return sort.SearchInts(classSizes, n)
}

// classOf is the index of the class of exactly n bytes, or -1.
func classOf(n int) int {
	i := classFor(n)
	if i < 0 || classSizes[i] != n {
		return -1
	}
	return i
}

// Number is an element type whose storage holds no pointers: the numeric
// types and bool, the only ones pooled.
type Number interface {
	~float32 | ~float64 | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint8 | ~uint16 | ~uint32 | ~uint64 | ~bool
}

// MakeSlice returns a slice of n elements. Storage of MinPooled bytes or
// more comes from the pools (its capacity rounded up to a class size) and
// its contents are unspecified: the caller writes every element, or
// reslices to [:0] and appends. Smaller slices are made as usual, zeroed.
// Give the slice back with PutSlice once nothing refers to it.
func MakeSlice[T Number](n int) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if size == 0 || n <= 0 || n > maxPooled/size {
		return make([]T, n)
	}
	c := classFor(n * size)
	if c < 0 {
		return make([]T, n)
	}
	var words []uint64
	if p, _ := classPools[c].Get().(*[]uint64); p != nil {
		words = *p
	} else {
		// uint64 words: storage aligned for every element type.
		words = make([]uint64, classSizes[c]/8)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(words))), classSizes[c]/size)[:n]
}

// PutSlice gives s's storage back to the pools when it came from
// MakeSlice (its capacity is a class size), and reports whether it did;
// other slices are left to the garbage collector. s, and every slice
// sharing its storage, must not be used afterwards.
func PutSlice[T Number](s []T) bool {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if size == 0 || cap(s) == 0 {
		return false
	}
	bytes := cap(s) * size
	c := classOf(bytes)
	if c < 0 {
		return false
	}
	words := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(s[:1]))), bytes/8)
	classPools[c].Put(&words)
	return true
}

// Recycle gives t's element storage back to the pools (see PutSlice) and
// then clears t's data; small storage is left as it is. The caller vouches that t alone refers to that storage
// (a tensor a decoder made for one request, say) and that neither t's data
// nor any view of it is used afterwards. Strings are never pooled; a nil t
// is skipped.
func (t *Tensor) Recycle() {
	if t == nil {
		return
	}
	var pooled bool
	switch d := t.Data.(type) {
	case []float32:
		pooled = PutSlice(d)
	case []float64:
		pooled = PutSlice(d)
	case []int8:
		pooled = PutSlice(d)
	case []int16:
		pooled = PutSlice(d)
	case []int32:
		pooled = PutSlice(d)
	case []int64:
		pooled = PutSlice(d)
	case []uint8:
		pooled = PutSlice(d)
	case []uint16:
		pooled = PutSlice(d)
	case []uint32:
		pooled = PutSlice(d)
	case []uint64:
		pooled = PutSlice(d)
	case []bool:
		pooled = PutSlice(d)
	}
	if pooled {
		t.Data = nil
	}
}

// RecycleAll recycles every tensor of ts, on the same terms as Recycle.
func RecycleAll(ts []*Tensor) {
	for _, t := range ts {
		t.Recycle()
	}
}
