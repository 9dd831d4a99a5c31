package openapi

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core"
)

// mixedValidator validates against a model with inputs of every kind the
// structural schema tells apart, optional ones, and names that need
// escaping in JSON or collide with the stand-in's first choice of a name
// for an unknown key.
func mixedValidator(tb testing.TB) *Validator {
	tb.Helper()
	tensor := func(name, typ string, required bool, shape ...int64) core.InputSpec {
		return core.InputSpec{Name: name, Type: typ, Shape: shape, Required: required, Kind: core.KindTensor}
	}
	doc, err := Build(core.ModelInfo{
		Name:    "mixed",
		Version: "1",
		Format:  "onnx",
		Inputs: []core.InputSpec{
			tensor("features", "float32", true, -1, 3),
			tensor("x", "float32", true),
			tensor("text", "string", true, -1),
			tensor("bias", "float32", false, 1),
			tensor("mask", "bool", false, -1, 2),
			tensor(`in"put\`, "float32", false, -1),
			tensor("?", "int64", false, 1),
		},
		Outputs: []core.OutputSpec{{Name: "y", Type: "float32", Shape: []int64{-1}, Kind: core.KindTensor}},
	})
	if err != nil {
		tb.Fatalf("Build: %v", err)
	}
	v, err := NewValidator(doc)
	if err != nil {
		tb.Fatalf("NewValidator: %v", err)
	}
	return v
}

// standInSeeds are bodies for the validator-level comparison: every answer
// (valid, each message, their precedence) on mixedValidator's model.
var standInSeeds = []string{
	`{"features": [[1,2,3]], "x": 1, "text": ["a"]}`,
	`{"features": [1,2,3], "x": 1.5, "text": "a", "bias": 2, "mask": [true, false], "in\"put\\": [1], "?": 3}`,
	`{"x": 1, "text": "a"}`,
	`{"features": [1], "text": "a", "zz": 1, "aa": {}}`,
	`{"features": [1], "x": 1, "text": "a", "zz": 1, "aa": {}}`,
	`{"features": [1], "x": 1, "text": "a", "\u0061a": 1, "a": 2}`,
	`{"features": [1], "x": 1, "text": "a", "??": 1}`,
	`{"features": [1], "x": 1, "text": "a", "in\"put": 1}`,
	`{"features": [1], "x": 1, "text": "a", "\ud800": 1}`,
	"{\"features\": [1], \"x\": 1, \"text\": \"a\", \"\xff\": 1}",
	`{"features": "a", "x": [1], "text": 1, "bias": null}`,
	`{"features": [1], "x": [1], "text": ["a"], "bias": "b", "zz": 1}`,
	`{"features": {}, "x": {}, "text": {}, "mask": 1, "?": "x"}`,
	`{"features": [1], "x": 1, "text": "a", "mask": null}`,
	`{"features": [1], "x": true, "text": false}`,
	`[]`, `"x"`, `1`, `true`, `false`, `null`, ``, ` `, `{}`, `{"features": [1], "features": [2]}`,
	`{"features": [1], "x": 1, "text": "a"} x`, `{"features": [1}`, `{"x": "\x"}`,
}

// TestValidateBodyMatchesReference holds ValidateBody to the former one,
// which handed the whole body to openapi3filter: the same message and
// Input for every seed of both kinds of test.
func TestValidateBodyMatchesReference(t *testing.T) {
	v := mixedValidator(t)
	seeds := append(append(append([]string{}, standInSeeds...), shallowSeeds...), generatedSeeds()...)
	for _, body := range seeds {
		t.Run(fmt.Sprintf("%.60s", body), func(t *testing.T) { checkStandIn(t, v, []byte(body)) })
	}
}

func FuzzValidateBody(f *testing.F) {
	for _, s := range standInSeeds {
		f.Add([]byte(s))
	}
	for _, s := range shallowSeeds {
		f.Add([]byte(s))
	}
	v := mixedValidator(f)
	f.Fuzz(func(t *testing.T, body []byte) { checkStandIn(t, v, body) })
}

func checkStandIn(t *testing.T, v *Validator, body []byte) {
	orig := bytes.Clone(body)
	err := v.ValidateBody(t.Context(), body)
	if !bytes.Equal(body, orig) {
		t.Fatal("ValidateBody changed the body")
	}
	want := refValidate(v, bytes.Clone(body))
	if errString(err) != errString(want) {
		t.Fatalf("ValidateBody(%q)\n got: %q\nwant: %q", body, errString(err), errString(want))
	}
	if err != nil && err.(*ValidationError).Input != want.(*ValidationError).Input {
		t.Fatalf("Input = %q, want %q", err.(*ValidationError).Input, want.(*ValidationError).Input)
	}
}

// TestStandInBounded checks that what openapi3filter gets stays a few
// bytes whatever the body: many unknown keys, a long one, a long value.
func TestStandInBounded(t *testing.T) {
	v := mixedValidator(t)
	many := []byte(`{"features": [1], "x": 1, "text": "a"`)
	for i := 20000; i > 0; i-- { // each key less than the one before
		many = fmt.Appendf(many, `, "k%05d": [1]`, i)
	}
	many = append(many, '}')
	tests := []struct {
		name, body, want, unknown string
	}{
		{"many keys", string(many), `{"features":[],"text":"","x":0,"??":[]}`, "k00001"},
		{"long key", `{"x": 1, "` + strings.Repeat("k", 1<<20) + `": "v"}`, `{"x":0,"??":""}`, strings.Repeat("k", 1<<20)},
		{"long value", `{"text": "` + strings.Repeat("a", 1<<20) + `", "?": 1}`, `{"?":0,"text":""}`, ""},
		{"not an object", `[` + strings.Repeat("1,", 1<<19) + `1]`, `[]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, unknown, err := v.standIn([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("stand-in %s, want %s", got, tt.want)
			}
			if unknown != tt.unknown {
				t.Errorf("unknown key %.80q, want %.80q", unknown, tt.unknown)
			}
		})
	}
}
