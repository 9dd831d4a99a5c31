package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/svc-dev/svc/transport/rest"
)

// Bodies: "large" is a 1x3x640x640 float32 image (about 10 MB of JSON, 1.2
// million numbers) for the detector model; "small" is one classifier row.
func benchBodies(tb testing.TB) map[string]struct {
	model string
	body  []byte
} {
	return map[string]struct {
		model string
		body  []byte
	}{
		"large": {"detector", imageBody(1, 3, 640, 640)},
		"small": {"classifier", []byte(`{"input": [[5.1, 3.5, 1.4, 0.2]]}`)},
	}
}

// BenchmarkValidate is the validator as the server runs it: kin-openapi on
// the structural schema, with the shallow decoder.
func BenchmarkValidate(b *testing.B) {
	for name, c := range benchBodies(b) {
		b.Run(name, func(b *testing.B) {
			v := newValidator(b, c.model)
			ctx := context.Background()
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				if err := v.ValidateBody(ctx, c.body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUnmarshal is the stand-in for the cost of decoding the body
// generically: encoding/json into map[string]any.
func BenchmarkUnmarshal(b *testing.B) {
	for name, c := range benchBodies(b) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				var m map[string]any
				if err := json.Unmarshal(c.body, &m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTypedDecodeStandIn approximates the floor of a typed decoder: one
// pass that parses every number into a float32 slice, with no checks. The
// real decoder (core/tensor) does more, so it is at least this slow.
func BenchmarkTypedDecodeStandIn(b *testing.B) {
	for name, c := range benchBodies(b) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			var out []float32
			for b.Loop() {
				out = parseFloats(c.body, out[:0])
			}
		})
	}
}

// BenchmarkFullKinOpenAPI validates every element through openapi3filter
// against the full PredictRequest schema with kin-openapi's own JSON
// decoder: the design the split replaces.
func BenchmarkFullKinOpenAPI(b *testing.B) {
	for name, c := range benchBodies(b) {
		b.Run(name, func(b *testing.B) {
			validate := fullValidator(b, c.model)
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				if err := validate(c.body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// fullValidator validates a body element by element against the full
// derived document with openapi3filter and its default JSON decoder.
func fullValidator(tb testing.TB, model string) func([]byte) error {
	doc := buildDoc(tb, model)
	item := doc.Paths.Value("/predict")
	route := &routers.Route{Spec: doc, Path: "/predict", PathItem: item, Method: http.MethodPost, Operation: item.Post}
	opts := &openapi3filter.Options{
		SkipSettingDefaults:     true,
		SchemaValidationOptions: []openapi3.SchemaValidationOption{openapi3.DisableSchemaErrorDetails()},
	}
	ctx := context.Background()
	return func(body []byte) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "/predict", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		return openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{Request: req, Route: route, Options: opts})
	}
}

// parseFloats pulls every number out of a JSON text.
func parseFloats(data []byte, out []float32) []float32 {
	for i := 0; i < len(data); {
		c := data[i]
		if c == '-' || (c >= '0' && c <= '9') {
			j := i + 1
			for j < len(data) && (data[j] == '.' || data[j] == 'e' || data[j] == 'E' || data[j] == '-' || data[j] == '+' || (data[j] >= '0' && data[j] <= '9')) {
				j++
			}
			f, err := strconv.ParseFloat(string(data[i:j]), 32)
			if err == nil {
				out = append(out, float32(f))
			}
			i = j
			continue
		}
		i++
	}
	return out
}

// BenchmarkTypedDecode is core/tensor's decoder on the same bodies: the
// decode cost that validation is measured against.
func BenchmarkTypedDecode(b *testing.B) {
	for name, c := range benchBodies(b) {
		b.Run(name, func(b *testing.B) {
			specs := tensorSpecs(b, c.model)
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := rest.DecodeRequest(c.body, specs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
