package oip

import (
	"fmt"
	"strconv"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

// appendResponse writes the JSON part of the inference response to dst and
// returns it with the binary outputs, in order. The chunks may share
// memory with res: write them before closing it.
func appendResponse(dst []byte, v *view, req *inferRequest, res core.Result) ([]byte, [][]byte, error) {
	if res.Len() != len(v.outputs) {
		return dst, nil, fmt.Errorf("the run gave %d outputs, the model has %d", res.Len(), len(v.outputs))
	}
	dst = append(dst, v.responseTop...)
	if req.id != nil {
		dst = append(dst, `"id":`...)
		dst = append(dst, req.id...)
		dst = append(dst, ',')
	}
	if req.params != nil {
		dst = append(dst, `"parameters":`...)
		dst = append(dst, req.params...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"outputs":[`...)
	var chunks [][]byte
	first := true
	emit := func(i int, binary bool) error {
		val, err := res.Value(i)
		if err != nil {
			return fmt.Errorf("output '%s': %w", v.outputs[i].name, err)
		}
		if val.Kind != core.KindTensor || val.Tensor == nil {
			return fmt.Errorf("output '%s' is a %s, not a tensor", v.outputs[i].name, val.Kind)
		}
		t := val.Tensor
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, v.outputs[i].key...)
		dst = append(dst, Datatype(t.DType)...)
		dst = append(dst, `","shape":[`...)
		for k, d := range t.Shape {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, d, 10)
		}
		dst = append(dst, ']')
		if binary {
			c := binaryView(t)
			chunks = append(chunks, c)
			dst = append(dst, `,"parameters":{"binary_data_size":`...)
			dst = strconv.AppendInt(dst, int64(len(c)), 10)
			dst = append(dst, "}}"...)
			return nil
		}
		dst = append(dst, `,"data":`...)
		dst = tensorjson.AppendJSON(dst, &tensor.Tensor{DType: t.DType, Shape: []int64{int64(t.Len())}, Data: t.Data})
		dst = append(dst, '}')
		return nil
	}
	if req.outputs == nil {
		for i := range v.outputs {
			if v.outputs[i].isTensor {
				if err := emit(i, req.binaryOutput); err != nil {
					return dst, nil, err
				}
			}
		}
	} else {
		for _, o := range req.outputs {
			binary := req.binaryOutput
			if o.binarySet {
				binary = o.binary
			}
			if err := emit(o.index, binary); err != nil {
				return dst, nil, err
			}
		}
	}
	return append(dst, "]}"...), chunks, nil
}
