package oip

import (
	"math"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport"
)

// The request parameters the protocol gives a meaning to.
const (
	// ParamBinaryDataOutput asks for every output as binary data (REST)
	// or in raw_output_contents (gRPC).
	ParamBinaryDataOutput = "binary_data_output"
	// ParamSharedMemory is the shared-memory extension's, refused.
	ParamSharedMemory = "shared_memory_region"
	// ParamClassification is the classification extension's, refused.
	ParamClassification = "classification"
	// ParamRaw asks for the outputs svc.yml gives a meaning (classify,
	// ctc) as the model's tensors instead.
	ParamRaw = "raw"
	// ParamCache false bypasses the model's response cache (svc.yml's
	// models.NAME.cache): the model runs and its answer is not kept.
	ParamCache = "cache"
	// ParamTimeout is the request's own timeout in microseconds, as
	// Triton reads it (0: none), bounded by runtime.timeout.
	ParamTimeout = "timeout"
	// ParamPriority is the request's priority as Triton numbers it: 1 is
	// high (it overtakes queued work), 0 (the default) and larger numbers
	// are normal.
	ParamPriority = "priority"
)

// maxTimeoutMicros is the largest timeout parameter a time.Duration holds.
const maxTimeoutMicros = int64(math.MaxInt64 / int64(time.Microsecond))

// SetTimeoutMicros sets the request's parameters.timeout; what names the
// parameter in the error for one out of range.
func (r *Request) SetTimeoutMicros(us int64, what string) error {
	if us < 0 || us > maxTimeoutMicros {
		return invalid("Invalid %s: expected microseconds from 0 to %d, got %d", what, maxTimeoutMicros, us)
	}
	r.timeout = time.Duration(us) * time.Microsecond
	return nil
}

// SetPriority sets the request's parameters.priority (see ParamPriority).
func (r *Request) SetPriority(n uint64) { r.priority = core.PriorityFromTriton(n) }

// Dialect is how a codec's messages name the parts of a request: the JSON
// codec quotes member names ("name") and says body, the protobuf codec
// names fields bare (name) and says request.
type Dialect uint8

// The codecs' dialects.
const (
	JSON Dialect = iota
	Protobuf
)

// field names a member or field of the request in messages.
func (d Dialect) field(name string) string {
	if d == JSON {
		return `"` + name + `"`
	}
	return name
}

// carrier is what carries the data in messages.
func (d Dialect) carrier() string {
	if d == JSON {
		return "body"
	}
	return "request"
}

// InvalidBool refuses a parameter (what) that should be a boolean.
func InvalidBool(d Dialect, what string) *Error {
	expected := "a bool_param"
	if d == JSON {
		expected = "true or false"
	}
	return invalid("Invalid %s: expected %s", what, expected)
}

// InputParameter checks the key of one of an input's parameters: the
// error for one the protocol refuses, else nil.
func InputParameter(d Dialect, key string) error {
	if key == ParamSharedMemory {
		return invalid("Input parameters."+ParamSharedMemory+": the shared-memory extension is not supported; send the data in the %s", d.carrier())
	}
	return nil
}

// OutputParameter checks the key of one of a requested output's
// parameters: the error for one the protocol refuses, else nil.
func OutputParameter(key string) error {
	switch key {
	case ParamClassification:
		return invalid("Output parameters." + ParamClassification + ": the classification extension is not supported")
	case ParamSharedMemory:
		return invalid("Output parameters." + ParamSharedMemory + ": the shared-memory extension is not supported")
	}
	return nil
}

// InputHeader is what a request says of one input besides its data: what
// Request.CheckInput resolves against the model.
type InputHeader struct {
	Pos                            int // in the request's inputs
	Name, Datatype                 string
	HasName, HasDatatype, HasShape bool
	Shape                          []int64
	// Refused is InputParameter's error for one of the input's
	// parameters, reported once the name is known. A codec that reads
	// the parameters as they come (JSON) reports it there instead.
	Refused error
}

// OutputHeader is what a request says of one output it asks for.
type OutputHeader struct {
	Pos     int // in the request's outputs
	Name    string
	HasName bool
	// Binary is the output's parameters.binary_data, when BinarySet.
	Binary, BinarySet bool
	// Refused is OutputParameter's error for one of the output's
	// parameters, reported once the name is known to be there (see
	// InputHeader.Refused).
	Refused error
}

// RequestedOutput is one output a response carries.
type RequestedOutput struct {
	Index int // in the model's outputs
	// Binary is parameters.binary_data, when BinarySet.
	Binary, BinarySet bool
}

// Request is an inference request of the protocol, whatever its wire form:
// one tensor per model input, the outputs asked for, and whether outputs
// go as binary data. A codec fills it as it decodes, through the checks
// below, which refuse what does not fit the model.
type Request struct {
	view *View
	// inputs has one tensor per model input, nil for one not sent.
	inputs []*tensor.Tensor
	// seen marks the model inputs the request has named: a bit each in
	// seenFew for the first 64, the others in seenMore.
	seenFew  uint64
	seenMore []bool
	// outputs are the requested outputs, in the request's order; nil
	// when the request names none.
	outputs      []RequestedOutput
	binaryOutput bool
	// raw asks for decoded outputs as the model's tensors (parameters.raw).
	raw bool
	// decoding is the decoded outputs' settings (parameters.confidence
	// and the like) and where the pictures went.
	decoding *codec.Decoding
	// cache is the request's dealing with the response cache.
	cache core.CacheControl
	// timeout is parameters.timeout (0: none); priority parameters.priority.
	timeout  time.Duration
	priority core.Priority
	// began is when decoding began, for the request's trace (zero: no
	// trace); arrived is when the request arrived, which its timeout
	// counts from (zero: when it runs).
	began, arrived time.Time
	// text is the batch of a request that sends text (nil: none), for one
	// run whose outputs it asks for; answers are the answers of one that
	// asks only for the answer to text, its texts run in batches.
	text    *codec.Batch
	answers *codec.Answers
	// pictures counts the pictures its inputs' shapes declare.
	pictures int64
	// seq is what the request says of its sequence (sequence.go).
	seq Sequence
	// params are the request's other parameters, as text, for a runner
	// that reads them (core.WithParams: a pipeline's overrides).
	params map[string]string
}

// SetParam records one of the request's parameters that the protocol
// does not read itself, as text, for the runner (core.ParamsOf).
func (r *Request) SetParam(name, value string) {
	if r.params == nil {
		r.params = map[string]string{}
	}
	r.params[name] = value
}

// BeginTrace marks the start of decoding for ctx's trace (see
// core.TraceStart); View.Run reports the decoding step up to the run.
func (r *Request) BeginTrace(t time.Time) { r.began = t }

// Arrived sets when the request arrived: its timeout (parameters.timeout)
// counts from then, reading and decoding it included.
func (r *Request) Arrived(t time.Time) { r.arrived = t }

// SetRaw sets the request's parameters.raw: decoded outputs answer the
// model's tensors, not their meaning.
func (r *Request) SetRaw(b bool) { r.raw = b }

// SetDecodingParam sets one of the decoded outputs' request parameters
// (codec.DetectionParams) from its text; its error names the parameter
// and what it takes.
func (r *Request) SetDecodingParam(name, value string) error {
	if err := r.decoding.SetParam(name, value); err != nil {
		return invalid("parameters.%s", err)
	}
	return nil
}

// BypassCache makes the request bypass the response cache when b
// (parameters.cache false, or Cache-Control: no-cache); it never undoes
// an earlier bypass.
func (r *Request) BypassCache(b bool) { r.cache.Bypass = r.cache.Bypass || b }

// CacheStatus is what the response cache did for the request, once it
// has run.
func (r *Request) CacheStatus() core.CacheStatus { return r.cache.Status }

// NewRequest starts a request to the model.
func (v *View) NewRequest() Request {
	r := Request{view: v, inputs: make([]*tensor.Tensor, len(v.specs)), decoding: v.media.NewDecoding()}
	if len(v.specs) > 64 {
		r.seenMore = make([]bool, len(v.specs)-64)
	}
	return r
}

// seen reports whether the request has named the model's input k.
func (r *Request) seen(k int) bool {
	if k < 64 {
		return r.seenFew&(1<<k) != 0
	}
	return r.seenMore[k-64]
}

// see marks the model's input k named.
func (r *Request) see(k int) {
	if k < 64 {
		r.seenFew |= 1 << k
		return
	}
	r.seenMore[k-64] = true
}

// CheckInput resolves an input against the model: its name, datatype and
// shape. It returns the index of the model's input and the number of
// elements the shape takes.
func (r *Request) CheckInput(d Dialect, in *InputHeader) (int, int64, error) {
	v := r.view
	if !in.HasName {
		return 0, 0, invalid("Invalid inputs[%d]: %s is missing", in.Pos, d.field("name"))
	}
	k := v.inputIndex(in.Name)
	if k < 0 {
		return 0, 0, invalid("Unknown input '%s'; the model's inputs are: %s", transport.Quote(in.Name), v.inputList)
	}
	spec := &v.specs[k]
	switch {
	case !spec.DType.Valid():
		return 0, 0, invalid("Input '%s' is not a tensor; the Open Inference Protocol carries tensors only", spec.Name)
	case r.seen(k):
		return 0, 0, invalid("Duplicate input '%s'", spec.Name)
	case in.Refused != nil:
		return 0, 0, in.Refused
	case !in.HasDatatype:
		return 0, 0, invalid("Input '%s': %s is missing (the model takes %s)", spec.Name, d.field("datatype"), Datatype(spec.DType))
	}
	dt, ok := ParseDatatype(in.Datatype)
	switch {
	case !ok:
		return 0, 0, invalid("Invalid datatype '%s' for input '%s': expected one of %s", transport.Quote(in.Datatype), spec.Name, datatypeList)
	case dt != spec.DType:
		return 0, 0, invalid("Invalid datatype for input '%s': the model takes %s, got %s", spec.Name, Datatype(spec.DType), in.Datatype)
	case !in.HasShape:
		return 0, 0, invalid("Input '%s': %s is missing", spec.Name, d.field("shape"))
	}
	if err := checkShape(spec, in.Shape); err != nil {
		return 0, 0, err
	}
	count, err := elementCount(spec.Name, in.Shape)
	if err != nil {
		return 0, 0, err
	}
	if err := r.countItems(k, count); err != nil {
		return 0, 0, err
	}
	r.see(k)
	return k, count, nil
}

// countItems refuses, before their data is decoded, the pictures of an
// image input or the texts of a text request past the limits, from the
// count the input's shape declares.
func (r *Request) countItems(k int, count int64) error {
	v := r.view
	if im := v.media.ImageAt(k); im != nil {
		r.pictures += count
		input := im.Name
		if r.pictures != count {
			input = ""
		}
		return v.media.CountPictures(input, int(min(r.pictures, 1<<40)))
	}
	if v.text != nil && k == v.text.text {
		return v.text.x.CountTexts(int(min(count, 1<<40)))
	}
	return nil
}

// checkShape checks a request's shape against the rank and fixed
// dimensions of the model's input (any shape for an input of unknown
// rank).
func checkShape(s *tensor.Spec, got []int64) error {
	if s.Shape == nil {
		return nil
	}
	if len(got) != len(s.Shape) {
		return invalid("Invalid shape for '%s': expected rank %d %s, got rank %d %s",
			s.Name, len(s.Shape), tensor.FormatShape(s.Shape), len(got), tensor.FormatShape(got))
	}
	for i, want := range s.Shape {
		if want >= 0 && got[i] != want {
			return invalid("Invalid shape for '%s': expected %s, got %s", s.Name, tensor.FormatShape(s.Shape), tensor.FormatShape(got))
		}
	}
	return nil
}

// SetInput gives the model's input k (as CheckInput returned it) its
// tensor.
func (r *Request) SetInput(k int, t *tensor.Tensor) { r.inputs[k] = t }

// Inputs has one tensor per model input, nil for one not sent.
func (r *Request) Inputs() []*tensor.Tensor { return r.inputs }

// CheckRequired refuses a request without one of the model's required
// inputs.
func (r *Request) CheckRequired() error {
	if r.seq.set {
		if err := r.checkSequence(); err != nil {
			return err
		}
	}
	for i := range r.view.specs {
		if r.view.specs[i].Required && r.inputs[i] == nil && !(r.seq.set && r.view.stateInput(i)) {
			return invalid("Missing required input: '%s'", r.view.specs[i].Name)
		}
	}
	return nil
}

// SelectOutputs says that the request names its outputs (n of them, to
// size the list): the response carries those AddOutput adds, none until
// then.
func (r *Request) SelectOutputs(n int) {
	r.outputs = make([]RequestedOutput, 0, n)
}

// AddOutput resolves an output the request asks for against the model and
// adds it to the response's.
func (r *Request) AddOutput(d Dialect, o *OutputHeader) error {
	v := r.view
	if !o.HasName {
		return invalid("Invalid outputs[%d]: %s is missing", o.Pos, d.field("name"))
	}
	if o.Refused != nil {
		return o.Refused
	}
	k := v.outputIndex(o.Name)
	if k < 0 {
		return invalid("Unknown output '%s'; the model's outputs are: %s", transport.Quote(o.Name), v.outputList)
	}
	if !v.outputs[k].isTensor {
		return invalid("Output '%s' is a %s, not a tensor; the Open Inference Protocol carries tensors only", o.Name, v.outputs[k].kind)
	}
	for _, prev := range r.outputs {
		if prev.Index == k {
			return invalid("Duplicate output '%s'", o.Name)
		}
	}
	r.outputs = append(r.outputs, RequestedOutput{Index: k, Binary: o.Binary, BinarySet: o.BinarySet})
	return nil
}

// SetBinaryOutput sets the request's binary_data_output: outputs go as
// binary data unless their own parameters say otherwise.
func (r *Request) SetBinaryOutput(b bool) { r.binaryOutput = b }

// BinaryOutput is the request's binary_data_output.
func (r *Request) BinaryOutput() bool { return r.binaryOutput }

// ResponseOutputs are the outputs the response carries, in order: those
// the request names, or every tensor output of the model.
func (r *Request) ResponseOutputs() []RequestedOutput {
	if r.outputs == nil && (r.text != nil || r.answers != nil) {
		return r.view.text.answer
	}
	if r.outputs == nil && r.seq.set && !r.seq.State {
		return r.view.stepOutputs()
	}
	if r.outputs == nil && !r.raw {
		return r.view.answered
	}
	if r.outputs == nil {
		return r.view.tensors
	}
	return r.outputs
}

// Binary reports whether output o goes as binary data: its own
// parameters.binary_data when set, else binary_data_output.
func (r *Request) Binary(o RequestedOutput) bool {
	if o.BinarySet {
		return o.Binary
	}
	return r.binaryOutput
}
