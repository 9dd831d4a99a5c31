//go:build !race

// The tests in this file compare svc's tokenizer with Hugging Face
// tokenizers, text by text, in one goroutine. The race detector finds
// races between goroutines: it would find none here, and makes them
// several times slower. make test runs them in a pass of their own without
// it (ci/norace.sh); go test without -race runs them with the rest.

package tokenizer

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
)

// refEncoding is an encoding as testdata/reference.js writes it.
type refEncoding struct {
	IDs               []int64  `json:"ids"`
	TypeIDs           []int64  `json:"type_ids"`
	AttentionMask     []int64  `json:"attention_mask"`
	SpecialTokensMask []int64  `json:"special_tokens_mask"`
	Offsets           [][2]int `json:"offsets"`
	Tokens            []string `json:"tokens"`
}

type refCase struct {
	Kind      string        `json:"kind"`
	Add       bool          `json:"add"`
	Texts     []string      `json:"texts"`
	Encodings []refEncoding `json:"encodings"`
	Error     string        `json:"error"`
	// Decoded is a single text's ids decoded, special tokens skipped
	// and kept.
	Decoded []string `json:"decoded"`
}

// nodeModules is where make tokref puts the reference library.
func nodeModules(t testing.TB) string {
	dir, err := filepath.Abs("../../../build/tokref/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "@anush008", "tokenizers-linux-x64-gnu")); err != nil {
		t.Fatalf("the reference library is missing (run make tokref): %v", err)
	}
	return dir
}

// reference runs testdata/reference.js over the fixtures and returns what
// the Hugging Face library makes of the corpus, by fixture file.
func reference(t *testing.T, dir string) map[string][]refCase {
	out := filepath.Join(t.TempDir(), "reference.json")
	cmd := exec.Command("node", "testdata/reference.js", "encode", dir, out)
	cmd.Env = append(os.Environ(), "NODE_PATH="+nodeModules(t))
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("reference.js: %v\n%s", err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var ref map[string][]refCase
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

// TestReference compares every encoding of the corpus (single texts,
// pairs, batches, with and without special tokens) with the Hugging Face
// library's, field by field.
func TestReference(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference library under Node (make tokref); not in -short")
	}
	// The trained fixtures, and the real tokenizer.json files make tokref
	// fetches (Llama 2's) or builds from published SentencePiece models
	// (ALBERT's and a second one, with their compiled character maps).
	real := filepath.Join(filepath.Dir(nodeModules(t)), "real")
	for _, f := range []string{"llama2.json", "albert.json", "smart-xlmr.json"} {
		if _, err := os.Stat(filepath.Join(real, f)); err != nil {
			t.Fatalf("a real tokenizer.json is missing (run make tokref): %v", err)
		}
	}
	dirs := []string{"testdata/fixtures", real}
	total, bad := 0, 0
	for _, dir := range dirs {
		ref := reference(t, dir)
		files := make([]string, 0, len(ref))
		for f := range ref {
			files = append(files, f)
		}
		sort.Strings(files)
		for _, f := range files {
			total, bad = compareFile(t, filepath.Join(dir, f), ref[f], total, bad)
		}
	}
	t.Logf("%d of %d cases equal to the reference", total-bad, total)
}

func compareFile(t *testing.T, file string, cases []refCase, total, bad int) (int, int) {
	t.Run(filepath.Base(file), func(t *testing.T) {
		tok, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cases {
			total++
			if msg := compareCase(tok, c); msg != "" {
				bad++
				t.Errorf("case %d (%s, special tokens %v, texts %q): %s", i, c.Kind, c.Add, c.Texts, msg)
			}
		}
	})
	return total, bad
}

func compareCase(tok *Tokenizer, c refCase) string {
	var got []Encoding
	var err error
	switch c.Kind {
	case "single":
		var e Encoding
		e, err = tok.Encode(c.Texts[0], c.Add)
		got = []Encoding{e}
	case "pair":
		var e Encoding
		e, err = tok.EncodePair(c.Texts[0], c.Texts[1], c.Add)
		got = []Encoding{e}
	case "batch":
		got, err = tok.EncodeBatch(c.Texts, c.Add)
	}
	if c.Error != "" || err != nil {
		if (c.Error != "") != (err != nil) {
			return fmt.Sprintf("error %v, the reference's %q", err, c.Error)
		}
		return ""
	}
	if len(got) != len(c.Encodings) {
		return fmt.Sprintf("%d encodings, the reference %d", len(got), len(c.Encodings))
	}
	for i, want := range c.Encodings {
		if msg := compareEncoding(got[i], want); msg != "" {
			return fmt.Sprintf("encoding %d: %s", i, msg)
		}
	}
	for k, want := range c.Decoded {
		text, err := tok.Decode(c.Encodings[0].IDs, k == 0)
		if err != nil || text != want {
			return fmt.Sprintf("decoded (skipping special tokens %v): %q, %v; the reference's %q", k == 0, text, err, want)
		}
	}
	return ""
}

// compareEncoding names the first field and token where got differs.
func compareEncoding(got Encoding, want refEncoding) string {
	fields := []struct {
		name      string
		got, want any
	}{
		{"tokens", got.Tokens, want.Tokens}, {"ids", got.IDs, want.IDs}, {"offsets", got.Offsets, want.Offsets},
		{"type_ids", got.TypeIDs, want.TypeIDs}, {"attention_mask", got.AttentionMask, want.AttentionMask},
		{"special_tokens_mask", got.SpecialTokensMask, want.SpecialTokensMask},
	}
	for _, f := range fields {
		g, w := reflect.ValueOf(f.got), reflect.ValueOf(f.want)
		if g.Len() == 0 && w.Len() == 0 {
			continue
		}
		for i := 0; i < max(g.Len(), w.Len()); i++ {
			if i >= g.Len() || i >= w.Len() || !reflect.DeepEqual(g.Index(i).Interface(), w.Index(i).Interface()) {
				return fmt.Sprintf("%s differ at %d: got %v, want %v (tokens %q, want %q)", f.name, i, at(g, i), at(w, i), got.Tokens, want.Tokens)
			}
		}
	}
	return ""
}

func at(v reflect.Value, i int) any {
	if i < v.Len() {
		return v.Index(i).Interface()
	}
	return "nothing"
}
