package openapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/svc-dev/svc/core"
)

// TestExampleBody checks the /predict example of every test model: it holds
// exactly the required inputs, passes the full schema and the structural
// validator, and decodes under the batch rule with the right element types
// (checked by decodeBatchRule, written here independently of the schema).
func TestExampleBody(t *testing.T) {
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			info := loadInfo(t, name)
			doc := buildDoc(t, name)
			ex := example(t, doc)
			if name == "detector" {
				// 1x3x640x640 numbers are no example; the document has none.
				if ex != nil {
					t.Fatal("detector has an example of 1.2 million numbers")
				}
				return
			}
			body, ok := ex.(map[string]any)
			if !ok {
				t.Fatalf("example is %T, want an object", ex)
			}
			var required []string
			for _, in := range info.Inputs {
				if in.Required {
					required = append(required, in.Name)
				}
			}
			if got := keys(body); !slices.Equal(got, sortedCopy(required)) {
				t.Errorf("example inputs = %v, want the required ones %v", got, required)
			}

			// Through JSON, as Swagger UI sends it.
			data, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			var generic any
			if err := json.Unmarshal(data, &generic); err != nil {
				t.Fatal(err)
			}
			if err := requestSchema(t, doc).VisitJSON(generic, openapi3.MultiErrors()); err != nil {
				t.Errorf("example fails the full schema: %v", err)
			}
			v := newValidator(t, name)
			if err := v.ValidateBody(context.Background(), data); err != nil {
				t.Errorf("example fails ValidateBody: %v", err)
			}
			for _, in := range info.Inputs {
				val, ok := generic.(map[string]any)[in.Name]
				if !ok {
					continue
				}
				shape, err := decodeBatchRule(val, in)
				if err != nil {
					t.Errorf("input %s: %v", in.Name, err)
					continue
				}
				for i, d := range in.Shape {
					if d >= 0 && shape[i] != d {
						t.Errorf("input %s: decoded shape %v, model shape %v", in.Name, shape, in.Shape)
					}
				}
			}
		})
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// decodeBatchRule is a reference decoder of the batch rule: the value is the
// full tensor, or (first dimension N or 1) one item to which a batch
// dimension of 1 is added; rank 0 is a plain value. It returns the shape of
// the decoded tensor and checks every element against the element type.
func decodeBatchRule(v any, in core.InputSpec) ([]int64, error) {
	rank := len(in.Shape)
	depth, err := depthOf(v)
	if err != nil {
		return nil, err
	}
	var shape []int64
	switch {
	case depth == rank:
	case depth == rank-1 && (in.Shape[0] == -1 || in.Shape[0] == 1):
		shape = []int64{1}
	default:
		return nil, fmt.Errorf("nesting depth %d does not fit rank %d", depth, rank)
	}
	// Walk the first element of each level for the shape, then check all.
	cur := v
	for {
		arr, ok := cur.([]any)
		if !ok {
			break
		}
		shape = append(shape, int64(len(arr)))
		cur = arr[0]
	}
	return shape, checkElements(v, in.Type, shape[len(shape)-depth:])
}

func depthOf(v any) (int, error) {
	arr, ok := v.([]any)
	if !ok {
		return 0, nil
	}
	if len(arr) == 0 {
		return 0, fmt.Errorf("empty array")
	}
	d, err := depthOf(arr[0])
	return d + 1, err
}

func checkElements(v any, dtype string, shape []int64) error {
	if len(shape) == 0 {
		return checkElement(v, dtype)
	}
	arr, ok := v.([]any)
	if !ok || int64(len(arr)) != shape[0] {
		return fmt.Errorf("ragged array")
	}
	for _, x := range arr {
		if err := checkElements(x, dtype, shape[1:]); err != nil {
			return err
		}
	}
	return nil
}

func checkElement(v any, dtype string) error {
	bounds := map[string][2]float64{
		"int8": {-128, 127}, "int16": {-32768, 32767}, "int32": {math.MinInt32, math.MaxInt32},
		"int64": {math.MinInt64, math.MaxInt64}, "uint8": {0, 255}, "uint16": {0, 65535},
		"uint32": {0, math.MaxUint32}, "uint64": {0, math.MaxUint64},
	}
	switch dtype {
	case "float16", "bfloat16", "float32", "float64":
		if _, ok := v.(float64); !ok {
			return fmt.Errorf("element %v is not a number", v)
		}
	case "bool":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("element %v is not a boolean", v)
		}
	case "string":
		if _, ok := v.(string); !ok {
			return fmt.Errorf("element %v is not a string", v)
		}
	default:
		b, known := bounds[dtype]
		f, ok := v.(float64)
		if !known || !ok || f != math.Trunc(f) || f < b[0] || f > b[1] {
			return fmt.Errorf("element %v is not a %s", v, dtype)
		}
	}
	return nil
}
