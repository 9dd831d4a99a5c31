package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/iotest"
)

// kindOf names the JSON kind of a generic value.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64, json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// shallowKinds summarizes a decoded body: the kind of the top level, and for
// an object the kind of each member.
func shallowKinds(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return kindOf(v)
	}
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+":"+kindOf(m[k]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

var shallowSeeds = []string{
	`{}`,
	`{"a": [1, 2, [3, [4]]], "b": "x", "c": 1.5e-3, "d": true, "e": false, "f": null, "g": {"h": [1]}}`,
	`{"s": "a \"quoted\" ] } [ { string", "t": ["\\", "\\\"", "]"]}`,
	`{"\u00e9t\u00e9": [1], "k\n": 2, "😀": "😀"}`,
	` [1, 2] `, `"x"`, `-0.5E+10`, `true`, `null`,
	`{"a": [1,2,3,4]`, `{"a": [1}`, `{"a": 01}`, `{"a": 1.}`, `{"a": .5}`, `{"a": 1e}`,
	`{"a": [1], "a": [2]}`, `{"a" [1]}`, `{"a": [1],}`, `{,}`, `{"a": "\x01"}`, "{\"a\": \"\xff\"}",
	`{"a": [[[[[[[[[[]]]]]]]]]]}`, `{"a": [{"b": [{"c": "}"}]}]}`, `{"a": "unterminated`, `{"a": [1]} {}`,
}

// TestShallowAgainstEncodingJSON checks the shallow decoder against
// encoding/json on the seeds: whatever encoding/json accepts (bar duplicate
// keys, which the shallow decoder refuses), the shallow decoder accepts with
// the same top-level kinds; and reading one byte at a time changes nothing.
func TestShallowAgainstEncodingJSON(t *testing.T) {
	for _, s := range shallowSeeds {
		t.Run(s, func(t *testing.T) { checkShallow(t, []byte(s)) })
	}
}

func FuzzShallow(f *testing.F) {
	for _, s := range shallowSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkShallow)
}

func checkShallow(t *testing.T, data []byte) {
	got, err := decodeShallow(bytes.NewReader(data))
	slow, slowErr := decodeShallow(iotest.OneByteReader(bytes.NewReader(data)))
	if (err == nil) != (slowErr == nil) || (err != nil && err.Error() != slowErr.Error()) {
		t.Fatalf("one byte at a time: %v, at once: %v", slowErr, err)
	}
	if err == nil && shallowKinds(got) != shallowKinds(slow) {
		t.Fatalf("one byte at a time: %s, at once: %s", shallowKinds(slow), shallowKinds(got))
	}
	var want any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // grammar only: 1e700 is valid JSON
	if json.Valid(data) {
		if derr := dec.Decode(&want); derr != nil {
			t.Fatalf("encoding/json: %v", derr)
		}
	} else {
		if err == nil {
			// Accepted although encoding/json refuses: only allowed when the
			// fault is inside a skipped nested value.
			if _, ok := got.(map[string]any); !ok {
				if kindOf(got) != "array" {
					t.Fatalf("accepted invalid JSON %q as %s", data, shallowKinds(got))
				}
			}
		}
		return
	}
	if err != nil {
		var syn *SyntaxError
		if errors.As(err, &syn) && strings.HasPrefix(syn.Msg, "duplicate key") {
			return
		}
		t.Fatalf("refused valid JSON %q: %v", data, err)
	}
	if shallowKinds(got) != shallowKinds(want) {
		t.Fatalf("kinds %s, encoding/json says %s", shallowKinds(got), shallowKinds(want))
	}
}

func TestShallowErrors(t *testing.T) {
	tests := []struct {
		give string
		want string
	}{
		{`{"a": [1,2,3,4]`, "unexpected end of input at byte 15"},
		{`{"a": [1}`, "mismatched bracket at byte 8"},
		{`{"a": 01}`, "expected ',' or '}' after an object member at byte 7"},
		{`{"a": 1.}`, "invalid number at byte 8"},
		{`{"a": [1], "a": [2]}`, "duplicate key 'a' at byte 11"},
		{"{\"a\": \"\xff\"}", ""},
		{`{"a": "x\`, "unexpected end of input in a string at byte 9"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			_, err := decodeShallow(strings.NewReader(tt.give))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("err = %q, want %q", got, tt.want)
			}
		})
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestShallowReadError(t *testing.T) {
	_, err := decodeShallow(failingReader{})
	if err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("err = %v", err)
	}
	var syn *SyntaxError
	if errors.As(err, &syn) {
		t.Fatal("a read error is reported as a syntax error")
	}
}

func TestHasStructural(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := c == '[' || c == ']' || c == '{' || c == '}' || c == '"'
		for pos := 0; pos < 8; pos++ {
			w := uint64(0x3030303030303030) // "00000000"
			w &^= 0xff << (8 * pos)
			w |= uint64(c) << (8 * pos)
			if got := hasStructural(w); got != want {
				t.Fatalf("byte %#x at %d: got %v, want %v", c, pos, got, want)
			}
		}
	}
}
