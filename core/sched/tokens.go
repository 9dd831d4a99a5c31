package sched

import (
	"context"
	"slices"
	"sync"

	"github.com/svc-dev/svc/core"
)

// Tokens forms the batches of inputs whose cost is their tokens, as text
// is: a batch padded to its longest input costs its longest × its size,
// and that is bounded by Budget. Each request queues its inputs, each
// with its length; while fewer than Slots batches run, the owner of the
// first waiting input (by priority, then arrival) takes a batch around
// that input from every request's waiting inputs, those of the nearest
// lengths, so that little of the batch is padding, and runs it in its own
// goroutine; a request returns once every one of its inputs has run. A
// request larger than one batch is so split, and one of many small
// inputs merged with others': no goroutine of Tokens' own runs anything.
type Tokens struct {
	budget int
	slots  int
	run    func(ctx context.Context, refs []any) error

	mu      sync.Mutex
	waiting []*tokenItem
	running int
	seq     uint64
	// changed is closed, and replaced, whenever a batch ends or the first
	// waiting input changes: the requests waiting for a turn look again.
	changed chan struct{}
}

// tokenItem is one waiting input.
type tokenItem struct {
	req *tokenRequest
	n   int
	ref any
	seq uint64
}

// tokenRequest is one request's inputs under way.
type tokenRequest struct {
	ctx  context.Context
	prio core.Priority
	// left counts its inputs not yet run; err is the first error of a
	// batch that held one of them. Both under Tokens.mu.
	left int
	err  error
}

// NewTokens returns a batcher of batches of at most budget padded tokens,
// at most slots of them running at once (at least one); run runs one
// batch, given the refs of its inputs as Run was given them, longest
// last, on a context that ends when every request with an input in the
// batch has ended.
func NewTokens(budget, slots int, run func(ctx context.Context, refs []any) error) *Tokens {
	return &Tokens{budget: max(budget, 1), slots: max(slots, 1), run: run, changed: make(chan struct{})}
}

// Budget is the most padded tokens of one batch.
func (q *Tokens) Budget() int { return q.budget }

// Run queues inputs of lens[i] tokens (refs[i] is what the run is given
// of each) and returns once each has run, with the first error of a batch
// that held one of them; a request whose ctx ends first stops waiting,
// its waiting inputs taken off the queue, with core.Canceled.
func (q *Tokens) Run(ctx context.Context, lens []int, refs []any) error {
	if len(lens) == 0 {
		return nil
	}
	r := &tokenRequest{ctx: ctx, prio: core.PriorityOf(ctx), left: len(lens)}
	q.mu.Lock()
	for i, n := range lens {
		q.seq++
		q.waiting = append(q.waiting, &tokenItem{req: r, n: n, ref: refs[i], seq: q.seq})
	}
	q.broadcastLocked()
	for {
		if r.left == 0 {
			q.mu.Unlock()
			return r.err
		}
		if ctx.Err() != nil {
			q.dropLocked(r)
			q.mu.Unlock()
			return core.Canceled(ctx)
		}
		if first := q.firstLocked(); q.running < q.slots && first != nil && first.req == r {
			batch := q.takeLocked()
			q.running++
			q.mu.Unlock()
			q.exec(r, batch)
			q.mu.Lock()
			q.running--
			q.broadcastLocked()
			continue
		}
		ch := q.changed
		q.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		q.mu.Lock()
	}
}

// exec runs batch for owner, whose goroutine runs it, and counts its
// inputs done.
func (q *Tokens) exec(owner *tokenRequest, batch []*tokenItem) {
	// The batch runs on the owner's values (its ticket of the memory
	// budget, its trace) until every request in it has ended.
	ctx, cancel := context.WithCancel(context.WithoutCancel(owner.ctx))
	defer cancel()
	var reqs []*tokenRequest
	for _, it := range batch {
		if !slices.Contains(reqs, it.req) {
			reqs = append(reqs, it.req)
		}
	}
	left := len(reqs)
	var mu sync.Mutex
	for _, r := range reqs {
		stop := context.AfterFunc(r.ctx, func() {
			mu.Lock()
			defer mu.Unlock()
			if left--; left == 0 {
				cancel()
			}
		})
		defer stop()
	}
	refs := make([]any, len(batch))
	for i, it := range batch {
		refs[i] = it.ref
	}
	err := q.run(ctx, refs)
	q.mu.Lock()
	for _, it := range batch {
		it.req.left--
		if err != nil && it.req.err == nil {
			it.req.err = err
		}
	}
	q.mu.Unlock()
}

// firstLocked is the first waiting input: of the highest priority, the
// earliest (nil when none waits).
func (q *Tokens) firstLocked() *tokenItem {
	var first *tokenItem
	for _, it := range q.waiting {
		if first == nil || it.req.prio > first.req.prio || it.req.prio == first.req.prio && it.seq < first.seq {
			first = it
		}
	}
	return first
}

// dropLocked takes r's waiting inputs off the queue.
func (q *Tokens) dropLocked(r *tokenRequest) {
	q.waiting = slices.DeleteFunc(q.waiting, func(it *tokenItem) bool { return it.req == r })
	q.broadcastLocked()
}

func (q *Tokens) broadcastLocked() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// takeLocked takes the next batch off the queue: the first waiting input
// and, among every waiting input sorted by length, its neighbours, each
// step adding the one that pads the batch less, while the batch's
// longest × its size stays within the budget. The batch is in order of
// length.
func (q *Tokens) takeLocked() []*tokenItem {
	sorted := slices.Clone(q.waiting)
	slices.SortStableFunc(sorted, func(a, b *tokenItem) int {
		if a.n != b.n {
			return a.n - b.n
		}
		return int(a.seq - b.seq)
	})
	at := slices.Index(sorted, q.firstLocked())
	lo, hi := GroupByLength(lengthsOf(sorted), at, q.budget)
	batch := sorted[lo : hi+1]
	taken := map[*tokenItem]bool{}
	for _, it := range batch {
		taken[it] = true
	}
	q.waiting = slices.DeleteFunc(q.waiting, func(it *tokenItem) bool { return taken[it] })
	q.broadcastLocked()
	return slices.Clone(batch)
}

func lengthsOf(items []*tokenItem) []int {
	out := make([]int, len(items))
	for i, it := range items {
		out[i] = it.n
	}
	return out
}

// MaxPadding is the most of a batch's tokens that GroupByLength lets be
// padding: past it, the texts of other lengths wait for a batch of their
// own, whose run costs less than padding them all to the longest.
const MaxPadding = 0.25

// GroupByLength is the batch around input at among inputs of lengths
// sorted (ascending): the window [lo, hi] that holds it, grown one input
// at a time by the neighbour that adds less padding (a shorter one pads
// itself up to the longest; a longer one pads every input before it),
// while the window's longest × its size is at most budget and at most
// MaxPadding of it is padding. An input longer than the budget is a
// batch of its own.
func GroupByLength(sorted []int, at, budget int) (lo, hi int) {
	lo, hi = at, at
	sum := sorted[at]
	fits := func(size, longest, sum int) bool {
		padded := size * longest
		return padded <= budget && float64(padded-sum) <= MaxPadding*float64(padded)
	}
	for {
		size := hi - lo + 1
		down, up := -1, -1
		if lo > 0 && fits(size+1, sorted[hi], sum+sorted[lo-1]) {
			down = sorted[hi] - sorted[lo-1]
		}
		if hi+1 < len(sorted) && fits(size+1, sorted[hi+1], sum+sorted[hi+1]) {
			up = (sorted[hi+1] - sorted[hi]) * size
		}
		switch {
		case down >= 0 && (up < 0 || down <= up):
			lo--
			sum += sorted[lo]
		case up >= 0:
			hi++
			sum += sorted[hi]
		default:
			return lo, hi
		}
	}
}

// InOrder is the batches that taking inputs of lengths in their order,
// each batch as many as fit the budget padded, would make: what batching
// without grouping by length does, for comparison. It returns each
// batch's [start, end).
func InOrder(lengths []int, budget int) [][2]int {
	var out [][2]int
	start, longest := 0, 0
	for i, n := range lengths {
		if i > start && max(longest, n)*(i-start+1) > budget {
			out = append(out, [2]int{start, i})
			start, longest = i, 0
		}
		longest = max(longest, n)
	}
	if start < len(lengths) {
		out = append(out, [2]int{start, len(lengths)})
	}
	return out
}
