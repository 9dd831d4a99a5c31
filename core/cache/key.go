package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"io"
	"unsafe"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// KeyOf is the key of inputs (in the model's input order, nil for an
// input not sent) run by the generation of epoch: SHA-256 over the epoch
// and each input's presence, element type, shape and elements (strings
// each with its length), so that two requests share a key exactly when
// the model would run the same tensors.
func KeyOf(epoch uint64, inputs []*tensor.Tensor) Key {
	h := sha256.New()
	var b [8]byte
	word := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		_, _ = h.Write(b[:])
	}
	word(epoch)
	word(uint64(len(inputs)))
	for _, t := range inputs {
		if t == nil {
			word(0)
			continue
		}
		word(1 + uint64(t.DType))
		word(uint64(len(t.Shape)))
		for _, d := range t.Shape {
			word(uint64(d))
		}
		writeElements(h, word, t)
	}
	var k Key
	h.Sum(k[:0])
	return k
}

// writeElements hashes t's elements: numbers as their bytes in memory
// (the layout is the machine's, and so is the cache's), strings each
// after its length.
func writeElements(h hash.Hash, word func(uint64), t *tensor.Tensor) {
	if s, ok := t.Data.([]string); ok {
		word(uint64(len(s)))
		for _, e := range s {
			word(uint64(len(e)))
			_, _ = io.WriteString(h, e)
		}
		return
	}
	raw := tensor.RawView(t)
	word(uint64(len(raw)))
	_, _ = h.Write(raw)
}

// Fixed costs counted in an entry's size beside its elements: the entry,
// its key and its place in the index and the list; each tensor's header
// and each string's.
const (
	entryOverhead  = 192
	tensorOverhead = 64
	stringOverhead = int64(unsafe.Sizeof(""))
)

// entrySize is the bytes an entry of outs holds.
func entrySize(outs []*tensor.Tensor) int64 {
	n := int64(entryOverhead)
	for _, t := range outs {
		n += tensorOverhead + 8*int64(len(t.Shape))
		if s, ok := t.Data.([]string); ok {
			for _, e := range s {
				n += stringOverhead + int64(len(e))
			}
			continue
		}
		n += int64(t.Len() * t.DType.Size())
	}
	return n
}

// copyOutputs copies res's outputs into memory of the cache's own, or
// returns nil when one of them is not a tensor (a sequence or a map,
// which the cache does not keep).
func copyOutputs(res core.Result) []*tensor.Tensor {
	outs := make([]*tensor.Tensor, res.Len())
	for i := range outs {
		v, err := res.Value(i)
		if err != nil || v.Kind != core.KindTensor || v.Tensor == nil {
			return nil
		}
		t := cloneTensor(v.Tensor)
		if t == nil {
			return nil
		}
		outs[i] = t
	}
	return outs
}

// cloneTensor is a copy of t in memory of its own (nil for elements of
// an unknown type).
func cloneTensor(t *tensor.Tensor) *tensor.Tensor {
	var data any
	switch d := t.Data.(type) {
	case []float32:
		data = append([]float32{}, d...)
	case []float64:
		data = append([]float64{}, d...)
	case []int8:
		data = append([]int8{}, d...)
	case []int16:
		data = append([]int16{}, d...)
	case []int32:
		data = append([]int32{}, d...)
	case []int64:
		data = append([]int64{}, d...)
	case []uint8:
		data = append([]uint8{}, d...)
	case []uint16:
		data = append([]uint16{}, d...)
	case []uint32:
		data = append([]uint32{}, d...)
	case []uint64:
		data = append([]uint64{}, d...)
	case []bool:
		data = append([]bool{}, d...)
	case []string:
		data = append([]string{}, d...)
	default:
		return nil
	}
	return &tensor.Tensor{DType: t.DType, Shape: append([]int64{}, t.Shape...), Data: data}
}
