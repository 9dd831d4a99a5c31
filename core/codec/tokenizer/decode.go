package tokenizer

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// decoder turns tokens back into text, one step of the chain as the
// Hugging Face library's decode_chain: each token in, the tokens out.
type decoder func(tokens []string) []string

// parseDecoder builds the decoder of raw (nil: none); path names it in
// errors.
func parseDecoder(raw json.RawMessage, path string) (decoder, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c struct {
		Type               string            `json:"type"`
		Decoders           []json.RawMessage `json:"decoders"`
		Prefix             *string           `json:"prefix"`
		Cleanup            *bool             `json:"cleanup"`
		Replacement        string            `json:"replacement"`
		AddPrefixSpace     *bool             `json:"add_prefix_space"`
		PrependScheme      *string           `json:"prepend_scheme"`
		Pattern            map[string]string `json:"pattern"`
		Content            json.RawMessage   `json:"content"`
		Start              int               `json:"start"`
		Stop               int               `json:"stop"`
		Suffix             *string           `json:"suffix"`
		PadToken           *string           `json:"pad_token"`
		WordDelimiterToken *string           `json:"word_delimiter_token"`
	}
	if err := decode(raw, path, &c); err != nil {
		return nil, err
	}
	str := func(p *string, def string) string {
		if p == nil {
			return def
		}
		return *p
	}
	on := func(p *bool, def bool) bool {
		if p == nil {
			return def
		}
		return *p
	}
	switch c.Type {
	case "Sequence":
		var steps []decoder
		for i, d := range c.Decoders {
			step, err := parseDecoder(d, fmt.Sprintf("%s.decoders[%d]", path, i))
			if err != nil {
				return nil, err
			}
			if step != nil {
				steps = append(steps, step)
			}
		}
		return func(tokens []string) []string {
			for _, s := range steps {
				tokens = s(tokens)
			}
			return tokens
		}, nil
	case "WordPiece":
		return wordPieceDecoder(str(c.Prefix, "##"), on(c.Cleanup, true)), nil
	case "ByteLevel":
		return byteLevelDecoder, nil
	case "Metaspace":
		rep := c.Replacement
		if rep == "" {
			rep = "▁"
		}
		prepend := on(c.AddPrefixSpace, true)
		if c.PrependScheme != nil {
			prepend = *c.PrependScheme != "never"
		}
		return metaspaceDecoder(rep, prepend), nil
	case "Replace":
		return replaceDecoder(c.Pattern, c.Content, path)
	case "ByteFallback":
		return byteFallbackDecoder, nil
	case "Fuse":
		return func(tokens []string) []string { return []string{strings.Join(tokens, "")} }, nil
	case "Strip":
		var content string
		_ = json.Unmarshal(c.Content, &content)
		return stripDecoder(content, c.Start, c.Stop), nil
	case "BPEDecoder":
		suffix := str(c.Suffix, "</w>")
		return func(tokens []string) []string {
			out := make([]string, len(tokens))
			for i, t := range tokens {
				rep := " "
				if i == len(tokens)-1 {
					rep = ""
				}
				out[i] = strings.ReplaceAll(t, suffix, rep)
			}
			return out
		}, nil
	case "CTC":
		return ctcDecoder(str(c.PadToken, "<pad>"), str(c.WordDelimiterToken, "|"), on(c.Cleanup, true)), nil
	}
	return nil, unknownType(path, c.Type, knownDecoders)
}

// cleanup undoes the spaces a word-level tokenizer put before
// punctuation and contractions, as the library's cleanup does.
func cleanup(s string) string {
	return strings.NewReplacer(" .", ".", " ?", "?", " !", "!", " ,", ",", " ' ", "'", " n't", "n't", " 'm", "'m", " do not", " don't", " 's", "'s", " 've", "'ve", " 're", "'re").Replace(s)
}

func wordPieceDecoder(prefix string, clean bool) decoder {
	return func(tokens []string) []string {
		out := make([]string, len(tokens))
		for i, t := range tokens {
			if i != 0 {
				if rest, ok := strings.CutPrefix(t, prefix); ok {
					t = rest
				} else {
					t = " " + t
				}
			}
			if clean {
				t = cleanup(t)
			}
			out[i] = t
		}
		return out
	}
}

// charByte is byteChar's inverse.
var charByte = func() map[rune]byte {
	m := make(map[rune]byte, 256)
	for b, c := range byteChar {
		m[c] = byte(b)
	}
	return m
}()

func byteLevelDecoder(tokens []string) []string {
	var buf []byte
	for _, t := range tokens {
		for _, c := range t {
			if b, ok := charByte[c]; ok {
				buf = append(buf, b)
			} else {
				buf = utf8.AppendRune(buf, c)
			}
		}
	}
	return []string{strings.ToValidUTF8(string(buf), "\uFFFD")}
}

func metaspaceDecoder(rep string, prepend bool) decoder {
	return func(tokens []string) []string {
		out := make([]string, len(tokens))
		for i, t := range tokens {
			t = strings.ReplaceAll(t, rep, " ")
			if i == 0 && prepend {
				t = strings.TrimPrefix(t, " ")
			}
			out[i] = t
		}
		return out
	}
}

func replaceDecoder(pattern map[string]string, content json.RawMessage, path string) (decoder, error) {
	var with string
	_ = json.Unmarshal(content, &with)
	if s, ok := pattern["String"]; ok {
		return func(tokens []string) []string {
			out := make([]string, len(tokens))
			for i, t := range tokens {
				out[i] = strings.ReplaceAll(t, s, with)
			}
			return out
		}, nil
	}
	if r, ok := pattern["Regex"]; ok {
		re, err := regexp.Compile(r)
		if err != nil {
			return nil, fmt.Errorf("%s.pattern.Regex %q: %w", path, r, err)
		}
		return func(tokens []string) []string {
			out := make([]string, len(tokens))
			for i, t := range tokens {
				out[i] = re.ReplaceAllLiteralString(t, with)
			}
			return out
		}, nil
	}
	return func(tokens []string) []string { return tokens }, nil
}

// byteFallbackDecoder turns runs of <0xNN> tokens into the text their
// bytes are (U+FFFD for each byte of an invalid run).
func byteFallbackDecoder(tokens []string) []string {
	var out []string
	var pending []byte
	flush := func() {
		if len(pending) == 0 {
			return
		}
		if utf8.Valid(pending) {
			out = append(out, string(pending))
		} else {
			for range pending {
				out = append(out, "\uFFFD")
			}
		}
		pending = pending[:0]
	}
	for _, t := range tokens {
		if len(t) == 6 && strings.HasPrefix(t, "<0x") && t[5] == '>' {
			if b, err := strconv.ParseUint(t[3:5], 16, 8); err == nil {
				pending = append(pending, byte(b))
				continue
			}
		}
		flush()
		out = append(out, t)
	}
	flush()
	return out
}

func stripDecoder(content string, start, stop int) decoder {
	c, _ := utf8.DecodeRuneInString(content)
	return func(tokens []string) []string {
		out := make([]string, len(tokens))
		for i, t := range tokens {
			rs := []rune(t)
			s, e := 0, len(rs)
			for k := 0; k < start && s < e && rs[s] == c; k++ {
				s++
			}
			for k := 0; k < stop && e > s && rs[e-1] == c; k++ {
				e--
			}
			out[i] = string(rs[s:e])
		}
		return out
	}
}

func ctcDecoder(pad, delim string, clean bool) decoder {
	return func(tokens []string) []string {
		var out []string
		for i, t := range tokens {
			if i > 0 && t == tokens[i-1] || t == pad {
				continue
			}
			t = strings.ReplaceAll(t, delim, " ")
			if clean {
				t = strings.TrimSpace(cleanup(t))
			}
			if t != "" {
				out = append(out, t)
			}
		}
		return out
	}
}

// IDToken is the token of id: an added token's content, or the model's
// vocabulary's; ok is false for an id neither has.
func (t *Tokenizer) IDToken(id int64) (tok string, special, ok bool) {
	if a, found := t.added.byID[int(id)]; found {
		return a.Content, a.Special, true
	}
	r := t.rev
	r.once.Do(func() { r.byID, r.hasID = reverseVocab(t.model) })
	if id < 0 || id >= int64(len(r.byID)) || !r.hasID[id] {
		return "", false, false
	}
	return r.byID[id], false, true
}

// reverseVocab lists the model's tokens by id.
func reverseVocab(m model) (byID []string, hasID []bool) {
	var vocab map[string]int
	switch m := m.(type) {
	case *wordPiece:
		vocab = m.vocab
	case *bpe:
		vocab = m.vocab
	case *unigram:
		hasID = make([]bool, len(m.tokens))
		for i := range hasID {
			hasID[i] = true
		}
		return m.tokens, hasID
	}
	n := 0
	for _, id := range vocab {
		n = max(n, id+1)
	}
	byID, hasID = make([]string, n), make([]bool, n)
	for s, id := range vocab {
		if id >= 0 {
			byID[id], hasID[id] = s, true
		}
	}
	return byID, hasID
}

// Decode turns ids back into text as the Hugging Face library's decode
// does: each id's token (special tokens left out when skipSpecial), then
// the tokenizer.json's decoder, or, without one, the tokens joined by
// spaces. An id the tokenizer does not have is an error naming it.
func (t *Tokenizer) Decode(ids []int64, skipSpecial bool) (string, error) {
	tokens := make([]string, 0, len(ids))
	for i, id := range ids {
		tok, special, ok := t.IDToken(id)
		if !ok {
			return "", fmt.Errorf("id %d (at %d) is not one of the tokenizer's: it has ids 0 to %d", id, i, t.VocabSize()-1)
		}
		if skipSpecial && special {
			continue
		}
		tokens = append(tokens, tok)
	}
	if t.decoder == nil {
		return strings.Join(tokens, " "), nil
	}
	return strings.Join(t.decoder(tokens), ""), nil
}
