package budget

import (
	"context"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// stringBytes is what one string element of an output is counted as: a
// string header, before its bytes.
const stringBytes = 16

// Outputs estimates the memory of the outputs of a run of info's model on
// inputs (in the model's input order; nil for an optional input left
// out), before it runs: each tensor output's shape is the model's, a
// fixed dimension as it is, a dynamic one named like a dimension of an
// input (the batch, the sequence) as that input's, and one it cannot
// bind counted as 1. The estimate is therefore a lower bound where the
// model leaves dimensions unnamed, and exact for the models whose
// outputs follow their inputs' dimensions (classifiers, embeddings,
// detectors, token classifiers).
func Outputs(info core.ModelInfo, inputs []*tensor.Tensor) int64 {
	dims := map[string]int64{}
	for k, in := range info.Inputs {
		if k >= len(inputs) || inputs[k] == nil {
			continue
		}
		t := inputs[k]
		for a, name := range in.DimNames {
			if name != "" && a < len(t.Shape) {
				dims[name] = max(dims[name], t.Shape[a])
			}
		}
	}
	var total int64
	for _, out := range info.Outputs {
		if out.Kind != core.KindTensor && out.Kind != "" {
			continue
		}
		size := int64(stringBytes)
		if dt, ok := tensor.ParseDType(out.Type); ok && dt != tensor.String {
			size = int64(dt.Size())
		}
		n := int64(1)
		for a, d := range out.Shape {
			if d < 0 {
				d = 1
				if a < len(out.DimNames) && out.DimNames[a] != "" {
					d = max(dims[out.DimNames[a]], 1)
				}
			}
			if d > 0 && n > (1<<62)/d {
				return 1 << 62
			}
			n *= d
		}
		total += n * size
		if total < 0 || total > 1<<62 {
			return 1 << 62
		}
	}
	return total
}

// ReserveRun reserves, against the request's ticket, the memory of the
// outputs of a run of info's model on inputs (Outputs), and of the answer
// they are written into, before the run: three times the outputs, since a
// JSON answer writes a float32 in about ten bytes.
func ReserveRun(ctx context.Context, info core.ModelInfo, inputs []*tensor.Tensor) error {
	return Reserve(ctx, answerCopies*Outputs(info, inputs), "for its outputs and its answer")
}

// answerCopies is what the outputs are counted at: themselves, and their
// encoding in the answer.
const answerCopies = 3

// ReserveRead reserves, against the request's ticket, the memory of
// reading a body of contentLength bytes (as its header says; negative
// when unknown), at most max, before it is read; it returns what it
// reserved, for ReserveBody.
func ReserveRead(ctx context.Context, contentLength, max int64) (int64, error) {
	n := min(contentLength, max)
	if n <= 0 {
		return 0, nil
	}
	return n, Reserve(ctx, n, "to read its body")
}

// ReserveBody reserves, against the request's ticket, the memory of a
// body of size bytes that holds values values to decode (0 for a body of
// pictures or binary tensors): the body itself and the strings or bytes
// it decodes into, and each value decoded into an element of at most
// eight bytes; read is what ReserveRead reserved of it.
func ReserveBody(ctx context.Context, size, values, read int64) error {
	return Reserve(ctx, 2*size+8*values-read, "to decode its body")
}
