package oip

import (
	"strconv"
	"strings"
	"testing"
)

// TestDuplicateKeys: a key an inference request repeats, which would take
// the last value, is a 400 naming the key and where: in "parameters" (of
// the request, an input or an output), and a key the parser reads in the
// request, an input or an output; a key it skips may repeat, as may the
// same key in different objects, and one escaped differently is the same
// key.
func TestDuplicateKeys(t *testing.T) {
	h, _ := newTestHandler(t, &echoRunner{}, Options{})
	fp32 := func(extra string) string {
		return `{"name":"fp32","shape":[1,2],"datatype":"FP32","data":[1,2]` + extra + `}`
	}
	out := `"outputs":[{"name":"fp32_out"}]`
	tests := []struct {
		name, body, want string // want "" for a 200
	}{
		{"request parameters", `{"parameters":{"timeout":1000000,"timeout":5},"inputs":[` + fp32Input + `]}`, `Duplicate key 'timeout' in "parameters"`},
		{"request parameters, a key svc skips", `{"parameters":{"custom":1,"custom":2},"inputs":[` + fp32Input + `]}`, `Duplicate key 'custom' in "parameters"`},
		{"request parameters, escaped", `{"parameters":{"raw":false,"r\u0061w":true},"inputs":[` + fp32Input + `]}`, `Duplicate key 'raw' in "parameters"`},
		{"two parameters objects", `{"parameters":{"raw":true},"inputs":[` + fp32Input + `],"parameters":{}}`, `Duplicate key 'parameters' in the request`},
		{"two id", `{"id":"a","id":"b","inputs":[` + fp32Input + `]}`, `Duplicate key 'id' in the request`},
		{"two inputs arrays", `{"inputs":[],"inputs":[` + fp32Input + `]}`, `Duplicate key 'inputs' in the request`},
		{"two outputs arrays", `{"inputs":[` + fp32Input + `],` + out + `,` + out + `}`, `Duplicate key 'outputs' in the request`},
		{"input parameters", `{"inputs":[` + fp32(`,"parameters":{"x":1,"x":2}`) + `]}`, `Duplicate key 'x' in "parameters" of input 'fp32'`},
		{"two input parameters objects", `{"inputs":[` + fp32(`,"parameters":{},"parameters":{}`) + `]}`, `Duplicate key 'parameters' in input 'fp32'`},
		{"two names", `{"inputs":[{"name":"fp32","name":"fp64","shape":[1,2],"datatype":"FP32","data":[1,2]}]}`, `Duplicate key 'name' in input 'fp32'`},
		{"two data", `{"inputs":[` + fp32(`,"data":[3,4]`) + `]}`, `Duplicate key 'data' in input 'fp32'`},
		{"output parameters", `{"inputs":[` + fp32Input + `],"outputs":[{"name":"fp32_out","parameters":{"binary_data":true,"binary_data":false}}]}`, `Duplicate key 'binary_data' in "parameters" of outputs[0]`},
		{"two output names", `{"inputs":[` + fp32Input + `],"outputs":[{"name":"fp32_out","name":"fp64_out"}]}`, `Duplicate key 'name' in outputs[0]`},
		{"a key svc skips, twice", `{"x":1,"x":2,"inputs":[` + fp32(`,"y":1,"y":2`) + `]}`, ""},
		{"the same key in two objects", `{"parameters":{"raw":false},"inputs":[` + fp32(`,"parameters":{"raw":1}`) + `],"outputs":[{"name":"fp32_out","parameters":{"raw":1}}]}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := call(h, "POST", "/v2/models/echo/infer", "application/json", tt.body)
			if tt.want == "" {
				if rec.Code != 200 {
					t.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
				return
			}
			if rec.Code != 400 || errorMessage(t, rec) != tt.want {
				t.Fatalf("%d %s, want 400 %q", rec.Code, rec.Body, tt.want)
			}
		})
	}
	// In binary mode too: the JSON header is the same request.
	body := `{"parameters":{"binary_data_output":true,"binary_data_output":false},"inputs":[` + fp32Input + `]}`
	rec := call(h, "POST", "/v2/models/echo/infer", "application/octet-stream", body, HeaderInferenceHeaderLength, strconv.Itoa(len(body)))
	if rec.Code != 400 || !strings.Contains(errorMessage(t, rec), `Duplicate key 'binary_data_output' in "parameters"`) {
		t.Fatalf("binary: %d %s", rec.Code, rec.Body)
	}
}
