package decode

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

func TestTritonClasses(t *testing.T) {
	items := [][]Class{
		{{"cat", 3, 0.93}, {"dog", 1, 0.0500001}},
		{{"", 7, 12345.6789}, {"a:b 猫", 0, -0.0000004}},
		{{"x", 2, math.NaN()}, {"y", 4, math.Inf(1)}},
		{{"z", 5, math.Inf(-1)}, {"w", 6, 1e20}},
	}
	want := []string{
		"0.930000:3:cat", "0.050000:1:dog",
		"12345.678900:7", "-0.000000:0:a:b 猫",
		"nan:2:x", "inf:4:y",
		"-inf:5:z", "100000000000000000000.000000:6:w",
	}
	if got := TritonClasses(items); !slices.Equal(got, want) {
		t.Errorf("TritonClasses =\n%q\nwant\n%q", got, want)
	}
	if got := TritonClasses(nil); got == nil || len(got) != 0 {
		t.Errorf("TritonClasses(nil) = %#v, want an empty list", got)
	}
}

func TestAppendClassesJSON(t *testing.T) {
	items := [][]Class{
		{{"cat", 3, float64(float32(0.93))}, {"quote \" back \\ nl \n tab \t ctl \x01 \u2028\u2029 猫 😀", 1, 0.0500001}},
		{},
		{{"bad \xff utf8", 0, math.NaN()}, {"inf", 1, math.Inf(-1)}, {"big", 2, 1e300}, {"neg zero", 4, math.Copysign(0, -1)}},
	}
	got := AppendClassesJSON([]byte("x"), items)
	want := `x[[{"label":"cat","index":3,"score":0.93},` +
		`{"label":"quote \" back \\ nl \u000a tab \u0009 ctl \u0001 \u2028\u2029 猫 😀","index":1,"score":0.0500001}],[],` +
		`[{"label":"bad \ufffd utf8","index":0,"score":null},{"label":"inf","index":1,"score":null},` +
		`{"label":"big","index":2,"score":1e+300},{"label":"neg zero","index":4,"score":-0}]]`
	if string(got) != want {
		t.Errorf("AppendClassesJSON =\n%s\nwant\n%s", got, want)
	}

	var back [][]struct {
		Label string   `json:"label"`
		Index int      `json:"index"`
		Score *float64 `json:"score"`
	}
	if err := json.Unmarshal(got[1:], &back); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if len(back) != len(items) {
		t.Fatalf("%d items back, want %d", len(back), len(items))
	}
	for i, item := range items {
		for j, c := range item {
			b := back[i][j]
			label := c.Label
			if i == 2 && j == 0 {
				label = "bad \uFFFD utf8"
			}
			if b.Label != label || b.Index != c.Index {
				t.Errorf("item %d class %d back as %q %d, want %q %d", i, j, b.Label, b.Index, label, c.Index)
			}
			switch {
			case math.IsNaN(c.Score) || math.IsInf(c.Score, 0):
				if b.Score != nil {
					t.Errorf("item %d class %d: score %v back as %v, want null", i, j, c.Score, *b.Score)
				}
			case math.Abs(c.Score) > math.MaxFloat32:
				if *b.Score != c.Score {
					t.Errorf("item %d class %d: score %v back as %v", i, j, c.Score, *b.Score)
				}
			case float32(*b.Score) != float32(c.Score):
				t.Errorf("item %d class %d: score %v back as %v, not the same float32", i, j, c.Score, *b.Score)
			}
		}
	}

	// encoding/json writes a Class as the helper does.
	viaJSON, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	if string(viaJSON) != want[1:] {
		t.Errorf("json.Marshal =\n%s\nwant\n%s", viaJSON, want[1:])
	}
	if got := AppendClassesJSON(nil, [][]Class{}); string(got) != "[]" {
		t.Errorf("no items: %s", got)
	}
}

func TestAppendTextsJSON(t *testing.T) {
	texts := []Text{{"中文 text", 0.97}, {"", 0}, {"\"<&>\"", float64(float32(1) / 3)}}
	got := AppendTextsJSON(nil, texts)
	want := `[{"text":"中文 text","score":0.97},{"text":"","score":0},{"text":"\"<&>\"","score":0.33333334}]`
	if string(got) != want {
		t.Errorf("AppendTextsJSON =\n%s\nwant\n%s", got, want)
	}
	var back []Text
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	for i, tx := range texts {
		if back[i].Text != tx.Text || float32(back[i].Score) != float32(tx.Score) {
			t.Errorf("text %d back as %+v, want %+v", i, back[i], tx)
		}
	}
	// encoding/json writes a Text as the helper does (but for its HTML
	// escaping, which the helpers leave out).
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(texts); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSuffix(buf.String(), "\n"); got != want {
		t.Errorf("json.Encoder =\n%s\nwant\n%s", got, want)
	}
}

// TestAppendStringMatchesEncodingJSON: every byte below 0x80 and some
// multi-byte and invalid sequences read back through encoding/json as
// encoding/json itself would write them.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	var all []byte
	for c := range 0x80 {
		all = append(all, byte(c))
	}
	for _, s := range []string{string(all), "é中😀\u2028\u2029", "\xff\xfe", "a\xc3", "\xed\xa0\x80"} {
		got := tensorjson.AppendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("AppendString(%q) = %s: %v", s, got, err)
		}
		ref, _ := json.Marshal(s)
		var refBack string
		if err := json.Unmarshal(ref, &refBack); err != nil {
			t.Fatal(err)
		}
		if back != refBack {
			t.Errorf("AppendString(%q) reads back as %q, encoding/json's as %q", s, back, refBack)
		}
	}
}
