package seq

import "hash/maphash"

// endedSet remembers why the last sequences ended (at most remembered
// of them), so that a later step of one can say so. It holds no id: each
// is a 64-bit hash under the store's own seed, and each reason an index
// into the reasons met so far, so its memory is bounded in bytes as well
// as in count, whatever the length of the ids. Two ids of the same hash
// (one chance in 2⁶⁴ per pair, and the seed is not known outside) would
// share a reason. Not safe for concurrent use: the store's lock guards it.
type endedSet struct {
	seed maphash.Seed
	// by holds each remembered hash's reason and its slot in ring.
	by map[uint64]endedEntry
	// ring holds the remembered hashes, oldest at next once full.
	ring []uint64
	next int
	// reasons are the reasons met, in order; an entry holds its index.
	reasons []string
}

type endedEntry struct {
	reason uint8
	slot   uint32
}

// maxReasons bounds the reasons kept: they are the fixed reasons of the
// code (the store's, the streams', a reload's), a handful; a reason met
// past the bound is remembered as reasonOther.
const maxReasons = 255

// reasonOther is what a sequence ended for a reason past maxReasons says.
const reasonOther = "ended"

func newEndedSet(seed maphash.Seed) endedSet {
	return endedSet{
		seed:    seed,
		by:      map[uint64]endedEntry{},
		reasons: []string{reasonOther, ReasonEnded, ReasonExpired, ReasonRestarted, ReasonReloaded},
	}
}

func (e *endedSet) hash(id string) uint64 { return maphash.String(e.seed, id) }

// add remembers that id ended for reason, forgetting the oldest beyond
// remembered.
func (e *endedSet) add(id, reason string) {
	h := e.hash(id)
	r := e.index(reason)
	if old, ok := e.by[h]; ok {
		e.by[h] = endedEntry{reason: r, slot: old.slot}
		return
	}
	slot := e.next
	if len(e.ring) < remembered {
		e.ring = append(e.ring, h)
	} else {
		// The oldest goes, unless its hash was remembered again since
		// (dropped, then added in another slot).
		if old, ok := e.by[e.ring[slot]]; ok && int(old.slot) == slot {
			delete(e.by, e.ring[slot])
		}
		e.ring[slot] = h
	}
	e.next = (slot + 1) % remembered
	e.by[h] = endedEntry{reason: r, slot: uint32(slot)}
}

// reason says why id ended, if it is remembered.
func (e *endedSet) reason(id string) (string, bool) {
	got, ok := e.by[e.hash(id)]
	if !ok {
		return "", false
	}
	return e.reasons[got.reason], true
}

// drop forgets id (it started again).
func (e *endedSet) drop(id string) { delete(e.by, e.hash(id)) }

// len is how many ended ids are remembered.
func (e *endedSet) len() int { return len(e.by) }

func (e *endedSet) index(reason string) uint8 {
	for i, r := range e.reasons {
		if r == reason {
			return uint8(i)
		}
	}
	if len(e.reasons) >= maxReasons {
		return 0
	}
	e.reasons = append(e.reasons, reason)
	return uint8(len(e.reasons) - 1)
}
