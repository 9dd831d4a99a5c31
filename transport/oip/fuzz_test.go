package oip

import (
	"errors"
	"testing"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

// FuzzParseRequest: any header and binary part give a request or a
// client error (never a panic, never another kind of error).
func FuzzParseRequest(f *testing.F) {
	_, m := newTestHandler(f, &echoRunner{}, Options{})
	v, _ := core.ViewOf[*restView](m.Current())
	f.Add([]byte(`{"inputs":[`+fp32Input+`]}`), []byte{}, false)
	f.Add([]byte(`{"id":"x","parameters":{"binary_data_output":true},"inputs":[{"name":"fp32","shape":[1,2],"datatype":"FP32","parameters":{"binary_data_size":8}}],"outputs":[{"name":"fp32_out","parameters":{"binary_data":true}}]}`),
		[]byte{0, 0, 128, 63, 0, 0, 0, 64}, true)
	f.Add([]byte(`{"inputs":[`+fp32Input+`,{"name":"bytes","shape":[1,2],"datatype":"BYTES","parameters":{"binary_data_size":10}}]}`),
		[]byte("\x01\x00\x00\x00a\x01\x00\x00\x00b"), true)
	f.Add([]byte(`{"inputs":[{"data":[[true,false]],"name":"bool","shape":[1,2],"datatype":"BOOL"},`+fp32Input+`]}`), []byte{}, false)
	f.Fuzz(func(t *testing.T, header, bin []byte, binaryMode bool) {
		req, err := parseRequest(header, bin, binaryMode, v)
		if err != nil {
			var own *Error
			var je *tensorjson.Error
			if !errors.As(err, &own) && !errors.As(err, &je) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		for i, in := range req.inputs {
			if in == nil {
				continue
			}
			if in.DType != v.specs[i].DType {
				t.Fatalf("input %d has dtype %v", i, in.DType)
			}
			if n, _ := tensorjson.ElementCount("", in.Shape); int64(in.Len()) != n {
				t.Fatalf("input %d: %d elements for shape %v", i, in.Len(), in.Shape)
			}
		}
	})
}
