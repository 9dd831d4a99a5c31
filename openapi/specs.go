package openapi

import (
	"fmt"
	"math"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/svc-dev/svc/core"
)

// InputSpecs reads the model's tensor inputs back from a document made by
// Build: name, element type and shape from each PredictRequest property's
// x-svc-dtype and x-svc-shape extensions, required from the schema's
// required list, in the model's order (x-svc-inputs). It lets the typed
// decoder be driven by the same document as the validator and the pages.
// Inputs without the extensions (non-tensor inputs) are left out.
func InputSpecs(doc *openapi3.T) ([]core.InputSpec, error) {
	s, err := predictRequestSchema(doc)
	if err != nil {
		return nil, err
	}
	names := stringList(s.Extensions[extInputs])
	if len(names) != len(s.Properties) {
		names = sortedKeys(s.Properties)
	}
	var out []core.InputSpec
	for _, name := range names {
		ref := s.Properties[name]
		if ref == nil || ref.Value == nil {
			return nil, fmt.Errorf("input %q listed in %s has no schema", name, extInputs)
		}
		dtype, ok := ref.Value.Extensions[extDType].(string)
		if !ok {
			continue
		}
		shape, err := int64List(ref.Value.Extensions[extShape])
		if err != nil {
			return nil, fmt.Errorf("input %q: %s: %w", name, extShape, err)
		}
		out = append(out, core.InputSpec{
			Name:     name,
			Type:     dtype,
			Shape:    shape,
			Required: slices.Contains(s.Required, name),
			Kind:     core.KindTensor,
		})
	}
	return out, nil
}

// int64List reads a shape extension, as built ([]int64) or as loaded from
// JSON ([]any of float64).
func int64List(v any) ([]int64, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil // unknown rank
	case []int64:
		return slices.Clone(v), nil
	case []any:
		out := make([]int64, len(v))
		for i, x := range v {
			f, ok := x.(float64)
			if !ok || f != math.Trunc(f) {
				return nil, fmt.Errorf("dimension %d is %v, not an integer", i, x)
			}
			out[i] = int64(f)
		}
		return out, nil
	}
	return nil, fmt.Errorf("not a list of dimensions: %T", v)
}
