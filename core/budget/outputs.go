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
// outputs of a run of info's model on inputs (Outputs), before the run.
func ReserveRun(ctx context.Context, info core.ModelInfo, inputs []*tensor.Tensor) error {
	return Reserve(ctx, Outputs(info, inputs), "for its outputs")
}
