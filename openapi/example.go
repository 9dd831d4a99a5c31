package openapi

import (
	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
)

// maxExampleElements bounds the number of tensor elements in the generated
// /predict example. A model with large fixed dimensions (a 1x3x640x640 image)
// would otherwise put megabytes of numbers into /openapi.json; such a model
// gets no example and Swagger UI falls back to its own sample.
const maxExampleElements = 1 << 16

// exampleBody returns a small request body that fits the model: every
// required input, in its batch form with each dynamic dimension set to 1 and
// every fixed dimension at its size, filled with small positive values of the
// element type (positive so that a log or a division in the model stays
// finite). It returns nil when no such body can be written: a required input
// is not a tensor, or the body would exceed maxExampleElements. An image
// input of media takes one picture, a 1×1 PNG as base64, whatever its
// tensor's size.
func exampleBody(inputs []core.InputSpec, media *codec.Set) map[string]any {
	body := make(map[string]any)
	total := 0
	for _, in := range inputs {
		if !in.Required {
			continue
		}
		if media.Image(in.Name) != nil || in.Pictures {
			body[in.Name] = examplePicture
			continue
		}
		if inputKind(in.Kind, in.Type) != core.KindTensor {
			return nil
		}
		n := 1
		for _, d := range in.Shape {
			if d > 0 {
				n *= int(d)
			}
			if n > maxExampleElements {
				return nil
			}
		}
		total += n
		if total > maxExampleElements {
			return nil
		}
		counter := 0
		body[in.Name] = exampleValue(in.Type, in.Shape, &counter)
	}
	return body
}

// exampleValue builds nested arrays for shape, dynamic dimensions taken as 1.
func exampleValue(dtype string, shape []int64, counter *int) any {
	if len(shape) == 0 {
		v := exampleElement(dtype, *counter)
		*counter++
		return v
	}
	n := shape[0]
	if n < 0 {
		n = 1
	}
	out := make([]any, n)
	for i := range out {
		out[i] = exampleValue(dtype, shape[1:], counter)
	}
	return out
}

// exampleElement returns the i-th example element of a type: floats cycle
// through 0.25, 0.5, 0.75, 1; integers through 1, 2, 3; booleans alternate
// starting with true; strings are "hello".
func exampleElement(dtype string, i int) any {
	switch dtype {
	case "float16", "bfloat16", "float32", "float64":
		return float64(i%4+1) * 0.25
	case "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64":
		return int64(i%3 + 1)
	case "bool":
		return i%2 == 0
	case "string":
		return "hello"
	}
	return nil
}

// exampleBody is the model's /predict example, or nil.
func (b builder) exampleBody() map[string]any {
	if b.media.Text() != nil {
		return textExample()
	}
	return exampleBody(b.info.Inputs, b.media)
}
