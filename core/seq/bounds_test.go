package seq

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

// elsewhere is a Router that holds every sequence in process 2 and counts
// what it is asked to forward.
type elsewhere struct{ forwarded, ends atomic.Int64 }

func (r *elsewhere) Owner(string) (int, bool) { return 2, false }

func (r *elsewhere) Forward(context.Context, int, Step) ([]*tensor.Tensor, error) {
	r.forwarded.Add(1)
	return nil, errors.New("forwarded")
}

func (r *elsewhere) ForwardEnd(context.Context, int, string, string) error {
	r.ends.Add(1)
	return nil
}

// TestIDLength: an id longer than sequence.max_id_length is refused by
// every way in (Step, StepHere, a step forwarded by a Router, End) before
// anything is stored or forwarded, with an error that names the limit and
// its key; an id of the limit's length is a sequence like any other.
func TestIDLength(t *testing.T) {
	tests := []struct {
		name string
		max  int // Options.MaxIDLength (0: the default)
		long int // the length of the refused id
	}{
		{name: "default", max: 0, long: DefaultMaxIDLength + 1},
		{name: "configured", max: 8, long: 9},
		{name: "a megabyte", max: 0, long: 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _ := newStore(t, &vad{}, Options{MaxIDLength: tt.max})
			ctx := context.Background()
			limit := tt.max
			if limit == 0 {
				limit = DefaultMaxIDLength
			}
			long := strings.Repeat("x", tt.long)
			want := fmt.Sprintf("the sequence id is %d bytes long, longer than %d bytes, the most that sequence.max_id_length allows", tt.long, limit)
			check := func(how string, err error) {
				t.Helper()
				var idErr *IDError
				if !errors.As(err, &idErr) || idErr.Length != tt.long || idErr.Max != limit || !strings.Contains(err.Error(), want) || Classify(err) != Invalid {
					t.Errorf("%s: %v, want an *IDError (Invalid) saying %q", how, err, want)
				}
				if len(err.Error()) > 300 {
					t.Errorf("%s: the error holds the id: %.100s…", how, err)
				}
			}
			_, err := s.Step(ctx, Step{ID: long, Start: true, Inputs: chunk(1)})
			check("Step", err)
			_, err = s.StepHere(ctx, Step{ID: long, Start: true, End: true, Inputs: chunk(1)})
			check("StepHere", err)
			if s.End(long, ReasonEnded) {
				t.Error("End of a long id ended a sequence")
			}
			if st := s.Stats(); st.Active != 0 || st.Started != 0 || st.Steps != 0 {
				t.Errorf("a refused id was stored: %+v", st)
			}
			if why, ok := s.gone.reason(long); ok {
				t.Errorf("a refused id is remembered as ended: %q", why)
			}

			// Under a Router, a long id is refused before it is forwarded.
			r := &elsewhere{}
			s.SetRouter(r)
			_, err = s.Step(ctx, Step{ID: long, Start: true, Inputs: chunk(1)})
			check("Step under a Router", err)
			s.End(long, ReasonEnded)
			if n, e := r.forwarded.Load(), r.ends.Load(); n != 0 || e != 0 {
				t.Errorf("a long id was forwarded: %d steps, %d ends", n, e)
			}
			s.router.Store(nil)

			// The limit's own length is fine.
			id := strings.Repeat("y", limit)
			if _, err := s.Step(ctx, Step{ID: id, Start: true, Inputs: chunk(1)}); err != nil {
				t.Fatalf("an id of %d bytes: %v", limit, err)
			}
			if _, err := s.Step(ctx, Step{ID: id, End: true, Inputs: chunk(1)}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestEndedBounded: the store remembers why the last 65,536 sequences
// ended, in memory that does not hold their ids: 65,536 ids of 256 bytes
// (16 MiB) leave less than 6 MiB on the heap; the oldest are forgotten
// (their steps are told the id is unknown), the newest say how they ended,
// and a start forgets that an id had ended.
func TestEndedBounded(t *testing.T) {
	s, _, _ := newStore(t, &vad{}, Options{})
	id := func(i int) string { return fmt.Sprintf("%0256d", i) }
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const n = remembered + 1000
	s.mu.Lock()
	for i := range n {
		reason := ReasonEnded
		if i%2 == 1 {
			reason = ReasonExpired
		}
		s.forget(&sequence{id: id(i)}, reason)
	}
	s.mu.Unlock()
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d ended ids of 256 bytes: the heap grew by %.1f MiB", n, float64(grew)/(1<<20))
	if grew > 6<<20 {
		t.Errorf("%d ended ids of 256 bytes grew the heap by %.1f MiB, want under 6 MiB", n, float64(grew)/(1<<20))
	}
	runtime.KeepAlive(s)

	ctx := context.Background()
	tests := []struct {
		id   int
		want string // "": unknown
	}{
		{0, ""}, {999, ""},
		{1000, ReasonEnded}, {1001, ReasonExpired}, {n - 2, ReasonEnded}, {n - 1, ReasonExpired},
	}
	for _, tt := range tests {
		_, err := s.Step(ctx, Step{ID: id(tt.id), Inputs: chunk(1)})
		var unknown *UnknownError
		if !errors.As(err, &unknown) || unknown.Reason != tt.want {
			t.Errorf("id %d: %v, want an unknown sequence with the reason %q", tt.id, err, tt.want)
		}
	}
	if _, err := s.Step(ctx, Step{ID: id(n - 1), Start: true, Inputs: chunk(1)}); err != nil {
		t.Fatal(err)
	}
	if why, ok := s.gone.reason(id(n - 1)); ok {
		t.Errorf("a started id is still remembered as ended: %q", why)
	}
}

// TestEndedSetRing: an id ended, started again and ended again is
// remembered once, and the slot it left does not make a later eviction
// forget it early; reasons beyond maxReasons are remembered as "ended".
func TestEndedSetRing(t *testing.T) {
	e := newEndedSet(maphash.MakeSeed())
	e.add("a", ReasonEnded) // slot 0
	e.drop("a")
	e.add("a", ReasonRestarted) // slot 1; slot 0 still holds a's hash
	for i := range remembered - 2 {
		e.add(fmt.Sprint("x", i), ReasonExpired)
	}
	e.add("y", ReasonEnded) // evicts slot 0, which a no longer holds
	if e.len() != remembered {
		t.Fatalf("%d remembered, want %d", e.len(), remembered)
	}
	if why, ok := e.reason("a"); !ok || why != ReasonRestarted {
		t.Errorf("a: %q %v, want %q", why, ok, ReasonRestarted)
	}
	e.add("z", ReasonEnded) // evicts slot 1: a, now the oldest
	if _, ok := e.reason("a"); ok || e.len() != remembered {
		t.Errorf("a is still remembered (%d remembered)", e.len())
	}
	if why, _ := e.reason("x0"); why != ReasonExpired {
		t.Errorf("x0: %q", why)
	}
	for i := range 2 * maxReasons {
		e.add(fmt.Sprint("r", i), fmt.Sprint("reason ", i))
	}
	if len(e.reasons) != maxReasons {
		t.Errorf("%d reasons kept, want %d", len(e.reasons), maxReasons)
	}
	if why, _ := e.reason(fmt.Sprint("r", 2*maxReasons-1)); why != reasonOther {
		t.Errorf("a reason past the bound: %q, want %q", why, reasonOther)
	}
	if why, _ := e.reason("r0"); why != "reason 0" {
		t.Errorf("the first reason: %q", why)
	}
}
