package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Encoding is what a Tokenizer makes of one input (a text or a pair).
// Offsets are [start, end) in characters (Unicode code points) of the
// input text the token comes from (the first or the second of a pair), as
// the reference reports them; special and padding tokens have [0, 0).
// ByteOffsets converts them to bytes.
type Encoding struct {
	IDs               []int64
	TypeIDs           []int64
	AttentionMask     []int64
	SpecialTokensMask []int64
	Offsets           [][2]int
	Tokens            []string
}

// Len is the number of tokens.
func (e *Encoding) Len() int { return len(e.IDs) }

func (e *Encoding) clone() *Encoding {
	return &Encoding{IDs: slices.Clone(e.IDs), TypeIDs: slices.Clone(e.TypeIDs), AttentionMask: slices.Clone(e.AttentionMask),
		SpecialTokensMask: slices.Clone(e.SpecialTokensMask), Offsets: slices.Clone(e.Offsets), Tokens: slices.Clone(e.Tokens)}
}

func (e *Encoding) append(o *Encoding) {
	e.IDs = append(e.IDs, o.IDs...)
	e.TypeIDs = append(e.TypeIDs, o.TypeIDs...)
	e.AttentionMask = append(e.AttentionMask, o.AttentionMask...)
	e.SpecialTokensMask = append(e.SpecialTokensMask, o.SpecialTokensMask...)
	e.Offsets = append(e.Offsets, o.Offsets...)
	e.Tokens = append(e.Tokens, o.Tokens...)
}

// keep cuts the encoding down to its tokens [s, e).
func (e *Encoding) keep(s, end int) {
	e.IDs, e.TypeIDs, e.AttentionMask = e.IDs[s:end], e.TypeIDs[s:end], e.AttentionMask[s:end]
	e.SpecialTokensMask, e.Offsets, e.Tokens = e.SpecialTokensMask[s:end], e.Offsets[s:end], e.Tokens[s:end]
}

// ByteOffsets converts offsets in characters of text (as Encoding has
// them) to offsets in bytes.
func ByteOffsets(text string, offsets [][2]int) [][2]int {
	starts := make([]int, 0, len(text)+1)
	for i := range text {
		starts = append(starts, i)
	}
	starts = append(starts, len(text))
	at := func(c int) int { return starts[min(max(c, 0), len(starts)-1)] }
	out := make([][2]int, len(offsets))
	for i, o := range offsets {
		out[i] = [2]int{at(o[0]), at(o[1])}
	}
	return out
}

// Tokenizer encodes text as the Hugging Face tokenizers library does with
// the tokenizer.json it was loaded from. It is safe for concurrent use.
type Tokenizer struct {
	normalizer normalizer
	pre        preTokenizer
	model      model
	post       postProcessor
	added      *addedVocab
	trunc      *truncation
	pad        *padding
	decoder    decoder
	// rev lists the model's tokens by id, made on the first Decode.
	rev *reverse
}

// reverse is the model's tokens by id.
type reverse struct {
	once  sync.Once
	byID  []string
	hasID []bool
}

// Load reads and parses a tokenizer.json file.
func Load(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Parse builds a Tokenizer from the contents of a tokenizer.json. A file
// with a component that is not reproduced exactly is refused, the error
// naming it (`model.type "WordLevel" is not supported`).
func Parse(data []byte) (*Tokenizer, error) {
	var f struct {
		Normalizer    json.RawMessage `json:"normalizer"`
		PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
		Model         json.RawMessage `json:"model"`
		PostProcessor json.RawMessage `json:"post_processor"`
		Decoder       json.RawMessage `json:"decoder"`
		AddedTokens   json.RawMessage `json:"added_tokens"`
		Truncation    json.RawMessage `json:"truncation"`
		Padding       json.RawMessage `json:"padding"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	if isNull(f.Model) {
		return nil, errors.New("tokenizer.json: no model")
	}
	t := &Tokenizer{}
	var err error
	if t.normalizer, err = parseNormalizer(f.Normalizer, "normalizer"); err != nil {
		return nil, err
	}
	if t.pre, err = parsePreTokenizer(f.PreTokenizer, "pre_tokenizer"); err != nil {
		return nil, err
	}
	if t.model, err = parseModel(f.Model); err != nil {
		return nil, err
	}
	if t.post, err = parsePostProcessor(f.PostProcessor, "post_processor"); err != nil {
		return nil, err
	}
	if t.decoder, err = parseDecoder(f.Decoder, "decoder"); err != nil {
		return nil, err
	}
	t.rev = &reverse{}
	if t.added, err = parseAdded(f.AddedTokens, t.model, t.normalizer); err != nil {
		return nil, err
	}
	if t.trunc, err = parseTruncation(f.Truncation); err != nil {
		return nil, err
	}
	if t.pad, err = parsePadding(f.Padding); err != nil {
		return nil, err
	}
	if t.trunc != nil && t.post != nil && t.trunc.maxLength < t.post.added(true) {
		return nil, fmt.Errorf("truncation.max_length %d is less than the %d special tokens of a pair", t.trunc.maxLength, t.post.added(true))
	}
	return t, nil
}

// MaxLength is the truncation's max_length, 0 when the tokenizer does not
// truncate.
func (t *Tokenizer) MaxLength() int {
	if t.trunc == nil {
		return 0
	}
	return t.trunc.maxLength
}

// Encode encodes one text; addSpecial adds the post-processor's special
// tokens. The tokenizer.json's truncation and padding apply.
func (t *Tokenizer) Encode(text string, addSpecial bool) (Encoding, error) {
	return t.encode(text, nil, addSpecial)
}

// EncodePair encodes a pair of texts (a question and its context, two
// sentences) as one input.
func (t *Tokenizer) EncodePair(a, b string, addSpecial bool) (Encoding, error) {
	return t.encode(a, &b, addSpecial)
}

// EncodeBatch encodes texts one by one and pads them together with the
// tokenizer.json's padding (BatchLongest: to the longest of the batch).
func (t *Tokenizer) EncodeBatch(texts []string, addSpecial bool) ([]Encoding, error) {
	out := make([]Encoding, len(texts))
	for i, text := range texts {
		e, err := t.encode(text, nil, addSpecial)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	if t.pad != nil {
		t.pad.apply(out)
	}
	return out, nil
}

func (t *Tokenizer) encode(a string, b *string, addSpecial bool) (Encoding, error) {
	first, err := t.encodeSequence(a, 0)
	if err != nil {
		return Encoding{}, err
	}
	encs := []*Encoding{first}
	if b != nil {
		second, err := t.encodeSequence(*b, 1)
		if err != nil {
			return Encoding{}, err
		}
		encs = append(encs, second)
	}
	if t.trunc != nil {
		max := t.trunc.maxLength
		if addSpecial && t.post != nil {
			max -= t.post.added(b != nil)
		}
		if err := t.trunc.apply(encs, max); err != nil {
			return Encoding{}, err
		}
	}
	if t.post != nil {
		for i, e := range encs {
			setTypeIDs(e, int64(i))
		}
		encs = t.post.process(encs, addSpecial)
	}
	var out Encoding
	for _, e := range encs {
		out.append(e)
	}
	if t.pad != nil {
		one := []Encoding{out}
		t.pad.apply(one)
		out = one[0]
	}
	return out, nil
}

// encodeSequence runs one text through the added tokens, the normalizer,
// the pre-tokenizer and the model.
func (t *Tokenizer) encodeSequence(text string, typeID int64) (*Encoding, error) {
	text = strings.ToValidUTF8(text, "\uFFFD")
	ps := t.added.extract(text, t.normalizer)
	if t.pre != nil {
		ps = t.pre(ps)
	}
	n := 0
	for _, p := range ps {
		if !p.done {
			toks, err := t.model.tokenize(p.norm)
			if err != nil {
				return nil, err
			}
			p.toks = toks
		}
		n += len(p.toks)
	}
	conv := newCharOffsets(text)
	// The fields are sized once: the special tokens and the pair's
	// sequence are appended later, so a little room is left.
	const room = 4
	e := &Encoding{
		IDs: make([]int64, 0, n+room), Tokens: make([]string, 0, n+room), Offsets: make([][2]int, 0, n+room),
		TypeIDs: make([]int64, 0, n+room), AttentionMask: make([]int64, 0, n+room), SpecialTokensMask: make([]int64, 0, n+room),
	}
	for _, p := range ps {
		for _, tok := range p.toks {
			var o [2]int
			if tok.s == tok.e {
				o = [2]int{p.shift + tok.s, p.shift + tok.e}
			} else {
				o = [2]int{p.al[tok.s].s, p.al[tok.e-1].e}
			}
			e.IDs = append(e.IDs, int64(tok.id))
			e.Tokens = append(e.Tokens, tok.value)
			e.Offsets = append(e.Offsets, conv.convert(o))
			e.TypeIDs = append(e.TypeIDs, typeID)
			e.AttentionMask = append(e.AttentionMask, 1)
			e.SpecialTokensMask = append(e.SpecialTokensMask, 0)
		}
	}
	return e, nil
}

// charOffsets converts byte offsets of a text to character offsets as the
// reference does (an offset that is not a character's start is left as
// it is, an end past the last character is one past the last).
type charOffsets struct {
	char []int32 // byte → index of the character it is part of
	n    int
}

func newCharOffsets(text string) charOffsets {
	c := charOffsets{char: make([]int32, len(text)), n: len(text)}
	i := int32(0)
	for b := range text {
		_, size := utf8.DecodeRuneInString(text[b:])
		for k := 0; k < size; k++ {
			c.char[b+k] = i
		}
		i++
	}
	return c
}

func (c charOffsets) convert(o [2]int) [2]int {
	if o[0] < 0 || o[0] >= c.n {
		return o
	}
	s := int(c.char[o[0]])
	if o[1] < c.n && o[1] >= 0 {
		return [2]int{s, int(c.char[o[1]])}
	}
	if o[1] >= 1 && o[1]-1 < c.n {
		return [2]int{s, int(c.char[o[1]-1]) + 1}
	}
	return [2]int{s, s + 1}
}
