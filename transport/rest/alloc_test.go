//go:build !race

package rest

import "testing"

// The race detector makes sync.Pool drop items at random, so allocation
// counts only mean something without it: make test runs this file in a
// separate run without -race.

func TestDecodeAllocations(t *testing.T) {
	// The result slice, the tensor, its shape and its data.
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
