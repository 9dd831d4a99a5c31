package seq

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// Defaults of Options.
const (
	DefaultMaxIdle   = 60 * time.Second
	DefaultMaxActive = 10000
	DefaultMaxBatch  = 64
	// DefaultMaxIDLength is the longest sequence id, in bytes.
	DefaultMaxIDLength = 256
	// remembered is how many ended sequences the store remembers, to say
	// why a later step finds its sequence gone.
	remembered = 1 << 16
)

// Options configure a Store. Zero fields take the defaults.
type Options struct {
	// MaxIdle frees a sequence with no step for this long
	// (sequence.max_idle; default 60 s).
	MaxIdle time.Duration
	// MaxActive bounds the active sequences (sequence.max_active; default
	// 10000): a new one beyond it gets a *LimitError.
	MaxActive int
	// MaxIDLength bounds a sequence id, in bytes
	// (sequence.max_id_length; default 256): a longer one gets an
	// *IDError before anything is stored or forwarded.
	MaxIDLength int
	// NoBatching runs every step alone (sequence.batching: false); by
	// default the steps of different sequences that wait together share
	// one run.
	NoBatching bool
	// MaxBatch caps the steps in one run (sequence.max_batch_size; default
	// 64).
	MaxBatch int
	// States declares the state pairs, input → output (svc.yml's
	// models.NAME.sequence.states; none: the conventions, see FindPairs).
	States map[string]string
	// Initial gives a state input's first value, every element (default
	// 0).
	Initial map[string]float64
	// Context carries the last N elements along an input's last axis
	// into the next step, before what the client sends (input name → N;
	// svc.yml's models.NAME.sequence.context): audio models such as
	// Silero VAD v5 read each chunk after the end of the one before
	// (64 samples at 16 kHz). The first step gets zeros.
	Context map[string]int
	// Now is the clock (nil: time.Now). Tests inject their own.
	Now func() time.Time
	// Unheard is the reason a step for an id this store never saw gets
	// ("" = none): a worker started in place of one that died says that
	// the sequence may have lived there.
	Unheard string
	// Ticks wakes the reaper that frees idle sequences (nil: a ticker at a
	// quarter of MaxIdle, at most every second). Tests send their own.
	Ticks <-chan time.Time
}

// Stats are the store's counters, read when wanted.
type Stats struct {
	Active  int    `json:"active"`
	Started uint64 `json:"started"`
	Ended   uint64 `json:"ended"`
	Expired uint64 `json:"expired"`
	Steps   uint64 `json:"steps"`
	// Runs counts the model's runs for steps, Batched the runs that held
	// more than one step.
	Runs    uint64 `json:"runs"`
	Batched uint64 `json:"batched_runs"`
}

// Store holds the state of every active sequence of the served model and
// runs their steps. It is safe for concurrent use.
type Store struct {
	o      Options
	runner Acquire

	mu      sync.Mutex
	layout  *Layout
	initial []*tensor.Tensor // by pair
	noMerge string           // why merged runs were switched off at run time
	active  map[string]*sequence
	gone    endedSet
	closed  string

	started, ended, expired, steps, runs, batched atomic.Uint64

	onStep   atomic.Pointer[func(time.Duration)]
	router   atomic.Pointer[Router]
	queue    chan *pending
	stop     chan struct{}
	loops    sync.WaitGroup
	inFlight sync.WaitGroup
	once     sync.Once
}

// sequence is one active sequence.
type sequence struct {
	id string
	// turn is held by the step under way: steps run one at a time, in the
	// order they asked for it.
	turn  chan struct{}
	state []*tensor.Tensor // by pair; written only by the turn's holder
	// context is the tail of each context input (by input index), written
	// only by the turn's holder.
	context map[int]*tensor.Tensor
	last    time.Time // the end of the last step
	busy    int       // steps waiting or under way
	ended   string    // why it ended while steps waited
}

// pending is a step waiting for its run.
type pending struct {
	ctx    context.Context
	seq    *sequence
	inputs []*tensor.Tensor // every input, state included
	rows   int              // rows along the batch axes (0: cannot share a run)
	out    []*tensor.Tensor
	err    error
	done   chan struct{}
}

// Acquire returns the runner a run of steps goes to, held until release
// is called: the served model's current generation (core.Model.Acquire),
// so that a reload cannot close the sessions under a run.
type Acquire func() (r core.Runner, release func(), err error)

// Fixed is an Acquire of one runner that nothing closes (tests, tools).
func Fixed(r core.Runner) Acquire {
	return func() (core.Runner, func(), error) { return r, func() {}, nil }
}

// New returns a store that runs steps on the runner that runner returns.
// It knows the model once it has adopted what Prepare learnt of it. Close
// stops it.
func New(o Options, runner Acquire) *Store {
	if o.MaxIdle <= 0 {
		o.MaxIdle = DefaultMaxIdle
	}
	if o.MaxActive <= 0 {
		o.MaxActive = DefaultMaxActive
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.MaxIDLength <= 0 {
		o.MaxIDLength = DefaultMaxIDLength
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Store{
		o: o, runner: runner,
		active: map[string]*sequence{}, gone: newEndedSet(maphash.MakeSeed()),
		queue: make(chan *pending, 4*o.MaxBatch), stop: make(chan struct{}),
	}
	ticks, stopTicker := o.Ticks, func() {}
	if ticks == nil {
		t := time.NewTicker(min(o.MaxIdle/4, time.Second))
		ticks, stopTicker = t.C, t.Stop
	}
	s.loops.Add(2)
	go s.reaper(ticks, stopTicker)
	go s.runLoop()
	return s
}

// Prepared is what Prepare learnt of one loaded generation of the model:
// its state pairs, batch axes and first states. The store adopts it when
// the generation becomes current (Adopt).
type Prepared struct {
	layout  *Layout
	initial []*tensor.Tensor
}

// ReasonReloaded is what steps of sequences a reload ended are told.
const ReasonReloaded = "the model was reloaded; a sequence's state belongs to the model that made it"

// Prepare learns the model's state pairs and batch axes from r (a
// core.Preparer: the answer, a *Prepared, is the generation's view). A
// declared pair the model lacks is an error (a reload to such a model
// fails and the old one keeps serving); a model without state is not (its
// sequences get ErrStateless).
func (s *Store) Prepare(r core.Runner) (any, error) {
	p, err := s.learn(r)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Use learns the model r runs and adopts it at once: for a store over one
// runner that never reloads (Fixed: tests, tools).
func (s *Store) Use(r core.Runner) error {
	p, err := s.learn(r)
	if err != nil {
		return err
	}
	s.Adopt(p)
	return nil
}

func (s *Store) learn(r core.Runner) (*Prepared, error) {
	l, err := NewLayout(r.Info(), s.o.States)
	if err != nil {
		return nil, err
	}
	specs := r.Specs()
	initial := make([]*tensor.Tensor, len(l.Pairs))
	for k, p := range l.Pairs {
		if initial[k], err = initialState(specs[p.In], p.Axis, s.o.Initial[p.Input]); err != nil {
			return nil, err
		}
	}
	info := r.Info()
	for name, n := range s.o.Context {
		i := -1
		for k, in := range info.Inputs {
			if in.Name == name {
				i = k
			}
		}
		switch {
		case i < 0:
			return nil, fmt.Errorf("sequence context %q: the model has no input of that name", name)
		case l.StateInput(i):
			return nil, fmt.Errorf("sequence context %q: the input is a state, which svc carries whole", name)
		case n <= 0:
			return nil, fmt.Errorf("sequence context %q: %d elements; want at least 1", name, n)
		case len(specs[i].Shape) == 0 || specs[i].Shape[len(specs[i].Shape)-1] >= 0:
			return nil, fmt.Errorf("sequence context %q: its last axis is not dynamic, so svc cannot put context before it", name)
		}
	}
	for name := range s.o.Initial {
		found := false
		for _, p := range l.Pairs {
			found = found || p.Input == name
		}
		if !found {
			return nil, fmt.Errorf("sequence initial value for %q: no state input of that name", name)
		}
	}
	return &Prepared{layout: l, initial: initial}, nil
}

// Adopt makes p the model the store runs steps for: at the first load, and
// at each reload, when the generation p was learnt from becomes current.
// A reload ends every active sequence (ReasonReloaded): state never
// crosses from one model to another. It answers how many ended.
func (s *Store) Adopt(p *Prepared) int {
	if p == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	if s.layout != nil {
		for _, seq := range s.active {
			s.forget(seq, ReasonReloaded)
			n++
		}
		s.ended.Add(uint64(n))
	}
	s.layout, s.initial, s.noMerge = p.layout, p.initial, ""
	return n
}

// Layout is the model's layout (nil before Prepare).
func (s *Store) Layout() *Layout {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.layout
}

// Batching says whether steps of different sequences share runs, and if
// not why.
func (s *Store) Batching() (bool, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.o.NoBatching:
		return false, "sequence.batching is false"
	case s.layout == nil:
		return false, "the model is not loaded"
	case s.layout.NoBatch != "":
		return false, s.layout.NoBatch
	case s.noMerge != "":
		return false, s.noMerge
	}
	return true, ""
}

// Stats reads the counters.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	active := len(s.active)
	s.mu.Unlock()
	return Stats{Active: active, Started: s.started.Load(), Ended: s.ended.Load(), Expired: s.expired.Load(),
		Steps: s.steps.Load(), Runs: s.runs.Load(), Batched: s.batched.Load()}
}

// SetOnStep has f told how long each step took, from its arrival to its
// outputs (the metrics observe it).
func (s *Store) SetOnStep(f func(d time.Duration)) { s.onStep.Store(&f) }

// Waiting is how many steps wait in the queue for a run.
func (s *Store) Waiting() int { return len(s.queue) }

// Step is one step of a sequence.
type Step struct {
	// ID names the sequence.
	ID string
	// Start begins the sequence (again, if active: its state goes back to
	// the first value); End ends it after this step.
	Start, End bool
	// Inputs are the model's inputs in its order, state inputs nil (svc
	// fills them); nil optional inputs take their default.
	Inputs []*tensor.Tensor
}

// Router sends the steps of sequences that another process holds to it
// (under --workers each sequence lives in one worker).
type Router interface {
	// Owner says which process holds sequence id: local is true for
	// this one.
	Owner(id string) (peer int, local bool)
	// Forward runs a step in process peer, which answers as Step would.
	Forward(ctx context.Context, peer int, st Step) ([]*tensor.Tensor, error)
	// ForwardEnd ends sequence id in process peer, as End would.
	ForwardEnd(ctx context.Context, peer int, id, reason string) error
}

// CheckID refuses an id longer than sequence.max_id_length (an
// *IDError). Step, StepHere and End check it before anything is stored
// or forwarded; a protocol may check it sooner, before it reads the rest
// of the request.
func (s *Store) CheckID(id string) error {
	if len(id) > s.o.MaxIDLength {
		return &IDError{Length: len(id), Max: s.o.MaxIDLength}
	}
	return nil
}

// SetRouter has the steps of sequences held elsewhere sent there.
func (s *Store) SetRouter(r Router) { s.router.Store(&r) }

// Step runs one step where its sequence lives: here (StepHere) or, under
// a Router, in the process that holds it.
func (s *Store) Step(ctx context.Context, st Step) ([]*tensor.Tensor, error) {
	if err := s.CheckID(st.ID); err != nil {
		return nil, err
	}
	if r := s.router.Load(); r != nil {
		if peer, local := (*r).Owner(st.ID); !local {
			return (*r).Forward(ctx, peer, st)
		}
	}
	return s.StepHere(ctx, st)
}

// StepHere runs one step in this process: the state inputs take the sequence's state, and the
// state outputs become its next state. It returns every output, in the
// model's order (state outputs included). A step waits for the steps of
// its sequence before it; a failed step leaves the state as it was.
func (s *Store) StepHere(ctx context.Context, st Step) ([]*tensor.Tensor, error) {
	if err := s.CheckID(st.ID); err != nil {
		return nil, err
	}
	t0 := s.o.Now()
	seq, l, err := s.begin(st)
	if err != nil {
		return nil, err
	}
	defer s.inFlight.Done()
	select {
	case seq.turn <- struct{}{}:
	case <-ctx.Done():
		s.finish(seq, false, false)
		return nil, core.Canceled(ctx)
	}
	ok := false
	defer func() { <-seq.turn; s.finish(seq, st.End, ok) }()
	s.mu.Lock()
	why := seq.ended
	s.mu.Unlock()
	if why != "" {
		return nil, &UnknownError{ID: st.ID, Reason: why}
	}
	inputs := make([]*tensor.Tensor, len(st.Inputs))
	copy(inputs, st.Inputs)
	tails, err := s.withContext(l, seq, inputs)
	if err != nil {
		return nil, err
	}
	for k, p := range l.Pairs {
		inputs[p.In] = seq.state[k]
	}
	p := &pending{ctx: ctx, seq: seq, inputs: inputs, rows: s.rows(l, inputs), done: make(chan struct{})}
	if on, _ := s.Batching(); on && p.rows > 0 {
		s.queue <- p
		<-p.done
	} else {
		s.runAlone(l, p)
	}
	if p.err != nil {
		return nil, p.err
	}
	ok = true
	for i, t := range tails {
		seq.context[i] = t
	}
	s.steps.Add(1)
	if f := s.onStep.Load(); f != nil {
		(*f)(s.o.Now().Sub(t0))
	}
	return p.out, nil
}

// withContext puts each context input's carried tail before what the
// client sent, in inputs, and returns the tails to carry after this step.
func (s *Store) withContext(l *Layout, seq *sequence, inputs []*tensor.Tensor) (map[int]*tensor.Tensor, error) {
	if len(s.o.Context) == 0 {
		return nil, nil
	}
	tails := map[int]*tensor.Tensor{}
	for i, in := range l.info.Inputs {
		n, ok := s.o.Context[in.Name]
		if !ok {
			continue
		}
		t := inputs[i]
		if t == nil || len(t.Shape) == 0 {
			return nil, &StepError{Input: in.Name, Message: fmt.Sprintf("input '%s' is missing or a scalar; it takes the sequence's context", in.Name)}
		}
		last := len(t.Shape) - 1
		prev := seq.context[i]
		if prev == nil || prev.DType != t.DType || !sameExcept(prev.Shape, t.Shape, last) {
			if prev != nil {
				return nil, &StepError{Input: in.Name, Message: fmt.Sprintf("input '%s' changed shape or type within the sequence: %s %s after %s %s", in.Name, t.DType, tensor.FormatShape(t.Shape), prev.DType, tensor.FormatShape(prev.Shape))}
			}
			shape := append([]int64(nil), t.Shape...)
			shape[last] = int64(n)
			z, err := initialState(tensor.Spec{Name: in.Name, DType: t.DType, Shape: shape}, -1, 0)
			if err != nil {
				return nil, err
			}
			prev = z
		}
		full := concat([]*tensor.Tensor{prev, t}, last)
		inputs[i] = full
		size := int(full.Shape[last])
		tails[i] = cut(full, last, size-n, size)
	}
	return tails, nil
}

// begin finds or starts the step's sequence and counts the step in.
func (s *Store) begin(st Step) (*sequence, *Layout, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.layout
	switch {
	case s.closed != "":
		return nil, nil, &ClosedError{Reason: s.closed}
	case l == nil:
		return nil, nil, &ClosedError{Reason: "the model is not loaded"}
	case !l.Stateful():
		return nil, nil, ErrStateless
	}
	if len(st.Inputs) != len(l.info.Inputs) {
		return nil, nil, &StepError{Message: fmt.Sprintf("a step takes %d inputs, got %d", len(l.info.Inputs), len(st.Inputs))}
	}
	for _, p := range l.Pairs {
		if st.Inputs[p.In] != nil {
			return nil, nil, &StepError{Input: p.Input, Message: fmt.Sprintf("input '%s' is the sequence's state, which svc keeps: send only the other inputs", p.Input)}
		}
	}
	now := s.o.Now()
	seq := s.active[st.ID]
	if seq != nil && seq.busy == 0 && now.Sub(seq.last) >= s.o.MaxIdle {
		s.forget(seq, ReasonExpired)
		s.expired.Add(1)
		seq = nil
	}
	switch {
	case st.Start:
		if seq != nil {
			// A start on an active id restarts it: the old sequence's
			// waiting steps fail, its state is dropped.
			s.forget(seq, ReasonRestarted)
			s.ended.Add(1)
		} else if len(s.active) >= s.o.MaxActive {
			return nil, nil, &LimitError{ID: st.ID, Max: s.o.MaxActive}
		}
		seq = &sequence{id: st.ID, turn: make(chan struct{}, 1), state: append([]*tensor.Tensor(nil), s.initial...), last: now, context: map[int]*tensor.Tensor{}}
		s.active[st.ID] = seq
		s.gone.drop(st.ID)
		s.started.Add(1)
	case seq == nil:
		why, ok := s.gone.reason(st.ID)
		if !ok {
			why = s.o.Unheard
		}
		return nil, nil, &UnknownError{ID: st.ID, Reason: why}
	}
	seq.busy++
	s.inFlight.Add(1)
	return seq, l, nil
}

// finish counts a step out of its sequence; end ends the sequence when
// the step succeeded.
func (s *Store) finish(seq *sequence, end, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seq.busy--
	seq.last = s.o.Now()
	if end && ok && s.active[seq.id] == seq {
		s.forget(seq, ReasonEnded)
		s.ended.Add(1)
	}
}

// forget removes seq from the active ones, remembering why (s.mu held).
func (s *Store) forget(seq *sequence, reason string) {
	if seq.ended == "" {
		seq.ended = reason
	}
	if s.active[seq.id] == seq {
		delete(s.active, seq.id)
	}
	s.gone.add(seq.id, reason)
}

// End ends sequence id if it is active (a stream that carried it closed),
// saying why to its later steps; steps under way finish. It reports
// whether the sequence was active.
func (s *Store) End(id, reason string) bool {
	if s.CheckID(id) != nil {
		return false
	}
	if r := s.router.Load(); r != nil {
		if peer, local := (*r).Owner(id); !local {
			return (*r).ForwardEnd(context.Background(), peer, id, reason) == nil
		}
	}
	return s.EndHere(id, reason)
}

// EndHere is End in this process.
func (s *Store) EndHere(id, reason string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	seq := s.active[id]
	if seq == nil {
		return false
	}
	s.forget(seq, reason)
	s.ended.Add(1)
	return true
}

// Reap frees the sequences idle for sequence.max_idle or longer; the
// reaper calls it on every tick. It returns how many it freed.
func (s *Store) Reap() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Now()
	n := 0
	for _, seq := range s.active {
		if seq.busy == 0 && now.Sub(seq.last) >= s.o.MaxIdle {
			s.forget(seq, ReasonExpired)
			n++
		}
	}
	s.expired.Add(uint64(n))
	return n
}

// EndAll ends every active sequence, saying why to their later steps (a
// model reloaded, a worker going away); steps under way finish. It
// returns how many it ended.
func (s *Store) EndAll(reason string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, seq := range s.active {
		s.forget(seq, reason)
		n++
	}
	s.ended.Add(uint64(n))
	return n
}

// Close refuses new steps (saying reason), lets those under way finish
// (or ctx end), ends every sequence and stops the store's goroutines.
func (s *Store) Close(ctx context.Context, reason string) error {
	s.mu.Lock()
	if s.closed == "" {
		s.closed = reason
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.inFlight.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("sequence steps still running at shutdown: %w", ctx.Err())
	}
	s.EndAll(reason)
	s.once.Do(func() { close(s.stop) })
	if err == nil {
		s.loops.Wait()
	}
	return err
}

func (s *Store) reaper(ticks <-chan time.Time, stopTicker func()) {
	defer s.loops.Done()
	defer stopTicker()
	for {
		select {
		case <-s.stop:
			return
		case <-ticks:
			s.Reap()
		}
	}
}
