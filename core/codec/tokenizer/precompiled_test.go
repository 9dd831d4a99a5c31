package tokenizer

import (
	"encoding/base64"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
)

// TestPrecompiled encodes with the unigram-precompiled fixture, whose
// charsmap testdata/reference.js compiles from a few rules: the tokens and
// offsets are the reference's (TestReference compares the whole corpus
// under Node; this runs in -short too).
func TestPrecompiled(t *testing.T) {
	tok, err := Load("testdata/fixtures/unigram-precompiled.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text    string
		tokens  []string
		offsets [][2]int
	}{
		// Full-width letters to ASCII, a ligature to two letters (both
		// from the one character), a character to four.
		{"ＡＢＣ ﬁ ㍿", []string{"▁", "AB", "C", "▁", "f", "i", "▁", "株式会社"},
			[][2]int{{0, 1}, {0, 2}, {2, 3}, {3, 4}, {4, 5}, {4, 5}, {5, 6}, {6, 7}}},
		// Characters removed at the start (which the reference does not
		// account for: what follows is aligned one character early), CR LF
		// one grapheme whose CR's rule replaces both, a soft hyphen removed.
		{"\u0001\u0002ab\r\ncd\u00ad", []string{"▁", "a", "b", "▁", "c", "d"},
			[][2]int{{0, 1}, {0, 1}, {1, 2}, {2, 3}, {4, 5}, {5, 6}}},
		// A grapheme replaced by its shortest prefix's rule (o + diaeresis,
		// not the longer key with the macron), a 6-byte grapheme looked up
		// character by character, and `` never looked up whole.
		{"o\u0308\u0304 e\u0301 ｶﾞ ``", []string{"▁", "ö", "▁", "é", "▁", "\u30ab\u3099", "▁", "``"},
			[][2]int{{0, 1}, {0, 1}, {3, 4}, {4, 5}, {6, 7}, {7, 9}, {9, 10}, {10, 12}}},
	}
	for _, tt := range tests {
		e, err := tok.Encode(tt.text, false)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(e.Tokens, tt.tokens) || !reflect.DeepEqual(e.Offsets, tt.offsets) {
			t.Errorf("Encode(%q) = %q %v, want %q %v", tt.text, e.Tokens, e.Offsets, tt.tokens, tt.offsets)
		}
	}
}

// TestPrecompiledOutside: a charsmap whose trie points outside itself or
// its blob matches nothing there instead of failing; the text is kept.
func TestPrecompiledOutside(t *testing.T) {
	charsmap := func(units []uint32, blob string) string {
		data := make([]byte, 4+4*len(units))
		binary.LittleEndian.PutUint32(data, uint32(4*len(units)))
		for i, u := range units {
			binary.LittleEndian.PutUint32(data[4+4*i:], u)
		}
		return base64.StdEncoding.EncodeToString(append(data, blob...))
	}
	// The root's children lie beyond the trie.
	far := []uint32{1000 << 10}
	// 'a' (unit 97, children at 97^225 = 128) has a value beyond the blob.
	beyond := make([]uint32, 256)
	beyond[97] = 'a' | 1<<8 | (97^128)<<10
	beyond[128] = 1<<31 | 70000
	for _, cm := range []string{charsmap(far, "x\x00"), charsmap(beyond, "x\x00")} {
		m, err := parseCharsmap(cm, "normalizer")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"abc", "a", "e\u0301", strings.Repeat("\u00e9", 3), ""} {
			p := newPiece(s)
			m.normalize(p)
			if p.norm != s {
				t.Errorf("normalize(%q) = %q, want it unchanged", s, p.norm)
			}
		}
	}
	// The same trie with the value inside the blob: 'a' becomes "x".
	beyond[128] = 1 << 31
	m, err := parseCharsmap(charsmap(beyond, "x\x00"), "normalizer")
	if err != nil {
		t.Fatal(err)
	}
	p := newPiece("bab")
	m.normalize(p)
	if p.norm != "bxb" {
		t.Errorf("normalize(bab) = %q, want bxb", p.norm)
	}
}
