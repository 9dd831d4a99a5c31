package seq

import (
	"math"
	"strings"
	"testing"
)

// leastMaxIDLength is config.MinSequenceIDLength, the least
// sequence.max_id_length.
const leastMaxIDLength = 48

// TestIDs: ids of one process count up; two processes (two workers, or a
// worker and the one started in its place) never give the same id; the
// longest id fits the least sequence.max_id_length.
func TestIDs(t *testing.T) {
	a, b := NewIDs("ws-"), NewIDs("ws-")
	seen := map[string]bool{}
	for range 1000 {
		for _, id := range []string{a.Next(), b.Next()} {
			if seen[id] || !strings.HasPrefix(id, "ws-") {
				t.Fatalf("id %q repeated, or without its prefix", id)
			}
			seen[id] = true
		}
	}
	g := NewIDs("grpc-stream-")
	g.n.Store(math.MaxUint64 - 1)
	if id := g.Next(); len(id) > leastMaxIDLength {
		t.Errorf("id %q is %d bytes, over the least sequence.max_id_length, %d", id, len(id), leastMaxIDLength)
	}
}
