package openapi_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/svc-dev/svc/openapi"
)

const notObject = "Request body must be a JSON object mapping input names to values"

func TestValidateBodyMessages(t *testing.T) {
	long := strings.Repeat("k", 100)
	tests := []struct {
		model     string
		give      string
		want      string // "" for valid
		wantInput string
	}{
		// Valid structures. Shapes and element values are the typed decoder's
		// job: a body of the right kinds passes here whatever its nesting.
		{model: "classifier", give: `{"input": [[1,2,3,4],[5,6,7,8]]}`},
		{model: "classifier", give: `{"input": [1,2,3,4]}`},
		{model: "classifier", give: " \n{ \"input\" : [ [ 1 , 2 ] ] } \n"},
		{model: "classifier", give: `{"input": [[1,2,3]]}`},
		{model: "classifier", give: `{"input": ["a", {"b": "]"}, "\"]"]}`},

		// Spec messages.
		{model: "classifier", give: `{}`, want: "Missing required input: 'input'", wantInput: "input"},
		{model: "classifier", give: `{"input": "abc"}`, want: "Invalid input type for 'input': expected array", wantInput: "input"},
		{model: "classifier", give: `{"input": 5}`, want: "Invalid input type for 'input': expected array", wantInput: "input"},
		{model: "classifier", give: `{"input": true}`, want: "Invalid input type for 'input': expected array", wantInput: "input"},
		{model: "classifier", give: `{"input": null}`, want: "Invalid input type for 'input': expected array", wantInput: "input"},
		{model: "classifier", give: `{"input": {"a": [1]}}`, want: "Invalid input type for 'input': expected array", wantInput: "input"},

		// Unknown keys.
		{model: "classifier", give: `{"input": [1,2,3,4], "extra": 1}`,
			want: "Unknown input 'extra'; the model's inputs are: 'input'", wantInput: "extra"},
		{model: "multi_input", give: `{"features": [1,2,3], "ids": [1,2], "mask": [true,false], "text": "a", "zz": 1, "aa": 2}`,
			want: "Unknown input 'aa'; the model's inputs are: 'features', 'ids', 'mask', 'text'", wantInput: "aa"},
		{model: "classifier", give: `{"input": [1], "` + long + `": 1}`,
			want: "Unknown input '" + strings.Repeat("k", 64) + "...'; the model's inputs are: 'input'", wantInput: long},

		// Body-level problems.
		{model: "classifier", give: `[1,2,3]`, want: notObject},
		{model: "classifier", give: `"input"`, want: notObject},
		{model: "classifier", give: `42`, want: notObject},
		{model: "classifier", give: `null`, want: notObject},
		{model: "classifier", give: ``, want: "Invalid JSON body: the body is empty"},
		{model: "classifier", give: `   `, want: "Invalid JSON body: unexpected end of input at byte 3"},
		{model: "classifier", give: `{"input": [1,2,3,4]`, want: "Invalid JSON body: unexpected end of input at byte 19"},
		{model: "classifier", give: `{"input": [1,2,3,4]]}`, want: "Invalid JSON body: expected ',' or '}' after an object member at byte 19"},
		{model: "classifier", give: `{"input": [[1,2,3,4}]}`, want: "Invalid JSON body: mismatched bracket at byte 19"},
		{model: "classifier", give: `{"input": [1]} x`, want: "Invalid JSON body: unexpected data after the top-level value at byte 15"},
		{model: "classifier", give: `{"input": [1], "input": [2]}`, want: "Invalid JSON body: duplicate key 'input' at byte 15"},
		{model: "classifier", give: `{input: [1]}`, want: "Invalid JSON body: expected a string key at byte 1"},
		{model: "classifier", give: `{"input": tru}`, want: "Invalid JSON body: invalid character in literal at byte 13"},
		{model: "classifier", give: `{"input": -}`, want: "Invalid JSON body: invalid number at byte 11"},
		{model: "classifier", give: `{"input": [1], }`, want: "Invalid JSON body: expected a string key at byte 15"},
		{model: "classifier", give: "{\"input\": \"a\nb\"}", want: "Invalid JSON body: control character in a string at byte 12"},

		// Scalars: a rank-0 input takes a plain value; shape [1] takes both.
		{model: "scalar", give: `{"x": 1.5, "scale": 2}`},
		{model: "scalar", give: `{"x": 1.5, "scale": [2], "bias": [0.5]}`},
		{model: "scalar", give: `{"x": -1e-3, "scale": 2, "bias": 0}`},
		{model: "scalar", give: `{"scale": 2}`, want: "Missing required input: 'x'", wantInput: "x"},
		{model: "scalar", give: `{"x": 1}`, want: "Missing required input: 'scale'", wantInput: "scale"},
		{model: "scalar", give: `{"x": [1], "scale": 2}`, want: "Invalid input type for 'x': expected number", wantInput: "x"},
		{model: "scalar", give: `{"x": "1", "scale": 2}`, want: "Invalid input type for 'x': expected number", wantInput: "x"},
		{model: "scalar", give: `{"x": 1, "scale": "2"}`, want: "Invalid input type for 'scale': expected array", wantInput: "scale"},
		{model: "scalar", give: `{"x": 1, "scale": 2, "bias": true}`, want: "Invalid input type for 'bias': expected array", wantInput: "bias"},

		// Several inputs: string and boolean tensors, bare string under the
		// batch rule, and the order of several problems (missing first, then
		// unknown, then wrong kind; each in model input order).
		{model: "multi_input", give: `{"features": [[1,2,3]], "ids": [[1,2]], "mask": [[true,false]], "text": ["a"]}`},
		{model: "multi_input", give: `{"features": [1,2,3], "ids": [1,2], "mask": [true,false], "text": "hello"}`},
		{model: "multi_input", give: `{"text": ["a"]}`, want: "Missing required input: 'features'", wantInput: "features"},
		{model: "multi_input", give: `{"features": "x", "zzz": 1}`, want: "Missing required input: 'ids'", wantInput: "ids"},
		{model: "multi_input", give: `{"features": "x", "ids": [1,2], "mask": [true,false], "text": "a", "zzz": 1}`,
			want: "Unknown input 'zzz'; the model's inputs are: 'features', 'ids', 'mask', 'text'", wantInput: "zzz"},
		{model: "multi_input", give: `{"text": 1, "mask": 1, "ids": [1,2], "features": "x"}`,
			want: "Invalid input type for 'features': expected array", wantInput: "features"},
		{model: "multi_input", give: `{"features": [1,2,3], "ids": [1,2], "mask": [true,false], "text": 7}`,
			want: "Invalid input type for 'text': expected array", wantInput: "text"},
		{model: "multi_input", give: `{"features": [1,2,3], "ids": "1,2", "mask": [true,false], "text": "a"}`,
			want: "Invalid input type for 'ids': expected array", wantInput: "ids"},

		// Every integer type.
		{model: "alltypes", give: `{"f64": [1], "i8": [1], "i16": [1], "i32": [1], "u8": [1], "u16": [1], "u32": [1], "u64": [1]}`},
		{model: "alltypes", give: `{"f64": 1, "i8": 1, "i16": 1, "i32": 1, "u8": 1, "u16": 1, "u32": 1, "u64": 1}`},
		{model: "alltypes", give: `{"f64": [1], "i8": [1], "i16": [1], "i32": [1], "u8": "1", "u16": [1], "u32": [1], "u64": [1]}`,
			want: "Invalid input type for 'u8': expected array", wantInput: "u8"},
	}
	validators := map[string]*openapi.Validator{}
	for _, tt := range tests {
		t.Run(tt.model+" "+tt.give, func(t *testing.T) {
			v := validators[tt.model]
			if v == nil {
				v = newValidator(t, tt.model)
				validators[tt.model] = v
			}
			err := v.ValidateBody(context.Background(), []byte(tt.give))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("ValidateBody = %q, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ValidateBody = nil, want %q", tt.want)
			}
			var ve *openapi.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T is not a *ValidationError", err)
			}
			if ve.Error() != tt.want {
				t.Errorf("message\n got: %s\nwant: %s", ve.Error(), tt.want)
			}
			if ve.Input != tt.wantInput {
				t.Errorf("Input = %q, want %q", ve.Input, tt.wantInput)
			}
		})
	}
}

// TestValidateBodyNoEcho makes sure that a big offending value is never
// quoted back.
func TestValidateBodyNoEcho(t *testing.T) {
	v := newValidator(t, "scalar")
	secret := strings.Repeat("SECRET", 1000)
	for _, body := range []string{
		`{"x": "` + secret + `", "scale": 1}`,
		`{"x": 1, "scale": 1, "bias": {"` + secret + `": 1}}`,
		`{"x": 1, "scale": "` + secret,
	} {
		err := v.ValidateBody(context.Background(), []byte(body))
		if err == nil {
			t.Fatalf("body accepted")
		}
		if strings.Contains(err.Error(), "SECRET") || len(err.Error()) > 200 {
			t.Errorf("message echoes the body: %.120s", err.Error())
		}
	}
}

// TestValidateBodyLarge runs a body of realistic size (a 1x3x640x640 float
// image, about 10 MB) through the validator, and its broken variants.
func TestValidateBodyLarge(t *testing.T) {
	v := newValidator(t, "detector")
	body := imageBody(1, 3, 640, 640)
	if len(body) < 8<<20 {
		t.Fatalf("body is only %d bytes", len(body))
	}
	if err := v.ValidateBody(context.Background(), body); err != nil {
		t.Fatalf("ValidateBody: %v", err)
	}
	truncated := body[:len(body)-3]
	if err := v.ValidateBody(context.Background(), truncated); err == nil ||
		!strings.HasPrefix(err.Error(), "Invalid JSON body: unexpected end of input") {
		t.Errorf("truncated body: %v", err)
	}
	renamed := append([]byte(`{"image"`), body[len(`{"images"`):]...)
	if err := v.ValidateBody(context.Background(), renamed); err == nil ||
		err.Error() != "Missing required input: 'images'" {
		t.Errorf("renamed input: %v", err)
	}
}

func TestValidatorConcurrent(t *testing.T) {
	v := newValidator(t, "multi_input")
	bodies := map[string]string{
		`{"features": [1,2,3], "ids": [1,2], "mask": [true,false], "text": "a"}`: "",
		`{"features": [1,2,3], "ids": [1,2], "mask": [true,false]}`:              "Missing required input: 'text'",
		`{"features": 1, "ids": [1,2], "mask": [true,false], "text": "a"}`:       "Invalid input type for 'features': expected array",
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				for body, want := range bodies {
					err := v.ValidateBody(context.Background(), []byte(body))
					got := ""
					if err != nil {
						got = err.Error()
					}
					if got != want {
						errs <- fmt.Errorf("%s: got %q, want %q", body, got, want)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestNewValidatorRejectsForeignDocument(t *testing.T) {
	doc := buildDoc(t, "classifier")
	doc.Paths.Delete("/predict")
	if _, err := openapi.NewValidator(doc); err == nil {
		t.Fatal("NewValidator accepted a document without POST /predict")
	}
	if _, err := openapi.NewValidator(nil); err == nil {
		t.Fatal("NewValidator accepted nil")
	}
}

// imageBody writes {"images": [[[[...]]]]} of the given shape with varied
// float values, the way a client would send an image.
func imageBody(shape ...int) []byte {
	var sb strings.Builder
	sb.WriteString(`{"images": `)
	n := 0
	var write func(dims []int)
	write = func(dims []int) {
		if len(dims) == 0 {
			fmt.Fprintf(&sb, "%.6f", float64(n%997)/997)
			n++
			return
		}
		sb.WriteByte('[')
		for i := 0; i < dims[0]; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			write(dims[1:])
		}
		sb.WriteByte(']')
	}
	write(shape)
	sb.WriteString("}")
	return []byte(sb.String())
}

// TestGlobalJSONDecoderUntouched checks that NewValidator leaves
// openapi3filter's application/json decoder alone: the shallow decoder is
// registered under the package's own media type only, so a full validation
// elsewhere in the process still sees every element.
func TestGlobalJSONDecoderUntouched(t *testing.T) {
	_ = newValidator(t, "classifier")
	full := fullValidator(t, "classifier")
	if err := full([]byte(`{"input": [[1,2,3,4]]}`)); err != nil {
		t.Fatalf("full validation of a good body: %v", err)
	}
	if err := full([]byte(`{"input": [[1,2,3]]}`)); err == nil {
		t.Fatal("full validation accepted a row of 3 for shape [N, 4]: application/json no longer decodes deeply")
	}
	if openapi3filter.RegisteredBodyDecoder(openapi.StructureMediaType) == nil {
		t.Fatal("the shallow decoder is not registered")
	}
}

// TestValidateBodyShapes runs the bodies whose shapes once cost more than
// linear time (many keys, deep nesting, long strings and keys, many
// escapes; 1 MB and 4 MB) through the validator: each gets its answer.
// Their cost is measured by BenchmarkValidateShapes.
func TestValidateBodyShapes(t *testing.T) {
	v := newValidator(t, "ppocr_cls")
	for _, tt := range shapeBodies() {
		t.Run(tt.name, func(t *testing.T) {
			err := v.ValidateBody(context.Background(), tt.body)
			if got := errString(err); got != tt.want {
				t.Errorf("ValidateBody = %.200q, want %.200q", got, tt.want)
			}
		})
	}
}

// TestValidateBodyLeavesBody checks that ValidateBody neither changes the
// body nor keeps any of it: the caller reuses the buffer (the response is
// written into it), so after the call, scribbling over the body must not
// change the error returned.
func TestValidateBodyLeavesBody(t *testing.T) {
	v := newValidator(t, "multi_input")
	long := strings.Repeat("x", 200)
	tests := []struct {
		give      string
		want      string
		wantInput string
	}{
		{give: `{"features": [1,2,3], "ids": [1,2], "mask": [true,false], "text": "a"}`},
		{give: `{"features": [1,2,3], "ids": [1,2], "mask": [true,false], "text": "a", "zz": [1], "bb": 2}`,
			want:      "Unknown input 'bb'; the model's inputs are: 'features', 'ids', 'mask', 'text'",
			wantInput: "bb"},
		{give: `{"features": [1,2,3], "ids": [1,2], "mask": [true,false], "text": "a", "` + long + `": 1}`,
			want:      "Unknown input '" + long[:64] + "...'; the model's inputs are: 'features', 'ids', 'mask', 'text'",
			wantInput: long},
		{give: `{"features": [1,2,3], "ids": [1,2], "mask": [true,false], "text": "a", "\u0062b": 2}`,
			want:      "Unknown input 'bb'; the model's inputs are: 'features', 'ids', 'mask', 'text'",
			wantInput: "bb"},
		{give: `{"features": [1,2,3], "ids": "x", "mask": [true,false]}`,
			want: "Missing required input: 'text'", wantInput: "text"},
		{give: `{"features": [1,2,3], "features": 1}`, want: "Invalid JSON body: duplicate key 'features' at byte 22"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			body := []byte(tt.give)
			err := v.ValidateBody(context.Background(), body)
			if string(body) != tt.give {
				t.Fatalf("body changed to %q", body)
			}
			for i := range body {
				body[i] = '#'
			}
			if got := errString(err); got != tt.want {
				t.Fatalf("after overwriting the body: error %q, want %q", got, tt.want)
			}
			var ve *openapi.ValidationError
			if err != nil && (!errors.As(err, &ve) || ve.Input != tt.wantInput) {
				t.Fatalf("after overwriting the body: Input %q, want %q", ve.Input, tt.wantInput)
			}
		})
	}
}
