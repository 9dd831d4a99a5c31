package oip

import (
	"strconv"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

// appendResponse writes the JSON part of the inference response to dst and
// returns it with the binary outputs, in order. The chunks may share
// memory with res: write them before closing it.
func appendResponse(dst []byte, v *restView, req *inferRequest, res core.Result) ([]byte, [][]byte, error) {
	if err := v.CheckResult(res); err != nil {
		return dst, nil, err
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
	for j, o := range req.ResponseOutputs() {
		t, err := v.OutputTensor(res, o.Index, &req.Request)
		if err != nil {
			return dst, nil, err
		}
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, v.keys[o.Index]...)
		dst = append(dst, Datatype(t.DType)...)
		dst = append(dst, `","shape":[`...)
		for k, d := range t.Shape {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, d, 10)
		}
		dst = append(dst, ']')
		if req.Binary(o) {
			c := binaryView(t)
			chunks = append(chunks, c)
			dst = append(dst, `,"parameters":{"binary_data_size":`...)
			dst = strconv.AppendInt(dst, int64(len(c)), 10)
			dst = append(dst, "}}"...)
			continue
		}
		dst = append(dst, `,"data":`...)
		dst = tensorjson.AppendJSON(dst, &tensor.Tensor{DType: t.DType, Shape: []int64{int64(t.Len())}, Data: t.Data})
		dst = append(dst, '}')
	}
	return append(dst, "]}"...), chunks, nil
}
