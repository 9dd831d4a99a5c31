package grpcapi

import (
	"fmt"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/grpc/inference"
)

// encodeResponse builds the inference response. It copies what it needs
// out of res, which the caller closes before the response is sent.
func encodeResponse(r *inference.ModelInferRequest, v *view, req *inferRequest, res core.Result) (*inference.ModelInferResponse, error) {
	if res.Len() != len(v.outputs) {
		return nil, fmt.Errorf("the run gave %d outputs, the model has %d", res.Len(), len(v.outputs))
	}
	which := req.outputs
	if which == nil {
		for i := range v.outputs {
			if v.outputs[i].isTensor {
				which = append(which, i)
			}
		}
	}
	raw := req.raw
	for _, i := range which {
		if contentsFieldOf(v.outputs[i].dtype) == "" {
			raw = true // FP16 and BF16 have no typed field
		}
	}
	out := &inference.ModelInferResponse{
		ModelName:    r.GetModelName(),
		ModelVersion: v.version,
		Id:           r.GetId(),
		Parameters:   r.GetParameters(),
		Outputs:      make([]*inference.ModelInferResponse_InferOutputTensor, 0, len(which)),
	}
	if raw {
		out.RawOutputContents = make([][]byte, 0, len(which))
	}
	for _, i := range which {
		val, err := res.Value(i)
		if err != nil {
			return nil, fmt.Errorf("output '%s': %w", v.outputs[i].name, err)
		}
		if val.Kind != core.KindTensor || val.Tensor == nil {
			return nil, fmt.Errorf("output '%s' is a %s, not a tensor", v.outputs[i].name, val.Kind)
		}
		t := val.Tensor
		o := &inference.ModelInferResponse_InferOutputTensor{
			Name:     v.outputs[i].name,
			Datatype: Datatype(t.DType),
			Shape:    append([]int64{}, t.Shape...),
		}
		if raw {
			out.RawOutputContents = append(out.RawOutputContents, tensor.AppendRaw(make([]byte, 0, tensor.RawSize(t)), t))
		} else {
			c, err := contentsOf(t)
			if err != nil {
				return nil, fmt.Errorf("output '%s': %w", v.outputs[i].name, err)
			}
			o.Contents = c
		}
		out.Outputs = append(out.Outputs, o)
	}
	return out, nil
}

// widen converts elements to the wider type of their contents field.
func widen[N int8 | int16 | uint8 | uint16, W int32 | uint32](in []N) []W {
	out := make([]W, len(in))
	for i, v := range in {
		out[i] = W(v)
	}
	return out
}

// contentsOf copies t's elements into the typed contents field of its
// datatype.
func contentsOf(t *tensor.Tensor) (*inference.InferTensorContents, error) {
	c := &inference.InferTensorContents{}
	switch d := t.Data.(type) {
	case []bool:
		c.BoolContents = append([]bool{}, d...)
	case []int8:
		c.IntContents = widen[int8, int32](d)
	case []int16:
		c.IntContents = widen[int16, int32](d)
	case []int32:
		c.IntContents = append([]int32{}, d...)
	case []int64:
		c.Int64Contents = append([]int64{}, d...)
	case []uint8:
		c.UintContents = widen[uint8, uint32](d)
	case []uint16:
		if t.DType != tensor.Uint16 {
			return nil, fmt.Errorf("%v has no typed contents field", t.DType)
		}
		c.UintContents = widen[uint16, uint32](d)
	case []uint32:
		c.UintContents = append([]uint32{}, d...)
	case []uint64:
		c.Uint64Contents = append([]uint64{}, d...)
	case []float32:
		c.Fp32Contents = append([]float32{}, d...)
	case []float64:
		c.Fp64Contents = append([]float64{}, d...)
	case []string:
		c.BytesContents = make([][]byte, len(d))
		for i, s := range d {
			c.BytesContents[i] = []byte(s)
		}
	default:
		return nil, fmt.Errorf("unsupported element data %T", t.Data)
	}
	return c, nil
}
