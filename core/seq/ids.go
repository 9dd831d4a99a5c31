package seq

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"
)

// IDs names the sequences a process starts for its own streams: a
// WebSocket connection, a gRPC stream's steps that name no sequence_id.
// An id is the prefix, a random token drawn once per process, and a
// count. Under --workers each worker starts such streams, and a sequence
// lives on the worker its id hashes to, whichever worker took the
// stream: ids counted by each worker alone would repeat across the
// workers (two streams sharing one sequence's state) and across a
// worker's restarts; the token keeps them apart. An id is at most 41
// bytes for a prefix of up to 12, within the least sequence.max_id_length
// (48).
type IDs struct {
	prefix string
	n      atomic.Uint64
}

// NewIDs returns the ids of prefix for this process.
func NewIDs(prefix string) *IDs {
	var token [4]byte
	_, _ = rand.Read(token[:]) // crypto/rand's Read never fails
	return &IDs{prefix: prefix + hex.EncodeToString(token[:]) + "-"}
}

// Next is a new id.
func (g *IDs) Next() string { return g.prefix + strconv.FormatUint(g.n.Add(1), 10) }
