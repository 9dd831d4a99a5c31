package rest

import (
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/tensor"
)

// checkIDs checks the id inputs a client sent as tensors to a text model
// (x nil: none) against what the model can gather (codec's CheckIDs: a
// 400 naming the input, the value and the bound); refused, the inputs go
// back to the pools and none are returned. JSON is the one body that
// carries them: a text model takes no other required input, so no
// picture or form.
func checkIDs(x *codec.Text, inputs []*tensor.Tensor) ([]*tensor.Tensor, error) {
	if err := x.CheckIDs(inputs); err != nil {
		tensor.RecycleAll(inputs)
		return nil, err
	}
	return inputs, nil
}
