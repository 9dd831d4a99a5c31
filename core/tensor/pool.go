package tensor

import (
	"runtime"
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
//
// Each class is one free list, shared by every goroutine, rather than a
// sync.Pool: a sync.Pool keeps a buffer per processor that goroutines on
// other processors cannot take, so under load it makes more buffers than
// are ever in use at once (four concurrent requests of 500,000 int64s made
// 11 buffers of 4 MiB where 6 to 8 are in use at most). A free list makes a
// new buffer only when every buffer of the class is in use. What it keeps
// follows the load: at each garbage collection, each class drops as many
// buffers as stayed unused since the previous one (its low-water mark), so
// a class that is no longer used is empty after two collections, and Trim
// empties every class (the model's idle reclaimer calls it).

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

// freeList holds the buffers of one class that are not in use, the most
// recently returned last.
type freeList struct {
	mu   sync.Mutex
	bufs [][]uint64
	// low is the fewest buffers the list held since the last trim: that
	// many were not needed in the meantime.
	low int
}

var classPools = make([]freeList, len(classSizes))

func (l *freeList) get() []uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.bufs)
	if n == 0 {
		return nil
	}
	b := l.bufs[n-1]
	l.bufs[n-1] = nil
	l.bufs = l.bufs[:n-1]
	l.low = min(l.low, n-1)
	return b
}

func (l *freeList) put(b []uint64) {
	l.mu.Lock()
	l.bufs = append(l.bufs, b)
	l.mu.Unlock()
}

// trim drops the buffers that went unused since the last trim (all of them
// when all is set), oldest first; the garbage collector takes them.
func (l *freeList) trim(all bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	drop := min(l.low, len(l.bufs))
	if all {
		drop = len(l.bufs)
	}
	if drop > 0 {
		n := copy(l.bufs, l.bufs[drop:])
		clear(l.bufs[n:])
		l.bufs = l.bufs[:n]
	}
	l.low = len(l.bufs)
}

// Trim empties the pools: their buffers become garbage, for the next
// collection to free. The idle reclaimer calls it before collecting.
func Trim() {
	for i := range classPools {
		classPools[i].trim(true)
	}
}

// Retained is the number of buffers the pools hold and their bytes.
func Retained() (buffers, bytes int) {
	for i := range classPools {
		l := &classPools[i]
		l.mu.Lock()
		buffers += len(l.bufs)
		bytes += len(l.bufs) * classSizes[i]
		l.mu.Unlock()
	}
	return buffers, bytes
}

// gcSentinel is garbage from birth; its cleanup, run after the collection
// that frees it, trims the pools and makes the next sentinel, so the pools
// are trimmed once per garbage collection for the life of the process.
type gcSentinel struct {
	_ *byte // a pointer, so the object is never in a tiny block
	_ [8]byte
}

func armTrim() {
	s := new(gcSentinel)
	runtime.AddCleanup(s, func(struct{}) { trimUnused(); armTrim() }, struct{}{})
}

func trimUnused() {
	for i := range classPools {
		classPools[i].trim(false)
	}
}

func init() { armTrim() }

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
	words := classPools[c].get()
	if words == nil {
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
	classPools[c].put(words)
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
