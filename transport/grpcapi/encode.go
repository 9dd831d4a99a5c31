package grpcapi

import (
	"fmt"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
	"github.com/svc-dev/svc/transport/oip"
)

// encodeResponse builds the inference response. It copies what it needs
// out of res, which the caller closes before the response is sent.
// Outputs go in raw_output_contents when the request asks for it, and
// when one of them is FP16 or BF16, which have no typed field.
func encodeResponse(r *inference.ModelInferRequest, v *view, req *oip.Request, res core.Result) (*inference.ModelInferResponse, error) {
	if err := v.CheckResult(res); err != nil {
		return nil, err
	}
	which := req.ResponseOutputs()
	raw := req.BinaryOutput()
	for _, o := range which {
		if contentsFieldOf(v.OutputDatatype(o.Index, req)) == "" {
			raw = true
		}
	}
	out := &inference.ModelInferResponse{
		ModelName:    r.GetModelName(),
		ModelVersion: v.Version(),
		Id:           r.GetId(),
		Parameters:   r.GetParameters(),
		Outputs:      make([]*inference.ModelInferResponse_InferOutputTensor, 0, len(which)),
	}
	if raw {
		out.RawOutputContents = make([][]byte, 0, len(which))
	}
	for _, o := range which {
		t, err := v.OutputTensor(res, o.Index, req)
		if err != nil {
			return nil, err
		}
		ot := &inference.ModelInferResponse_InferOutputTensor{
			Name:     v.OutputName(o.Index),
			Datatype: oip.Datatype(t.DType),
			Shape:    append([]int64{}, t.Shape...),
		}
		if raw {
			out.RawOutputContents = append(out.RawOutputContents, tensor.AppendRaw(make([]byte, 0, tensor.RawSize(t)), t))
		} else {
			c, err := contentsOf(t)
			if err != nil {
				return nil, fmt.Errorf("output '%s': %w", v.OutputName(o.Index), err)
			}
			ot.Contents = c
		}
		out.Outputs = append(out.Outputs, ot)
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
