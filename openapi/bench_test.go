package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/svc-dev/svc/openapi"
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
			benchValidate(b, v, c.body, "")
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

// ppocrBody writes {"x": [[[[...]]]]} of the given shape with the float32
// values a client would send (shortest round-trip form, about ten bytes a
// number): [1,3,48,192] is PaddleOCR cls's input at bench size, about
// 290 KB; [1,3,160,352] a PaddleOCR det input of about 1.8 MB.
func ppocrBody(shape ...int) []byte {
	var b []byte
	b = append(b, `{"x": `...)
	n := uint32(1)
	var write func(dims []int)
	write = func(dims []int) {
		if len(dims) == 0 {
			n = n*1664525 + 1013904223
			b = strconv.AppendFloat(b, float64(float32(n>>8)/(1<<24)), 'g', -1, 32)
			return
		}
		b = append(b, '[')
		for i := 0; i < dims[0]; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			write(dims[1:])
		}
		b = append(b, ']')
	}
	write(shape)
	return append(b, '}')
}

// shapeBodies are bodies of every shape the validator must handle in time
// linear in their size, each at about 1 MB and 4 MB (so that ns/byte
// shows linearity), with the answer the validator gives ("" for valid).
func shapeBodies() []struct {
	name string
	body []byte
	want string
} {
	type body = struct {
		name string
		body []byte
		want string
	}
	unknown := "Unknown input '%s'; the model's inputs are: 'x'"
	var out []body
	for _, mb := range []int{1, 4} {
		size := mb << 20
		sfx := fmt.Sprintf("/%dMB", mb)
		// Many top-level keys: the input, then unknown keys.
		keys := []byte(`{"x": [1]`)
		for i := 0; len(keys) < size; i++ {
			keys = fmt.Appendf(keys, `, "k%07d": 0`, i)
		}
		keys = append(keys, '}')
		out = append(out, body{"keys" + sfx, keys, fmt.Sprintf(unknown, "k0000000")})
		// Deep nesting: one number at depth size/2.
		deep := []byte(`{"x": `)
		deep = append(deep, bytes.Repeat([]byte{'['}, size/2)...)
		deep = append(deep, '1')
		deep = append(deep, bytes.Repeat([]byte{']'}, size/2)...)
		out = append(out, body{"deep" + sfx, append(deep, '}'), ""})
		// A long string element.
		str := []byte(`{"x": ["`)
		str = append(str, bytes.Repeat([]byte("abcdefgh"), size/8)...)
		out = append(out, body{"string" + sfx, append(str, `"]}`...), ""})
		// A long unknown key.
		key := []byte(`{"x": [1], "`)
		key = append(key, bytes.Repeat([]byte("k"), size)...)
		out = append(out, body{"key" + sfx, append(key, `": 1}`...), fmt.Sprintf(unknown, strings.Repeat("k", 64)+"...")})
		// A string of escapes, in a value and in a key.
		esc := []byte(`{"x": ["`)
		esc = append(esc, bytes.Repeat([]byte(`\n\"\u00e9`), size/12)...)
		out = append(out, body{"escapes" + sfx, append(esc, `"]}`...), ""})
		ekey := []byte(`{"x": [1], "`)
		ekey = append(ekey, bytes.Repeat([]byte(`\u0041`), size/6)...)
		out = append(out, body{"keyescapes" + sfx, append(ekey, `": 1}`...), fmt.Sprintf(unknown, strings.Repeat("A", 64)+"...")})
	}
	return out
}

// BenchmarkValidateSizes is ValidateBody on PaddleOCR-sized bodies
// (ppocr_cls's document, which takes [-1, 3, -1, -1]).
func BenchmarkValidateSizes(b *testing.B) {
	v := newValidator(b, "ppocr_cls")
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"cls", ppocrBody(1, 3, 48, 192)},
		{"det", ppocrBody(1, 3, 160, 352)},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchValidate(b, v, c.body, "")
		})
	}
}

// BenchmarkValidateShapes is ValidateBody on the shapes of shapeBodies; the
// MB/s column (bytes per second) should not fall from 1 MB to 4 MB.
func BenchmarkValidateShapes(b *testing.B) {
	v := newValidator(b, "ppocr_cls")
	for _, c := range shapeBodies() {
		b.Run(c.name, func(b *testing.B) {
			benchValidate(b, v, c.body, c.want)
		})
	}
}

// benchValidate runs ValidateBody on body in the benchmark loop; every
// call must answer want ("" for no error).
func benchValidate(b *testing.B, v *openapi.Validator, body []byte, want string) {
	ctx := context.Background()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if got := errString(v.ValidateBody(ctx, body)); got != want {
			b.Fatalf("ValidateBody = %q, want %q", got, want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
