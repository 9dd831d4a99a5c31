package core

// The contracts between the model's lifecycle (this package), the ONNX
// Runtime boundary (core/session, which opens sessions) and the scheduler
// (core/sched, which puts them behind one Runner). The Loader joins them:
// it asks the Scheduler to schedule what the Opener opens.

// Provider is the execution provider a session runs on, as svc reports it.
// The providers' own type (providers.Provider) satisfies it.
type Provider interface {
	// Name is the --provider value, e.g. "cuda".
	Name() string
	// ORTName is ONNX Runtime's name, e.g. "CUDAExecutionProvider".
	ORTName() string
	// Platform is a short label for the hardware, e.g. "NVIDIA GPU".
	Platform() string
	// Description says what the provider is.
	Description() string
}

// CPUProvider is the name of the CPU execution provider, the fallback that
// every build has.
const CPUProvider = "cpu"

// Session is one loaded copy of the model, as core/session opens it.
type Session interface {
	Runner
	// Provider is the execution provider the session runs on.
	Provider() Provider
	// Close releases the session.
	Close() error
}

// Opener opens sessions of the served model. core/session provides it.
type Opener interface {
	// Open loads one session; threads > 0 gives it that many intra-op
	// threads instead of runtime.intra_op_threads.
	Open(threads int) (Session, error)
	// Placement finds out where ONNX Runtime places the model's nodes on
	// p. It returns nil and no error when finding out would cost too much
	// (a provider whose sessions compile the model).
	Placement(p Provider) (Placement, error)
}

// Scheduler opens the model's sessions and puts them behind the Runner that
// requests go to. core/sched provides it.
type Scheduler interface {
	Schedule(open Opener) (Schedule, error)
}

// Schedule is the runner in front of the model's sessions.
type Schedule interface {
	Runner
	// Provider is the execution provider the sessions run on.
	Provider() Provider
	// Stats reads the scheduler's state now.
	Stats() SchedStats
	// Close closes every session.
	Close() error
}

// SchedStats is the scheduler's state, read when wanted (metrics read it at
// scrape time): its queue and what its self-tuning controllers have
// decided, as in force now, whether a controller decides it or the
// configuration fixes it.
type SchedStats struct {
	// Queued is the number of requests waiting in the batcher's queue (0
	// without batching).
	Queued int
	// BatchLimit is the most rows a merged run may hold now (0 without
	// batching): batching.max_batch_size, or what adaptive batching has
	// learnt.
	BatchLimit int
	// Sessions is how many runs may be under way at once: the run slots
	// (at least one per session).
	Sessions int
	// GoProcs is the number of Go processors (GOMAXPROCS).
	GoProcs int
	// MemoryReleased is set while the memory reclaimer has given memory
	// back to the operating system and no request has ended since.
	MemoryReleased bool
}
