package oip

import (
	"errors"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
)

// checkIDs checks the id inputs of a request that sends them as tensors
// to a text model against what the model can gather (codec's CheckIDs),
// a refusal answered as the protocol's invalid argument.
func checkIDs(x *codec.Text, req *Request) error {
	err := x.CheckIDs(req.inputs)
	var ie *core.InputError
	if errors.As(err, &ie) {
		return invalid("%s", ie.Message)
	}
	return err
}
