//go:build !race

package rest

import (
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/svc-dev/svc/transport"
)

// The race detector makes sync.Pool drop items at random, so allocation
// counts only mean something without it: make test runs this file in a
// separate run without -race.
//
// Each test measures with the garbage collector off: the counts cover every
// goroutine's allocations, and a collection during the measurement would
// add what the runtime's own cleanups allocate (the tensor pools trim
// themselves after each collection) and drop sync.Pool's items.

func TestDecodeAllocations(t *testing.T) {
	// The result slice, the tensor, its shape and its data.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	limit := 5.0
	body := imageBody(3)
	DecodeRequest(body, imageSpecs) // warm the pool
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := DecodeRequest(body, imageSpecs); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > limit {
		t.Errorf("%v allocations per decode, want <= %v", allocs, limit)
	}
}

// TestHiddenCommasDoNotSizeTensors: commas inside a string size no
// tensor. A body of one string full of commas, for a float32 input, is
// refused without allocating for more values than MaxElements allows.
func TestHiddenCommasDoNotSizeTensors(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const commas = 4 << 20
	h, _ := newTestHandler(t, &fakeRunner{}, Options{Limits: transport.Limits{MaxElements: 1000, MaxBodyBytes: 8 << 20}})
	body := `{"x": [[1, "` + strings.Repeat(",", commas) + `"]]}`
	call(h, http.MethodPost, "/predict", "application/json", body) // warm the body buffers
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rec := call(h, http.MethodPost, "/predict", "application/json", body)
	runtime.ReadMemStats(&after)
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	// A float32 tensor sized by the commas would be 16 MiB.
	if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
		t.Errorf("%d MiB allocated for a %d MiB body", got>>20, len(body)>>20)
	}
}
