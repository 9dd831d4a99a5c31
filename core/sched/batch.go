package sched

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// BatchOptions configure dynamic batching.
type BatchOptions struct {
	// MaxBatchSize caps the rows of a merged run.
	MaxBatchSize int
	// MaxQueueDelay lets a request wait this long for others to merge with
	// when a session is free (0: never wait while a session is free).
	MaxQueueDelay time.Duration
	// Slots is the number of runs in flight at once (normally the number
	// of sessions).
	Slots int
	// Observer is told how long each request waited for a session (nil:
	// nobody).
	Observer core.RunObserver
	// Fixed turns the size tuner off: merged runs take up to MaxBatchSize
	// rows whatever they cost. Otherwise the limit is learnt from the runs
	// (see sizeTuner).
	Fixed bool
	// Log gets a debug line when the learnt limit moves (nil: none).
	Log *zap.Logger
}

// Batcher merges requests that wait for a busy session into one run along
// the batch (first) dimension and splits the outputs back. A request that
// finds a session free runs at once, alone: batching only happens under
// load, so an idle server adds no delay.
type Batcher struct {
	next    core.Runner
	opts    BatchOptions
	specs   []tensor.Spec
	outputs []core.OutputSpec

	runs, merged, mergedRows atomic.Int64
	// tuner learns the rows limit of merged runs (nil when Fixed).
	tuner *sizeTuner

	mu      sync.Mutex
	running int
	queue   []*pending
	timer   *time.Timer
}

// pending is a request waiting in the queue.
type pending struct {
	ctx    context.Context
	inputs []*tensor.Tensor
	rows   int64
	key    string
	prio   core.Priority
	since  time.Time
	// taken is when a group took the request off the queue (set under the
	// batcher's lock before the group is handed over).
	taken time.Time
	// tag is what the size tuner counts the run of the group this request
	// leads as (see sizeTuner.Next).
	tag int
	// lead receives the group this request must run when it is the
	// group's leader; otherwise another leader delivers on done.
	lead chan []*pending
	done chan batchResult
}

type batchResult struct {
	res core.Result
	err error
	// expired: the request's context ended while it was queued, and the
	// dispatcher dropped it unrun.
	expired bool
}

// NewBatcher wraps next; the model must be Batchable.
func NewBatcher(next core.Runner, o BatchOptions) (*Batcher, error) {
	if err := core.Batchable(next.Info()); err != nil {
		return nil, err
	}
	if o.MaxBatchSize < 1 {
		o.MaxBatchSize = 32
	}
	if o.Slots < 1 {
		o.Slots = 1
	}
	if o.Observer == nil {
		o.Observer = core.NopObserver{}
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	b := &Batcher{next: next, opts: o, specs: next.Specs(), outputs: next.Info().Outputs}
	if !o.Fixed {
		b.tuner = newSizeTuner(o.MaxBatchSize)
	}
	return b, nil
}

// BatchStats counts the batcher's work.
type BatchStats struct {
	// Runs is the number of model runs; MergedRuns those that merged two
	// or more requests, covering MergedRequests requests.
	Runs, MergedRuns, MergedRequests int64
	// Limit is the most rows a merged run may hold now: MaxBatchSize, or
	// what the size tuner has learnt.
	Limit int
}

// Stats returns the counters so far.
func (b *Batcher) Stats() BatchStats {
	return BatchStats{Runs: b.runs.Load(), MergedRuns: b.merged.Load(), MergedRequests: b.mergedRows.Load(), Limit: b.limit()}
}

// limit is the most rows a merged run may hold now.
func (b *Batcher) limit() int {
	if b.tuner == nil {
		return b.opts.MaxBatchSize
	}
	return b.tuner.Limit()
}

// predict runs inputs on the next runner and tells the tuner of a
// successful run tagged tag (see sizeTuner.Next).
func (b *Batcher) predict(ctx context.Context, inputs []*tensor.Tensor, tag int) (core.Result, error) {
	res, err := b.next.Predict(ctx, inputs)
	if err == nil {
		b.observe(tag, inputs)
	}
	return res, err
}

// observe hands a successful run tagged tag to the tuner.
func (b *Batcher) observe(tag int, inputs []*tensor.Tensor) {
	if b.tuner == nil || tag == tagAlone {
		return
	}
	if limit, moved := b.tuner.Observe(tag, elementsOf(inputs)); moved {
		b.opts.Log.Debug("batch size limit moved", zap.Int("limit", limit))
	}
}

// Info describes the model.
func (b *Batcher) Info() core.ModelInfo { return b.next.Info() }

// Specs lists what each input accepts.
func (b *Batcher) Specs() []tensor.Spec { return b.specs }

// Predict runs inputs, merged with other waiting requests when a session is
// busy.
func (b *Batcher) Predict(ctx context.Context, inputs []*tensor.Tensor) (core.Result, error) {
	rows := batchRows(inputs)
	if rows <= 0 || rows >= int64(b.opts.MaxBatchSize) {
		// Nothing to merge with: run as is, outside the slots.
		b.runs.Add(1)
		b.opts.Observer.Queued(0)
		traceQueue(ctx, time.Time{}, 0)
		return b.predict(ctx, inputs, tagAlone)
	}
	b.mu.Lock()
	if b.running < b.opts.Slots && len(b.queue) == 0 && b.opts.MaxQueueDelay == 0 {
		b.running++
		b.mu.Unlock()
		b.opts.Observer.Queued(0)
		traceQueue(ctx, time.Time{}, 0)
		return b.runAlone(ctx, inputs)
	}
	// Queued: only now the request's record and its clock (the runs above
	// need neither).
	p := &pending{ctx: ctx, inputs: inputs, since: time.Now(), rows: rows, key: shapeKey(inputs),
		prio: core.PriorityOf(ctx), lead: make(chan []*pending, 1), done: make(chan batchResult, 1)}
	b.enqueueLocked(p)
	b.dispatchLocked()
	b.mu.Unlock()

	select {
	case group := <-p.lead:
		b.opts.Observer.Queued(p.taken.Sub(p.since))
		traceQueue(ctx, p.since, p.taken.Sub(p.since))
		b.runGroup(group)
		r := <-p.done
		return r.res, r.err
	case r := <-p.done:
		if r.expired {
			return nil, core.Canceled(ctx)
		}
		b.opts.Observer.Queued(p.taken.Sub(p.since))
		traceQueue(ctx, p.since, p.taken.Sub(p.since))
		return r.res, r.err
	case <-ctx.Done():
		b.mu.Lock()
		for i, q := range b.queue {
			if q == p {
				b.queue = append(b.queue[:i], b.queue[i+1:]...)
				b.mu.Unlock()
				return nil, core.Canceled(ctx)
			}
		}
		b.mu.Unlock()
		// Already taken into a group: its run goes on for the others;
		// wait for it so this request's result is released properly.
		var r batchResult
		select {
		case group := <-p.lead:
			b.runGroup(group)
			r = <-p.done
		case r = <-p.done:
		}
		if r.res != nil {
			r.res.Release()
		}
		return nil, core.Canceled(ctx)
	}
}

// runAlone runs one request that holds a slot (or needs none), then hands
// the slot to waiting requests.
func (b *Batcher) runAlone(ctx context.Context, inputs []*tensor.Tensor) (core.Result, error) {
	b.runs.Add(1)
	res, err := b.predict(ctx, inputs, tagAlone)
	b.release()
	return res, err
}

func (b *Batcher) release() {
	b.mu.Lock()
	b.running--
	if b.running < 0 {
		b.running = 0
	}
	b.dispatchLocked()
	b.mu.Unlock()
}

// enqueueLocked queues p behind the requests of its priority and ahead
// of those of a lower one.
func (b *Batcher) enqueueLocked(p *pending) {
	i := len(b.queue)
	for i > 0 && b.queue[i-1].prio < p.prio {
		i--
	}
	b.queue = append(b.queue, nil)
	copy(b.queue[i+1:], b.queue[i:])
	b.queue[i] = p
}

// dropExpiredLocked takes the requests whose context has ended (their
// client gave up or their own timeout passed) off the queue, unrun.
func (b *Batcher) dropExpiredLocked() {
	kept := b.queue[:0]
	for _, q := range b.queue {
		if q.ctx.Err() != nil {
			q.done <- batchResult{expired: true}
			continue
		}
		kept = append(kept, q)
	}
	for i := len(kept); i < len(b.queue); i++ {
		b.queue[i] = nil
	}
	b.queue = kept
}

// dispatchLocked forms groups from the queue while slots are free. The
// first request of each group becomes its leader and runs it.
func (b *Batcher) dispatchLocked() {
	if b.running < b.opts.Slots {
		b.dropExpiredLocked()
	}
	for b.running < b.opts.Slots && len(b.queue) > 0 {
		if d := b.opts.MaxQueueDelay; d > 0 && !b.fullLocked() {
			wait := d - time.Since(b.oldestLocked())
			if wait > 0 {
				if b.timer == nil {
					b.timer = time.AfterFunc(wait, func() {
						b.mu.Lock()
						b.timer = nil
						b.dispatchLocked()
						b.mu.Unlock()
					})
				}
				return
			}
		}
		group := b.takeGroupLocked()
		b.running++
		group[0].lead <- group
	}
}

// oldestLocked is when the longest-queued request arrived: the head's,
// unless requests of a higher priority have gone ahead of it. The delay
// counts from it, so that a high request arriving late neither restarts
// the wait of those queued before it nor waits longer than they would.
func (b *Batcher) oldestLocked() time.Time {
	oldest := b.queue[0].since
	for _, q := range b.queue[1:] {
		if q.since.Before(oldest) {
			oldest = q.since
		}
	}
	return oldest
}

// fullLocked reports whether the head of the queue can fill a batch.
func (b *Batcher) fullLocked() bool {
	return b.headRowsLocked() >= int64(b.limit())
}

// headRowsLocked counts the queued rows that could merge with the head of
// the queue.
func (b *Batcher) headRowsLocked() int64 {
	var rows int64
	key := b.queue[0].key
	for _, q := range b.queue {
		if q.key == key {
			rows += q.rows
		}
	}
	return rows
}

// takeGroupLocked removes the head of the queue and the compatible requests
// after it, up to the batch size limit and to an even share of the queued
// rows per slot: taking the whole queue into one run would leave the other
// sessions idle while it runs.
func (b *Batcher) takeGroupLocked() []*pending {
	head := b.queue[0]
	head.taken = time.Now()
	group := []*pending{head}
	rows := head.rows
	slots := int64(max(b.opts.Slots, 1))
	share := (b.headRowsLocked() + slots - 1) / slots
	most, tag := b.opts.MaxBatchSize, tagSettled
	if b.tuner != nil {
		most, tag = b.tuner.Next()
	}
	head.tag = tag
	limit := min(int64(most), max(share, head.rows))
	rest := b.queue[:0]
	for _, q := range b.queue[1:] {
		if q.key == head.key && rows+q.rows <= limit {
			q.taken = head.taken
			group = append(group, q)
			rows += q.rows
		} else {
			rest = append(rest, q)
		}
	}
	for i := len(rest); i < len(b.queue); i++ {
		b.queue[i] = nil
	}
	b.queue = rest
	return group
}

// runGroup runs a group (holding one slot) and delivers each member's part.
func (b *Batcher) runGroup(group []*pending) {
	defer b.release()
	b.runs.Add(1)
	if len(group) == 1 {
		res, err := b.predict(group[0].ctx, group[0].inputs, group[0].tag)
		group[0].done <- batchResult{res: res, err: err}
		return
	}
	// The merged run stops only if every member gave up.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if t := groupTraceOf(group); t != nil {
		ctx = core.WithRequestTrace(ctx, t)
	}
	var left atomic.Int64
	left.Store(int64(len(group)))
	for _, p := range group {
		stop := context.AfterFunc(p.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
		defer stop()
	}

	b.merged.Add(1)
	b.mergedRows.Add(int64(len(group)))
	merged, err := concat(group, len(b.specs))
	if err != nil {
		deliverErr(group, &core.InferenceError{Err: err})
		return
	}
	// The merged inputs are the batcher's own: their storage goes back to
	// the tensor pools once the run is over and observed.
	defer tensor.RecycleAll(merged)
	res, err := b.next.Predict(ctx, merged)
	if err != nil {
		deliverErr(group, err)
		return
	}
	parts, err := split(res, group, b.outputs)
	// The parts view the run's outputs: pooled storage among them goes
	// back once every member has released its part, or at once when the
	// outputs could not be split.
	kept := detach(res)
	if err != nil {
		tensor.RecycleAll(kept)
		deliverErr(group, &core.InferenceError{Err: err})
		return
	}
	release := share(kept, len(parts))
	b.observe(group[0].tag, merged)
	for i, p := range group {
		p.done <- batchResult{res: core.NewResultReleasing(parts[i], release)}
	}
}

// detach closes res, keeping its pooled storage (see core.Detacher) for
// the parts that view it.
func detach(res core.Result) []*tensor.Tensor {
	if d, ok := res.(core.Detacher); ok {
		return d.Detach()
	}
	res.Close()
	return nil
}

// share returns the function each of n parts calls once when released:
// the last call gives kept back to the tensor pools (nil when there is
// nothing to give back).
func share(kept []*tensor.Tensor, n int) func() {
	if len(kept) == 0 {
		return nil
	}
	var refs atomic.Int64
	refs.Store(int64(n))
	return func() {
		if refs.Add(-1) == 0 {
			tensor.RecycleAll(kept)
		}
	}
}

func deliverErr(group []*pending, err error) {
	for _, p := range group {
		p.done <- batchResult{err: err}
	}
}

// batchRows is a request's rows: the first dimension its inputs share, or
// -1 when an input has no dimensions or the inputs disagree (the request
// then runs alone).
func batchRows(inputs []*tensor.Tensor) int64 {
	rows := int64(-1)
	for _, t := range inputs {
		switch {
		case t == nil:
		case len(t.Shape) == 0:
			return -1
		case rows < 0:
			rows = t.Shape[0]
		case t.Shape[0] != rows:
			return -1
		}
	}
	return rows
}

// shapeKey is equal for requests that can be merged: the same inputs
// present, the same dimensions but the first. Built only for a request
// that queues.
func shapeKey(inputs []*tensor.Tensor) string {
	var sb strings.Builder
	for i, t := range inputs {
		if t == nil {
			sb.WriteString("-;")
			continue
		}
		sb.WriteString(strconv.Itoa(i))
		for _, d := range t.Shape[1:] {
			sb.WriteByte(',')
			sb.WriteString(strconv.FormatInt(d, 10))
		}
		sb.WriteByte(';')
	}
	return sb.String()
}

// concat joins the group's inputs along the first dimension.
func concat(group []*pending, n int) ([]*tensor.Tensor, error) {
	out := make([]*tensor.Tensor, n)
	for i := 0; i < n; i++ {
		if group[0].inputs[i] == nil {
			continue
		}
		parts := make([]*tensor.Tensor, len(group))
		for j, p := range group {
			parts[j] = p.inputs[i]
		}
		t, err := concatRows(parts)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// split cuts each output of a merged run into the members' rows.
func split(res core.Result, group []*pending, outputs []core.OutputSpec) ([][]*tensor.Tensor, error) {
	parts := make([][]*tensor.Tensor, len(group))
	for j := range group {
		parts[j] = make([]*tensor.Tensor, res.Len())
	}
	var total int64
	for _, p := range group {
		total += p.rows
	}
	for i := 0; i < res.Len(); i++ {
		t, err := res.Tensor(i)
		if err != nil {
			return nil, fmt.Errorf("output %q: %w", outputs[i].Name, err)
		}
		if len(t.Shape) == 0 || t.Shape[0] != total {
			return nil, fmt.Errorf("output %q has shape %s, not a batch of %d rows; disable batching for this model (batching.enabled: false)", outputs[i].Name, tensor.FormatShape(t.Shape), total)
		}
		var off int64
		for j, p := range group {
			parts[j][i] = sliceRows(t, off, off+p.rows)
			off += p.rows
		}
	}
	return parts, nil
}

// Queued is the number of requests waiting for a session.
func (b *Batcher) Queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

// groupTrace reports a merged run's steps to each member's trace.
type groupTrace []core.RequestTrace

func (g groupTrace) Step(s core.Step, start, end time.Time, rows int) {
	for _, t := range g {
		t.Step(s, start, end, rows)
	}
}

// groupTraceOf is the trace of a merged run: its members' traces (nil
// when none has one).
func groupTraceOf(group []*pending) core.RequestTrace {
	var g groupTrace
	for _, p := range group {
		if t := core.RequestTraceOf(p.ctx); t != nil {
			g = append(g, t)
		}
	}
	if g == nil {
		return nil
	}
	return g
}
