package tokenizer

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOptions: the bert-uncased fixture's vocabulary size and padding id,
// and WithTruncation's cap (special tokens included), off at 0, without
// the file's padding.
func TestOptions(t *testing.T) {
	tok, err := Load(filepath.Join("testdata", "fixtures", "bert-uncased.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := tok.VocabSize(); n != 444 {
		t.Errorf("VocabSize %d, want 444", n)
	}
	if id, typ := tok.PadID(); id != 438 || typ != 0 {
		t.Errorf("PadID %d %d, want 438 0", id, typ)
	}
	long := strings.Repeat("hello world ", 40)
	tests := []struct {
		max  int
		want func(n int) bool
	}{
		{8, func(n int) bool { return n == 8 }},
		{48, func(n int) bool { return n == 48 }},
		{0, func(n int) bool { return n > 48 }},
	}
	for _, tt := range tests {
		e, err := tok.WithTruncation(tt.max).Encode(long, true)
		if err != nil {
			t.Fatal(err)
		}
		if !tt.want(e.Len()) || e.Tokens[0] != "[CLS]" || e.Tokens[e.Len()-1] != "[SEP]" {
			t.Errorf("WithTruncation(%d): %d tokens, %s ... %s", tt.max, e.Len(), e.Tokens[0], e.Tokens[e.Len()-1])
		}
	}
	if n := tok.MaxLength(); n != 48 {
		t.Errorf("WithTruncation changed the tokenizer: MaxLength %d", n)
	}
	encs, err := tok.WithTruncation(48).EncodeBatch([]string{"a", "hello world"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if encs[0].Len() == encs[1].Len() {
		t.Errorf("WithTruncation kept the padding: %d and %d tokens", encs[0].Len(), encs[1].Len())
	}
}
