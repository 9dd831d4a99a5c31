package transport

import (
	"context"
	"net/http"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/config"
)

// Limits are the limits every protocol puts on a request, from svc.yml:
// one options type for rest, oip, grpcapi and stream.
type Limits struct {
	// MaxBodyBytes caps a request body (or gRPC message, or WebSocket
	// message): limits.max_body_size.
	MaxBodyBytes int64
	// MaxElements caps the values of a request (limits.max_elements; 0:
	// MaxBodyBytes / 4).
	MaxElements int64
	// MaxStringBytes caps one string element (limits.max_string_length;
	// 0: any).
	MaxStringBytes int
	// MaxTimeout bounds a request's own timeout (runtime.timeout; 0: no
	// bound).
	MaxTimeout time.Duration
}

// LimitsOf reads the protocols' limits from svc.yml's sections.
func LimitsOf(l config.Limits, r config.Runtime) Limits {
	return Limits{MaxBodyBytes: int64(l.MaxBodyBytes), MaxElements: l.Elements(),
		MaxStringBytes: int(l.MaxStringLength), MaxTimeout: r.Timeout.Std()}.Resolved()
}

// Resolved fills the zero fields with their defaults: a 16 MiB body, a
// quarter of the body's bytes in values.
func (l Limits) Resolved() Limits {
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = config.DefaultMaxBodyBytes
	}
	if l.MaxElements <= 0 {
		l.MaxElements = max(l.MaxBodyBytes/4, 1)
	}
	return l
}

// Inferences is what every protocol does around one inference request,
// written once: the request counted by the model from its arrival to its
// answer, with its outcome; its share of the memory budget (core/budget),
// held until it is answered; its deadline counted from its arrival,
// within Limits.MaxTimeout, and its priority; its body read within the
// limits, its memory reserved before it is read. A protocol begins a
// request with Begin (a sequence's step on a stream with Step), takes the
// generation it runs on and decodes it, runs it through core, encodes the
// answer, and ends it with End. Begin also marks the request for the
// payload logger, when there is one (PayloadTap): what it carried and what
// it was answered are logged for inferences alone.
type Inferences struct {
	Model  *core.Model
	Memory *budget.Memory
	Limits Limits
}

// Inference is one request under way.
type Inference struct {
	// Ctx carries the request's deadline, priority and memory ticket to
	// every layer below.
	Ctx context.Context
	// Start is when the request arrived.
	Start time.Time
	// Outcome is how the request ended, as the protocol tells End; a
	// handler that panics leaves it an inference failure.
	Outcome core.Outcome
	// read is what the body's reservation took before it was read.
	read   int64
	in     *Inferences
	count  bool
	cancel context.CancelFunc
	endMem func()
}

// Begin starts a request that arrived now, on ctx: the model counts it.
func (in *Inferences) Begin(ctx context.Context) *Inference {
	payloadTap(ctx)
	q := in.begin(ctx)
	q.Start = in.Model.BeginRequest()
	q.count = true
	return q
}

// Step starts a step of a sequence on a stream (a WebSocket message, a
// gRPC stream's request): its memory and deadline as a request's, but
// counted by the sequences' own metrics, not as an inference request.
func (in *Inferences) Step(ctx context.Context) *Inference {
	q := in.begin(ctx)
	q.Start = time.Now()
	return q
}

func (in *Inferences) begin(ctx context.Context) *Inference {
	q := &Inference{in: in, Outcome: core.OutcomeInference, cancel: func() {}}
	q.Ctx, q.endMem = in.Memory.Begin(ctx)
	return q
}

// Schedule bounds the request by its own timeout d (none when d <= 0),
// counted from its arrival and capped at Limits.MaxTimeout, and gives it
// priority p.
func (q *Inference) Schedule(d time.Duration, p core.Priority) {
	q.Ctx = core.WithPriority(q.Ctx, p)
	if d > 0 {
		q.cancel()
		q.Ctx, q.cancel = core.WithRequestDeadline(q.Ctx, q.Start, d, q.in.Limits.MaxTimeout)
	}
}

// ReadBody reads r's body within Limits.MaxBodyBytes (ReadBody), having
// reserved its memory from its Content-Length first, and once it is in,
// lifts the server's read deadline (which would otherwise cancel the
// request during a long inference). The caller gives the body back with
// PutBody, also on an error; an error of ReadBody's is answered with
// BodyError.
func (q *Inference) ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	read, err := budget.ReserveRead(q.Ctx, r.ContentLength, q.in.Limits.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	q.read = read
	body, err := ReadBody(r, q.in.Limits.MaxBodyBytes)
	if err != nil {
		return body, err
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	return body, nil
}

// ReserveBody reserves what decoding a body of size bytes makes: the
// strings or bytes it holds, and values elements (0 for a body of
// pictures or binary tensors), beyond what ReadBody reserved.
func (q *Inference) ReserveBody(size, values int64) error {
	return budget.ReserveBody(q.Ctx, size, values, q.read)
}

// End ends the request once its answer is written: its deadline and
// memory are given back, and the model is told its Outcome.
func (q *Inference) End() {
	q.cancel()
	q.endMem()
	if q.count {
		q.in.Model.EndRequest(q.Start, q.Outcome)
	}
}
