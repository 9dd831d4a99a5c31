package tokenizer

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// wordPieceJSON is a small BERT-style tokenizer.json; fragments replace
// its parts in the refusal tests.
const wordPieceJSON = `{
 "added_tokens": [{"id":0,"content":"[UNK]","special":true},{"id":1,"content":"[CLS]","special":true},{"id":2,"content":"[SEP]","special":true}],
 "normalizer": {"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true},
 "pre_tokenizer": {"type":"BertPreTokenizer"},
 "post_processor": {"type":"BertProcessing","sep":["[SEP]",2],"cls":["[CLS]",1]},
 "model": {"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":100,
  "vocab": {"[UNK]":0,"[CLS]":1,"[SEP]":2,"hello":3,"world":4,"!":5,"cafe":6,"un":7,"##aff":8,"##able":9}}
}`

func TestEncodeWordPiece(t *testing.T) {
	tok, err := Parse([]byte(wordPieceJSON))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text    string
		tokens  []string
		offsets [][2]int
	}{
		{"Hello, World!", []string{"[CLS]", "hello", "[UNK]", "world", "!", "[SEP]"}, [][2]int{{0, 0}, {0, 5}, {5, 6}, {7, 12}, {12, 13}, {0, 0}}},
		{"Café unaffable", []string{"[CLS]", "cafe", "un", "##aff", "##able", "[SEP]"}, [][2]int{{0, 0}, {0, 4}, {5, 7}, {7, 10}, {10, 14}, {0, 0}}},
		{"", []string{"[CLS]", "[SEP]"}, [][2]int{{0, 0}, {0, 0}}},
	}
	for _, tt := range tests {
		e, err := tok.Encode(tt.text, true)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(e.Tokens, tt.tokens) || !reflect.DeepEqual(e.Offsets, tt.offsets) {
			t.Errorf("Encode(%q) = %q %v, want %q %v", tt.text, e.Tokens, e.Offsets, tt.tokens, tt.offsets)
		}
	}
}

// TestRefused: a tokenizer.json that cannot be reproduced exactly is
// refused, the error naming the part.
func TestRefused(t *testing.T) {
	tests := []struct {
		name, from, to, want string
	}{
		{"unknown normalizer", `{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true}`,
			`{"type":"Sequence","normalizers":[{"type":"NFC"},{"type":"ByteLevel"}]}`, `normalizer.normalizers[1].type "ByteLevel" is not supported`},
		// A Precompiled normalizer whose charsmap cannot be read.
		{"charsmap not base64", `{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true}`,
			`{"type":"Sequence","normalizers":[{"type":"Precompiled","precompiled_charsmap":"%%%"}]}`, `normalizer.normalizers[0].precompiled_charsmap: not base64`},
		{"charsmap too short", `{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true}`,
			`{"type":"Precompiled","precompiled_charsmap":"AAA="}`, `normalizer.precompiled_charsmap: 2 bytes, too short for a trie size`},
		{"charsmap trie too long", `{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true}`,
			`{"type":"Precompiled","precompiled_charsmap":"CAAAAAAAAAA="}`, `normalizer.precompiled_charsmap: trie size 8 does not fit its 4 bytes`},
		{"charsmap empty trie", `{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true}`,
			`{"type":"Precompiled","precompiled_charsmap":"AAAAAA=="}`, `normalizer.precompiled_charsmap: trie size 0 does not fit`},
		{"no charsmap", `{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true}`,
			`{"type":"Precompiled"}`, `normalizer: no precompiled_charsmap`},
		{"wordlevel", `"type":"WordPiece"`, `"type":"WordLevel"`, `model.type "WordLevel" is not supported`},
		{"look-ahead", `{"type":"BertPreTokenizer"}`, `{"type":"Split","pattern":{"Regex":"\\s+(?!\\S)"},"behavior":"Isolated","invert":false}`,
			`pre_tokenizer.pattern.Regex "\\s+(?!\\S)": look-around`},
		{"unknown pre-tokenizer", `{"type":"BertPreTokenizer"}`, `{"type":"UnicodeScripts"}`, `pre_tokenizer.type "UnicodeScripts" is not supported`},
		{"post-processor", `"type":"BertProcessing"`, `"type":"Nonsense"`, `post_processor.type "Nonsense" is not supported`},
		{"stride", `"added_tokens"`, `"truncation":{"max_length":8,"stride":2,"strategy":"LongestFirst","direction":"Right"},"added_tokens"`, `truncation.stride 2 is not supported`},
		{"dropout", `"type":"WordPiece"`, `"type":"BPE","dropout":0.1,"merges":[]`, `model.dropout 0.1 is not supported`},
		{"bad json", `{`, `[`, `tokenizer.json`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := strings.Replace(wordPieceJSON, tt.from, tt.to, 1)
			if data == wordPieceJSON {
				t.Fatalf("%q is not in the fixture", tt.from)
			}
			_, err := Parse([]byte(data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse: %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestSplitGPT2(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Hello world", []string{"Hello", " world"}},
		{"a   b", []string{"a", "  ", " b"}},
		{"end  ", []string{"end", "  "}},
		{"I'm it's we'll", []string{"I", "'m", " it", "'s", " we", "'ll"}},
		{"x 123 ...!", []string{"x", " 123", " ...!"}},
		{"\t\tx", []string{"\t", "\tx"[:1], "x"}},
		{"'x", []string{"'", "x"}},
		{"é 中文", []string{"é", " 中文"}},
	}
	for _, tt := range tests {
		var got []string
		for _, m := range splitGPT2(tt.in) {
			got = append(got, tt.in[m[0]:m[1]])
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitGPT2(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestByteOffsets(t *testing.T) {
	got := ByteOffsets("aé中😀", [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 0}, {0, 4}})
	want := [][2]int{{0, 1}, {1, 3}, {3, 6}, {6, 10}, {0, 0}, {0, 10}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ByteOffsets = %v, want %v", got, want)
	}
}

// fixtures returns the tokenizers of testdata/fixtures.
func fixtures(t testing.TB) map[string]*Tokenizer {
	files, err := filepath.Glob("testdata/fixtures/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	out := map[string]*Tokenizer{}
	for _, f := range files {
		tok, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = tok
	}
	return out
}

// FuzzEncode: no input makes any fixture panic, offsets lie within the
// text, and ids are in the vocabulary.
func FuzzEncode(f *testing.F) {
	for _, s := range []string{"", "Hello world!", "Café 中文 😀👍🏽", "a\u0301\u0323 \x00\u200b\ufeff", "  <mask> [CLS] <|endoftext|>", "\xff\xfe"} {
		f.Add(s, "pair", true)
	}
	toks := fixtures(f)
	f.Fuzz(func(t *testing.T, a, b string, special bool) {
		for name, tok := range toks {
			for _, pair := range []bool{false, true} {
				var e Encoding
				var err error
				if pair {
					e, err = tok.EncodePair(a, b, special)
				} else {
					e, err = tok.Encode(a, special)
				}
				if err != nil {
					continue // truncation refusing a pair, say
				}
				n := max(utf8.RuneCountInString(strings.ToValidUTF8(a, "\uFFFD")), utf8.RuneCountInString(strings.ToValidUTF8(b, "\uFFFD")))
				for i, o := range e.Offsets {
					if o[0] < 0 || o[0] > o[1] || o[1] > n {
						t.Fatalf("%s: offsets %v of token %d out of the text (%d characters)", name, o, i, n)
					}
				}
				size := tok.model.vocabSize() + len(tok.added.byID)
				for _, id := range e.IDs {
					if id < 0 || int(id) >= size {
						t.Fatalf("%s: id %d out of the vocabulary (%d)", name, id, size)
					}
				}
			}
		}
	})
}

// BenchmarkTokenize encodes the corpus of testdata/bench.txt with every
// fixture, one text at a time, special tokens added; make tokenizer-bench
// prints the reference's throughput on the same texts beside it.
func BenchmarkTokenize(b *testing.B) {
	data, err := os.ReadFile("testdata/bench.txt")
	if err != nil {
		b.Fatal(err)
	}
	texts := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	for name, tok := range fixtures(b) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			// Throughput by the thread's CPU time too (cpu-MB/s), steadier
			// than wall-clock time when other processes share the cores.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			t0, ok := threadCPU()
			n := 0
			for b.Loop() {
				for _, s := range texts {
					// The reference refuses what this refuses (bert-cased's
					// only_second truncation of a single text): not an error here.
					_, _ = tok.Encode(s, true)
				}
				n++
			}
			if t1, ok1 := threadCPU(); ok && ok1 && t1 > t0 {
				b.ReportMetric(float64(len(data))*float64(n)/(t1-t0).Seconds()/1e6, "cpu-MB/s")
			}
		})
	}
}
