package rest

import (
	"mime/multipart"
	"net/http"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

// picturesInput is the index of the input that takes encoded pictures as
// strings, which its runner decodes (core.InputSpec.Pictures), or -1.
func picturesInput(ins []core.InputSpec) int {
	for i, in := range ins {
		if in.Pictures {
			return i
		}
	}
	return -1
}

// stringInput is the inputs of a runner with a pictures input: that input
// holding pics, the others left to their defaults.
func stringInput(v *view, pics []string) []*tensor.Tensor {
	inputs := make([]*tensor.Tensor, len(v.specs))
	inputs[v.pictures] = &tensor.Tensor{DType: tensor.String, Shape: []int64{int64(len(pics))}, Data: pics}
	return inputs
}

// pictureStrings makes the pictures input of a multipart/form-data body:
// each field named as the input, or each file, is one picture.
func pictureStrings(body []byte, boundary string, v *view) ([]*tensor.Tensor, error) {
	name := v.specs[v.pictures].Name
	var pics []string
	err := eachPart(body, boundary, func(part *multipart.Part, data []byte) {
		if part.FormName() == name || part.FileName() != "" {
			pics = append(pics, string(data))
		}
	})
	if err != nil {
		return nil, err
	}
	if len(pics) == 0 {
		return nil, &tensorjson.Error{Input: name, Message: "Missing required input: '" + name + "': send the pictures as fields named '" + name + "'"}
	}
	return stringInput(v, pics), nil
}

// queryParams is the query string's parameters, the first value of each.
func queryParams(r *http.Request) map[string]string {
	q := r.URL.Query()
	if len(q) == 0 {
		return nil
	}
	m := make(map[string]string, len(q))
	for k, vs := range q {
		m[k] = vs[0]
	}
	return m
}
