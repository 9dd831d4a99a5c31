package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	`{"a": [1, "x]"], "b": [[2], "y["], "c": {"d": "}"}, "e": [[3]]}`, `{"a": [1, "x]"], "b": [[2], "y["]]}`,
	`{"a": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], "b": ["]", "[", "}"], "c": [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]}`,
}

// generatedSeeds are bodies of the shapes that once cost more than linear
// time, at test size, and many keys with a duplicate (found by the hashed
// set, also when spelled with escapes), with their faults at the end.
func generatedSeeds() []string {
	keys := func(n int, last string) string {
		var sb strings.Builder
		sb.WriteString(`{"input": [1]`)
		for i := range n {
			fmt.Fprintf(&sb, `, "k%d": %d`, i, i)
		}
		return sb.String() + last
	}
	nest := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	return []string{
		keys(300, `}`),
		keys(300, `, "k17": 1}`),
		keys(300, `, "k\u0031\u0037": 1}`),
		keys(300, `, "k299": 1`),
		keys(300, `, "k300"}`),
		keys(5, `, "k\u0034": 1}`),
		// A decoded key as long as its text: held decoded, all the same.
		keys(300, `, "\n\n`+"\xff"+`": 1, "\u000a\u000a\ufffd": 2}`),
		keys(2, `, "\n\n`+"\xff"+`": 1, "\u000a\u000a\ufffd": 2}`),
		`{"input": ` + nest("[", "]", 3000) + `}`,
		`{"input": ` + nest("[", "]", 3000) + `]}`,
		`{"input": ` + nest(`[{"a":`, "}]", 700) + `}`,
		`{"input": ` + nest(`[{"a":`, "]}", 700) + `}`,
		`{"input": ` + nest("[", "]", 3000)[:5000] + `}`,
		`{"input": ["` + strings.Repeat("abc", 3000) + `"]}`,
		`{"input": ["` + strings.Repeat(`\n\"\u00e9`, 1000) + `"]}`,
		`{"input": ["` + strings.Repeat(`\n\"\u00e9`, 1000) + `\x"]}`,
		`{"input": ["` + strings.Repeat(`\n\"\u00e9`, 1000) + "\n" + `"]}`,
		`{"input": [1], "` + strings.Repeat("k", 5000) + `": 1}`,
		`{"input": [1], "` + strings.Repeat(`\u0041`, 1000) + `": 1}`,
		`{"input": [1], "` + strings.Repeat(`\u0041`, 1000) + `\q": 1}`,
		`{"input": [1], "` + strings.Repeat("é", 1000) + "\xff" + `": 1}`,
	}
}

// TestShallowAgainstEncodingJSON checks the shallow decoder against
// encoding/json on the seeds: whatever encoding/json accepts (bar duplicate
// keys, which the shallow decoder refuses), the shallow decoder accepts with
// the same top-level kinds; and reading one byte at a time changes nothing.
func TestShallowAgainstEncodingJSON(t *testing.T) {
	for _, s := range append(slices.Clone(shallowSeeds), generatedSeeds()...) {
		t.Run(fmt.Sprintf("%.60s", s), func(t *testing.T) { checkShallow(t, []byte(s)) })
	}
}

func FuzzShallow(f *testing.F) {
	for _, s := range shallowSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkShallow)
}

// checkShallow holds the in-place scan to the former decoder (reading one
// byte at a time, so that its buffer refills are exercised too): the same
// kinds, the same error with the same offset; the data is left as it was;
// and whatever encoding/json accepts (bar duplicate keys, which the scan
// refuses), the scan accepts with the same top-level kinds.
func checkShallow(t *testing.T, data []byte) {
	orig := bytes.Clone(data)
	got, err := decodeShallow(bytes.NewReader(data))
	if !bytes.Equal(data, orig) {
		t.Fatalf("the scan changed its input")
	}
	ref, refErr := decodeShallowRef(iotest.OneByteReader(bytes.NewReader(data)))
	if errString(err) != errString(refErr) {
		t.Fatalf("error %q, the former decoder says %q", errString(err), errString(refErr))
	}
	if err == nil && shallowKinds(got) != shallowKinds(ref) {
		t.Fatalf("kinds %s, the former decoder says %s", shallowKinds(got), shallowKinds(ref))
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

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
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

// TestSkipPlain puts every byte value at every position of a run of
// number text and checks where the word-at-a-time skips stop: at the first
// byte that matters (for skipBrackets also at the letters bracketMask cannot
// tell from a bracket, which skipNested then passes), never after.
func TestSkipPlain(t *testing.T) {
	const filler = "0.1234567, -8e+09, 42, true, null "
	for c := 0; c < 256; c++ {
		nested := c == '[' || c == ']' || c == '{' || c == '}'
		lookalike := c == 'Y' || c == '_' || c == 'y' || c == 0x7f
		inString := c == '"' || c == '\\' || c < 0x20
		for _, size := range []int{1, 7, 8, 9, 31, 32, 33, 70} {
			for pos := 0; pos < size; pos++ {
				for _, from := range []int{0, 1, 5} {
					if from > pos {
						continue
					}
					data := []byte(strings.Repeat(filler, 8)[:size])
					data[pos] = byte(c)
					want := size
					if nested {
						want = pos
					}
					got := skipBrackets(data, from)
					if (lookalike || c == '"') && got == pos {
						got = size // stopping there is allowed, not required
					}
					if got != want {
						t.Fatalf("skipBrackets: byte %#x at %d of %d, from %d: stopped at %d, want %d", c, pos, size, from, got, want)
					}
					want = size
					if inString {
						want = pos
					}
					// The filler has no quote, backslash or control byte.
					if got = skipStringPlain(data, from); got != want {
						t.Fatalf("skipStringPlain: byte %#x at %d of %d, from %d: stopped at %d, want %d", c, pos, size, from, got, want)
					}
				}
			}
		}
	}
}
