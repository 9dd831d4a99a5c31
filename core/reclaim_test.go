package core_test

import (
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

func TestReclaimerGivesMemoryBackOncePerIdlePeriod(t *testing.T) {
	m := core.NewModel("m")
	r := core.NewReclaimer(m, 30*time.Millisecond)
	r.Start()
	defer r.Stop()

	// Nothing served yet: nothing to give back.
	time.Sleep(120 * time.Millisecond)
	if n := r.Reclaims(); n != 0 {
		t.Fatalf("%d reclaims before any request", n)
	}

	// What a request gave back to the tensor pools is let go.
	tensor.PutSlice(tensor.MakeSlice[byte](tensor.MinPooled))
	if n, _ := tensor.Retained(); n == 0 {
		t.Fatal("the tensor pools hold nothing before the reclaim")
	}
	m.EndRequest(m.BeginRequest(), core.OutcomeSuccess)
	waitFor(t, func() bool { return r.Reclaims() == 1 })
	if n, bytes := tensor.Retained(); n != 0 {
		t.Fatalf("the tensor pools hold %d buffers (%d bytes) after the reclaim", n, bytes)
	}
	time.Sleep(120 * time.Millisecond)
	if n := r.Reclaims(); n != 1 {
		t.Fatalf("%d reclaims in one idle period, want 1", n)
	}

	// A request in flight holds it off, however long it runs.
	start := m.BeginRequest()
	m.EndRequest(m.BeginRequest(), core.OutcomeSuccess)
	time.Sleep(120 * time.Millisecond)
	if n := r.Reclaims(); n != 1 {
		t.Fatalf("reclaimed with a request in flight (%d reclaims)", n)
	}
	m.EndRequest(start, core.OutcomeSuccess)
	waitFor(t, func() bool { return r.Reclaims() == 2 })
}

func TestReclaimerOffAndStop(t *testing.T) {
	m := core.NewModel("m")
	r := core.NewReclaimer(m, 0)
	r.Start()
	m.EndRequest(m.BeginRequest(), core.OutcomeSuccess)
	time.Sleep(50 * time.Millisecond)
	r.Stop()
	r.Stop() // twice is fine
	if n := r.Reclaims(); n != 0 {
		t.Fatalf("%d reclaims when off", n)
	}
}

func TestReclaimerStopBeforeStart(t *testing.T) {
	m := core.NewModel("m")
	r := core.NewReclaimer(m, time.Millisecond)
	done := make(chan struct{})
	go func() {
		r.Stop() // a start-up that failed before the hook ran
		r.Start()
		r.Stop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop before Start did not return")
	}
	m.EndRequest(m.BeginRequest(), core.OutcomeSuccess)
	time.Sleep(50 * time.Millisecond)
	if n := r.Reclaims(); n != 0 {
		t.Fatalf("%d reclaims after Stop", n)
	}
}
