package openapi

import (
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
)

// Extension keys written on each input property of the PredictRequest schema.
// They carry the model's own description of the input so that a consumer of
// the document (InputSpecs, or a client) does not have to reverse-engineer
// the JSON schema.
const (
	extDType  = "x-svc-dtype"
	extShape  = "x-svc-shape"
	extInputs = "x-svc-inputs"
)

// float16Max is the largest finite IEEE 754 half-precision value.
const float16Max = 65504

// elementSchema returns the schema of one tensor element of the ONNX element
// type dtype (as core.InputSpec.Type names it).
func elementSchema(dtype string) *openapi3.Schema {
	intSchema := func(format string, lo, hi float64) *openapi3.Schema {
		s := openapi3.NewIntegerSchema().WithMin(lo).WithMax(hi)
		s.Format = format
		return s
	}
	switch dtype {
	case "float32", "bfloat16":
		return openapi3.NewFloat64Schema().WithFormat("float")
	case "float16":
		return openapi3.NewFloat64Schema().WithFormat("float").WithMin(-float16Max).WithMax(float16Max)
	case "float64":
		return openapi3.NewFloat64Schema().WithFormat("double")
	case "int8":
		return intSchema("int32", -1<<7, 1<<7-1)
	case "int16":
		return intSchema("int32", -1<<15, 1<<15-1)
	case "int32":
		return intSchema("int32", -1<<31, 1<<31-1)
	case "int64":
		return openapi3.NewInt64Schema()
	case "uint8":
		return intSchema("int32", 0, 1<<8-1)
	case "uint16":
		return intSchema("int32", 0, 1<<16-1)
	case "uint32":
		return intSchema("int64", 0, 1<<32-1)
	case "uint64":
		// No format: int64 would reject the upper half of the range.
		return openapi3.NewIntegerSchema().WithMin(0)
	case "bool":
		return openapi3.NewBoolSchema()
	case "string":
		return openapi3.NewStringSchema()
	}
	s := openapi3.NewSchema()
	s.Description = fmt.Sprintf("Element type %q has no JSON mapping; any value is passed on.", dtype)
	return s
}

// tensorSchema returns nested arrays as deep as shape, each level bounded by
// its dimension: minItems = maxItems = d for a fixed dimension, no bound for
// a dynamic one (-1; the typed decoder takes [] as a dimension of 0, such as
// an empty batch). An empty shape gives the element schema itself.
func tensorSchema(dtype string, shape []int64) *openapi3.Schema {
	s := elementSchema(dtype)
	for i := len(shape) - 1; i >= 0; i-- {
		arr := openapi3.NewArraySchema().WithItems(s)
		if d := shape[i]; d >= 0 {
			arr = arr.WithMinItems(d).WithMaxItems(d)
		}
		s = arr
	}
	return s
}

// batchDroppable reports whether the leading dimension of shape may be left
// out by the client (the batch rule): it is dynamic or 1, so a single item is
// sent and a batch dimension of 1 is prepended.
func batchDroppable(shape []int64) bool {
	return len(shape) > 0 && (shape[0] == -1 || shape[0] == 1)
}

// inputKind returns the kind of an input, guessing from the type name when
// Kind is unset (it is not serialized, so specs read from JSON lack it).
func inputKind(kind core.ValueKind, typ string) core.ValueKind {
	if kind != "" {
		return kind
	}
	switch {
	case strings.HasPrefix(typ, "seq("):
		return core.KindSequence
	case strings.HasPrefix(typ, "map("):
		return core.KindMap
	}
	return core.KindTensor
}

// inputSchema describes one model input in the request body.
func inputSchema(in core.InputSpec) *openapi3.Schema {
	var s *openapi3.Schema
	kind := inputKind(in.Kind, in.Type)
	switch {
	case kind != core.KindTensor:
		s = containerSchema(in.Type)
		s.Description = joinSentences(fmt.Sprintf("Non-tensor input of type %s.", in.Type), in.Description)
	case in.Shape == nil:
		// Unknown rank: a plain value or nested arrays of any depth.
		s = openapi3.NewAnyOfSchema(elementSchema(in.Type), openapi3.NewArraySchema().WithItems(openapi3.NewSchema()))
		s.Description = joinSentences(fmt.Sprintf("%s tensor of any rank: a plain value (rank 0) or nested arrays.", in.Type), in.Description)
	case len(in.Shape) == 0:
		s = elementSchema(in.Type)
		s.Description = joinSentences(fmt.Sprintf("%s scalar, sent as a plain value.", in.Type), in.Description)
	case batchDroppable(in.Shape):
		full := tensorSchema(in.Type, in.Shape)
		full.Title = "batch"
		item := tensorSchema(in.Type, in.Shape[1:])
		item.Title = "single item"
		// anyOf, not oneOf: with dynamic dimensions an empty array fits both
		// forms (the decoder reads it as an empty batch either way).
		s = openapi3.NewAnyOfSchema(full, item)
		s.Description = joinSentences(fmt.Sprintf(
			"%s tensor of shape %s. Send a batch as a list of items, or one item on its own (%s); a batch dimension of 1 is then added.",
			in.Type, tensor.FormatShape(in.Shape), itemWording(in.Type, in.Shape[1:])), in.Description)
	default:
		s = tensorSchema(in.Type, in.Shape)
		s.Description = joinSentences(fmt.Sprintf("%s tensor of shape %s.", in.Type, tensor.FormatShape(in.Shape)), in.Description)
	}
	if kind == core.KindTensor {
		s.Extensions = map[string]any{extDType: in.Type, extShape: shapeValue(in.Shape)}
	}
	return s
}

// outputSchema describes one model output in the response body.
func outputSchema(out core.OutputSpec) *openapi3.Schema {
	var s *openapi3.Schema
	kind := inputKind(out.Kind, out.Type)
	switch {
	case kind != core.KindTensor:
		s = containerSchema(out.Type)
		s.Description = fmt.Sprintf("Non-tensor output of type %s.", out.Type)
	case out.Shape == nil:
		s = openapi3.NewArraySchema().WithItems(openapi3.NewSchema())
		s.Description = fmt.Sprintf("%s tensor of unknown shape, as nested arrays (a rank-0 value as a one-element array).", out.Type)
	case len(out.Shape) == 0:
		// Every output value is an array: a scalar comes as one element.
		s = openapi3.NewArraySchema().WithItems(elementSchema(out.Type)).WithMinItems(1).WithMaxItems(1)
		s.Description = fmt.Sprintf("%s scalar, as a one-element array.", out.Type)
	default:
		s = tensorSchema(out.Type, out.Shape)
		s.Description = fmt.Sprintf("%s tensor of shape %s.", out.Type, tensor.FormatShape(out.Shape))
	}
	if len(out.Labels) > 0 {
		s.Description = joinSentences(s.Description, "Class labels: "+strings.Join(out.Labels, ", ")+".")
	}
	s.Description = joinSentences(s.Description, out.Description)
	return s
}

// containerSchema maps a non-tensor type name such as "seq(map(string,float32))"
// to a schema: a sequence is an array of its element, a map is an object whose
// values are the map's value type (keys are always JSON strings; integer keys
// are written in decimal). An unknown name gives an unconstrained schema.
func containerSchema(typ string) *openapi3.Schema {
	typ = strings.ReplaceAll(typ, " ", "")
	if inner, ok := unwrap(typ, "seq"); ok {
		return openapi3.NewArraySchema().WithItems(containerSchema(inner))
	}
	if inner, ok := unwrap(typ, "map"); ok {
		key, val, ok := splitTopLevel(inner)
		if !ok {
			return openapi3.NewSchema()
		}
		obj := openapi3.NewObjectSchema().WithAdditionalProperties(containerSchema(val))
		if key != "string" {
			obj.Description = fmt.Sprintf("Keys are %s values written as strings.", key)
		}
		return obj
	}
	if inner, ok := unwrap(typ, "tensor"); ok {
		return openapi3.NewArraySchema().WithItems(elementSchema(inner))
	}
	return elementSchema(typ)
}

// unwrap returns X for name(X).
func unwrap(typ, name string) (string, bool) {
	if strings.HasPrefix(typ, name+"(") && strings.HasSuffix(typ, ")") {
		return typ[len(name)+1 : len(typ)-1], true
	}
	return "", false
}

// splitTopLevel splits "a,b" at the first comma not nested in parentheses.
func splitTopLevel(s string) (string, string, bool) {
	depth := 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				return s[:i], s[i+1:], true
			}
		}
	}
	return "", "", false
}

// itemWording describes one item of the batch rule: "a plain value" for a
// rank-1 input, else "an array of shape [...]".
func itemWording(dtype string, rest []int64) string {
	if len(rest) == 0 {
		return "a plain " + dtype + " value"
	}
	return "an array of shape " + tensor.FormatShape(rest)
}

// shapeValue copies a shape into a JSON-friendly slice (never nil).
func shapeValue(shape []int64) []int64 {
	if shape == nil {
		return nil // unknown rank
	}
	out := make([]int64, len(shape))
	copy(out, shape)
	return out
}

func joinSentences(a, b string) string {
	switch {
	case b == "":
		return a
	case a == "":
		return b
	}
	return a + " " + b
}
