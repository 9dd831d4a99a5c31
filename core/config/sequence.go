package config

import (
	"fmt"
	"time"
)

// Sequence configures sequences with implicit state (core/seq): stateful
// models whose state svc keeps between the steps of each sequence.
type Sequence struct {
	// MaxIdle frees a sequence with no step for this long (default 60s).
	MaxIdle Duration `yaml:"max_idle"`
	// MaxActive bounds the active sequences: a new one beyond it gets a
	// 429 (RESOURCE_EXHAUSTED on gRPC). Default 10000.
	MaxActive int `yaml:"max_active"`
	// Batching runs the steps of different sequences that arrive together
	// as one run, on the state's batch axis (nil = true).
	Batching *bool `yaml:"batching"`
	// MaxBatchSize caps the steps in one run (default 64).
	MaxBatchSize int `yaml:"max_batch_size"`
	// MaxIDLength bounds a sequence id, in bytes: a longer one is
	// refused with a 400 (INVALID_ARGUMENT on gRPC) before anything is
	// stored. Default 256.
	MaxIDLength ByteSize `yaml:"max_id_length"`
	// MaxConnections bounds the open WebSocket streams
	// (/v2/models/NAME/stream): an upgrade beyond it gets a 429. Default
	// 1000.
	MaxConnections int `yaml:"max_connections"`
}

// ModelSequence is what svc.yml declares of one model's sequences
// (models.NAME.sequence).
type ModelSequence struct {
	// States pairs each state input with the output that gives its next
	// value (none: found by convention, state → stateN, h/c → hn/cn,
	// past_key_values.* → present.*).
	States map[string]string `yaml:"states"`
	// Initial is a state input's first value, every element (default 0).
	Initial map[string]float64 `yaml:"initial"`
	// Context carries the last N elements along an input's last axis into
	// the next step, before what the client sends (Silero VAD v5: input:
	// 64).
	Context map[string]int `yaml:"context"`
}

// Defaults of Sequence.
const (
	DefaultSequenceMaxIdle   = 60 * time.Second
	DefaultSequenceMaxActive = 10000
	DefaultSequenceMaxBatch  = 64
	// DefaultSequenceMaxIDLength is the longest sequence id, in bytes.
	DefaultSequenceMaxIDLength = 256
	// MinSequenceIDLength is the least sequence.max_id_length: the ids
	// svc gives a stream's own sequence (core/seq.IDs: "grpc-stream-" or
	// "ws-", a token of the process, a uint64) must fit, and so does a
	// uint64 id's decimal string.
	MinSequenceIDLength = 48
	// DefaultSequenceMaxConnections is the most open WebSocket streams.
	DefaultSequenceMaxConnections = 1000
)

// BatchingOn is Batching with its default.
func (s Sequence) BatchingOn() bool { return s.Batching == nil || *s.Batching }

// check returns the first invalid key of the sequence section, and why.
func (s Sequence) check() (string, string) {
	switch {
	case s.MaxIdle <= 0:
		return "sequence.max_idle", "must be positive"
	case s.MaxActive < 1:
		return "sequence.max_active", "must be at least 1"
	case s.MaxBatchSize < 1:
		return "sequence.max_batch_size", "must be at least 1"
	case s.MaxIDLength < MinSequenceIDLength:
		return "sequence.max_id_length", fmt.Sprintf("must be at least %d bytes, the length of the ids svc gives the sequences of gRPC and WebSocket streams", MinSequenceIDLength)
	case s.MaxConnections < 1:
		return "sequence.max_connections", "must be at least 1"
	}
	return "", ""
}

// check returns the first invalid key of a model's sequence declaration
// (under key), and why.
func (m *ModelSequence) check(key string) (string, string) {
	for name, n := range m.Context {
		if n < 1 {
			return key + ".context." + name, "must be at least 1"
		}
	}
	for in, out := range m.States {
		if out == "" {
			return key + ".states." + in, "names no output"
		}
	}
	return "", ""
}
