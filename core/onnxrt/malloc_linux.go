//go:build linux && cgo

package onnxrt

/*
#include <stdlib.h>
#include <malloc.h>

static int svc_set_mmap_threshold(int bytes) {
#ifdef M_MMAP_THRESHOLD
	return mallopt(M_MMAP_THRESHOLD, bytes);
#else
	return 0;
#endif
}

// svc_mmapped_on_reuse allocates a block of n bytes, frees it and
// allocates one again: 1 when the second block is mapped on its own
// (mallinfo2's hblks counts such blocks), 0 when it came from the heap,
// -1 when the C library cannot tell.
static int svc_mmapped_on_reuse(size_t n) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
	void *a = malloc(n);
	if (!a) return -1;
	free(a);
	size_t before = mallinfo2().hblks;
	void *b = malloc(n);
	if (!b) return -1;
	int mapped = mallinfo2().hblks > before;
	free(b);
	return mapped;
#else
	return -1;
#endif
}
*/
import "C"

import (
	"fmt"
	"os"
)

// MallocMmapThreshold is the block size from which the C library's malloc
// (glibc) maps a block of its own, returned to the system when freed.
// glibc starts at 128 KiB but raises the threshold to the size of every
// mapped block freed (up to 32 MiB), after which blocks that large come
// from its per-thread heaps and stay there. ONNX Runtime allocates some
// per-request data with malloc, outside its arena: a string tensor's
// std::string array, for one (32 bytes per element, 4 MB for 125,000
// strings). With the threshold free to rise, four concurrent requests of
// 125,000 strings left 250-270 MiB over the idle RSS; fixed at 1 MiB,
// 97-107 MiB, at no measurable cost in throughput (make bench's memory
// rows; BENCHMARKS.md).
const MallocMmapThreshold = 1 << 20

// fixMallocThreshold sets MallocMmapThreshold unless the environment sets
// glibc's own MALLOC_MMAP_THRESHOLD_, which then stays in force.
func fixMallocThreshold() error {
	if _, ok := os.LookupEnv("MALLOC_MMAP_THRESHOLD_"); ok {
		return nil
	}
	if C.svc_set_mmap_threshold(C.int(MallocMmapThreshold)) != 1 {
		return fmt.Errorf("mallopt(M_MMAP_THRESHOLD) refused")
	}
	return nil
}

// mmappedOnReuse reports whether a block of n bytes, allocated again right
// after one was freed, is mapped on its own (ok is false when the C
// library cannot tell).
func mmappedOnReuse(n int) (mapped, ok bool) {
	r := C.svc_mmapped_on_reuse(C.size_t(n))
	return r == 1, r >= 0
}
