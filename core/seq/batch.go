package seq

import (
	"context"
	"fmt"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// rows is how many rows a step holds along the batch axes, the same for
// every batched input; 0 when the step cannot share a run (the rows
// disagree, an input is missing, or the layout has no batch axes).
func (s *Store) rows(l *Layout, inputs []*tensor.Tensor) int {
	if l.NoBatch != "" {
		return 0
	}
	rows := -1
	for i, t := range inputs {
		a := l.InAxis[i]
		if a < 0 {
			continue
		}
		if t == nil || a >= len(t.Shape) {
			return 0
		}
		switch r := int(t.Shape[a]); {
		case rows < 0:
			rows = r
		case r != rows:
			return 0
		}
	}
	return max(rows, 0)
}

// runLoop runs the queued steps: it takes every step waiting (up to
// MaxBatch) and runs those that fit together as one.
func (s *Store) runLoop() {
	defer s.loops.Done()
	for {
		var first *pending
		select {
		case <-s.stop:
			return
		case first = <-s.queue:
		}
		batch := []*pending{first}
	more:
		for len(batch) < s.o.MaxBatch {
			select {
			case p := <-s.queue:
				batch = append(batch, p)
			default:
				break more
			}
		}
		l := s.Layout()
		for _, group := range groups(l, live(batch)) {
			if len(group) == 1 {
				s.runAlone(l, group[0])
				close(group[0].done)
				continue
			}
			s.runMerged(l, group)
			for _, p := range group {
				close(p.done)
			}
		}
	}
}

// live answers the steps whose request ended while they waited (its
// deadline, its client gone): they never run and leave their state as it
// was, as a request still queued in the scheduler never runs. It returns
// the others.
func live(batch []*pending) []*pending {
	out := batch[:0]
	for _, p := range batch {
		if p.ctx.Err() != nil {
			p.err = core.Canceled(p.ctx)
			close(p.done)
			continue
		}
		out = append(out, p)
	}
	return out
}

// groups splits a batch into the groups of steps that can share a run:
// equal inputs where there is no batch axis, equal shapes but along it.
func groups(l *Layout, batch []*pending) [][]*pending {
	var out [][]*pending
next:
	for _, p := range batch {
		for k, g := range out {
			if fits(l, g[0], p) {
				out[k] = append(g, p)
				continue next
			}
		}
		out = append(out, []*pending{p})
	}
	return out
}

func fits(l *Layout, a, b *pending) bool {
	for i := range a.inputs {
		x, y := a.inputs[i], b.inputs[i]
		if (x == nil) != (y == nil) {
			return false
		}
		if x == nil {
			continue
		}
		axis := l.InAxis[i]
		if axis < 0 {
			if !equal(x, y) {
				return false
			}
			continue
		}
		if x.DType != y.DType || !sameExcept(x.Shape, y.Shape, axis) {
			return false
		}
	}
	return true
}

// runAlone runs one step by itself and keeps its new state.
func (s *Store) runAlone(l *Layout, p *pending) {
	outs, err := s.predict(p.ctx, p.inputs)
	s.runs.Add(1)
	if err != nil {
		p.err = err
		return
	}
	s.keep(l, p, outs)
}

// runMerged runs a group of steps as one: inputs joined along their batch
// axes, outputs cut back into each step's rows. When the outputs do not
// split as the layout says, merging is switched off and the steps run
// alone.
func (s *Store) runMerged(l *Layout, group []*pending) {
	inputs := make([]*tensor.Tensor, len(group[0].inputs))
	parts := make([]*tensor.Tensor, len(group))
	for i := range inputs {
		if group[0].inputs[i] == nil {
			continue
		}
		axis := l.InAxis[i]
		if axis < 0 {
			inputs[i] = group[0].inputs[i]
			continue
		}
		for k, p := range group {
			parts[k] = p.inputs[i]
		}
		inputs[i] = concat(parts, axis)
	}
	total := 0
	for _, p := range group {
		total += p.rows
	}
	outs, err := s.predict(context.Background(), inputs)
	s.runs.Add(1)
	s.batched.Add(1)
	if err != nil {
		// The steps run alone: one bad step fails by itself, and if every
		// step runs alone the merging was at fault (a batch axis the
		// layout got wrong), so it is switched off.
		failed := false
		for _, p := range group {
			s.runAlone(l, p)
			failed = failed || p.err != nil
		}
		if !failed {
			s.switchOffMerging(fmt.Sprintf("a run of %d steps merged on their batch axes failed (%v), and each step ran alone", len(group), err))
		}
		return
	}
	for j, t := range outs {
		axis := l.OutAxis[j]
		if axis < 0 || axis >= len(t.Shape) || int(t.Shape[axis]) != total {
			s.switchOffMerging(fmt.Sprintf("output %q of a run of %d rows did not have %d rows on axis %d", l.info.Outputs[j].Name, total, total, axis))
			for _, p := range group {
				s.runAlone(l, p)
			}
			return
		}
	}
	at := 0
	for _, p := range group {
		mine := make([]*tensor.Tensor, len(outs))
		for j, t := range outs {
			mine[j] = cut(t, l.OutAxis[j], at, at+p.rows)
		}
		at += p.rows
		s.keep(l, p, mine)
	}
}

// switchOffMerging makes every later step run alone, for the reason why
// (Batching reports it), until the next model is adopted.
func (s *Store) switchOffMerging(why string) {
	s.mu.Lock()
	s.noMerge = why
	s.mu.Unlock()
}

// keep hands a step its outputs and makes its state outputs the
// sequence's next state.
func (s *Store) keep(l *Layout, p *pending, outs []*tensor.Tensor) {
	for k, pair := range l.Pairs {
		p.seq.state[k] = outs[pair.Out]
	}
	p.out = outs
}

// predict runs the model and takes its outputs. It closes the result
// rather than releasing it: tensors taken from a closed result keep their
// data (core.Result), so the state outputs become the sequence's next
// state, and the outputs its answer, without a copy.
func (s *Store) predict(ctx context.Context, inputs []*tensor.Tensor) ([]*tensor.Tensor, error) {
	r, release, err := s.runner()
	if err != nil {
		return nil, err
	}
	defer release()
	res, err := r.Predict(ctx, inputs)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	outs := make([]*tensor.Tensor, res.Len())
	for j := range outs {
		if outs[j], err = res.Tensor(j); err != nil {
			return nil, &core.InferenceError{Err: fmt.Errorf("output %d: %w", j, err)}
		}
	}
	return outs, nil
}
