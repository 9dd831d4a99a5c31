// Package core is the served model's lifecycle, protocol-neutral: a Model
// loads a generation of the model (Loader, through the ONNX Runtime
// boundary in core/session), prepares what each protocol derives from it
// (Preparer), warms it up, serves it through a Runner (one session, or
// the scheduler in core/sched in front of the sessions) and swaps a new
// generation in on a reload without dropping a request; its states
// (loading, warming up, ready, draining, failed) are what the health
// routes report. It also holds what every protocol shares about a
// request: the error kinds each maps to its own statuses (InputError,
// LimitError, BusyError, TimeoutError, InferenceError, NotReadyError),
// the request's deadline, priority and trace, and the RunObserver that
// the metrics implement.
//
// Below it: core/session (everything that calls ONNX Runtime),
// core/sched (the scheduler: pools, batching, tuning), core/seq (the
// state of sequences), core/codec (what users send and what outputs
// mean: pictures, text, decoded outputs), core/budget (the memory of
// the requests in flight), core/workers (--workers), core/config
// (svc.yml), core/tensor (tensors and their JSON). Nothing under core
// knows HTTP or gRPC; the protocols in transport/ call it.
package core
