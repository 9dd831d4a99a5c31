package core

import (
	"testing"
	"time"
)

// feed runs n runs of each given size through the tuner, alternating
// sizes, with a cost per element that cost(rows) gives (ns). It returns
// the limits seen after each run.
func feed(t *sizeTuner, n int, sizes []int64, cost func(rows int64) float64) []int {
	var seen []int
	for i := 0; i < n; i++ {
		for _, rows := range sizes {
			if rows > int64(t.Limit()) {
				rows = int64(t.Limit())
			}
			const perRow = 1000
			d := time.Duration(cost(rows) * float64(rows*perRow))
			l, _ := t.Observe(rows, rows*perRow, d)
			seen = append(seen, l)
		}
	}
	return seen
}

func TestSizeTunerSettles(t *testing.T) {
	tests := []struct {
		name    string
		maxRows int
		cost    func(rows int64) float64
		want    int
	}{
		// A GPU-like model: every doubling is much cheaper per row.
		{"larger is cheaper", 32, func(r int64) float64 { return 100 / float64(r) }, 32},
		// A CPU model such as PaddleOCR det: merging costs more per row.
		{"larger is dearer", 32, func(r int64) float64 { return 100 + 40*float64(min(r, 2)-1) }, 1},
		// Cheaper up to 8 rows, dearer beyond.
		{"best at 8", 32, func(r int64) float64 {
			if r <= 8 {
				return 100 / float64(r)
			}
			return 100
		}, 8},
		// Cheaper, but by less than the margin: no reason to merge more.
		{"within the margin", 32, func(r int64) float64 { return 100 - float64(r)/2 }, 2},
		{"limit not a power of two", 12, func(r int64) float64 { return 100 / float64(r) }, 12},
		{"batching of one row", 1, func(r int64) float64 { return 100 / float64(r) }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tu := newSizeTuner(tt.maxRows)
			// Runs of one row and of the whole limit, as a loaded batcher
			// makes them.
			feed(tu, 200, []int64{1, 1 << 20}, tt.cost)
			if got := tu.Limit(); got != tt.want {
				t.Fatalf("limit = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestSizeTunerProbesAgain(t *testing.T) {
	tu := newSizeTuner(32)
	dearer := func(r int64) float64 { return 100 * float64(r) }
	for i := 0; tu.Limit() != 1; i++ {
		if i == 100 {
			t.Fatalf("limit = %d after dearer merged runs, want 1", tu.Limit())
		}
		feed(tu, 1, []int64{1 + int64(i%2)}, dearer)
	}
	// Runs of one row only, until the probe: the limit goes back to 2
	// once, tunerProbeEvery runs after it moved to 1.
	seen := feed(tu, tunerProbeEvery+10, []int64{1}, dearer)
	probed := -1
	for i, l := range seen {
		if l == 2 {
			probed = i
			break
		}
	}
	if probed != tunerProbeEvery-1 {
		t.Fatalf("probe after %d single runs, want %d", probed+1, tunerProbeEvery)
	}
	// The load changed: merged runs are cheaper now, and the limit grows.
	feed(tu, 200, []int64{1, 1 << 20}, func(r int64) float64 { return 100 / float64(r) })
	if tu.Limit() != 32 {
		t.Fatalf("limit = %d after cheaper merged runs, want 32", tu.Limit())
	}
}

func TestSizeTunerIgnoresEmptyRuns(t *testing.T) {
	tu := newSizeTuner(8)
	for _, r := range []struct {
		rows, elements int64
		d              time.Duration
	}{{0, 10, time.Millisecond}, {1, 0, time.Millisecond}, {2, 10, 0}, {-1, 5, time.Second}} {
		if l, moved := tu.Observe(r.rows, r.elements, r.d); moved || l != 2 {
			t.Fatalf("Observe(%d, %d, %v) = %d, %v", r.rows, r.elements, r.d, l, moved)
		}
	}
}

func TestSizeClassOf(t *testing.T) {
	for rows, want := range map[int64]int{0: 0, 1: 0, 2: 1, 3: 1, 4: 2, 7: 2, 8: 3, 31: 4, 32: 5, 1 << 40: 40} {
		if got := sizeClassOf(rows); got != want {
			t.Errorf("sizeClassOf(%d) = %d, want %d", rows, got, want)
		}
	}
}
