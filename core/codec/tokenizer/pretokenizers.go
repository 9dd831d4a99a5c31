package tokenizer

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// preTokenizer cuts the pieces not yet tokenised into smaller ones.
type preTokenizer func(ps []*piece) []*piece

type splitBehavior int

const (
	splitRemoved splitBehavior = iota
	splitIsolated
	splitMergedWithPrevious
	splitMergedWithNext
	splitContiguous
)

func parseBehavior(s, path string) (splitBehavior, error) {
	switch s {
	case "Removed", "removed":
		return splitRemoved, nil
	case "Isolated", "isolated":
		return splitIsolated, nil
	case "MergedWithPrevious", "merged_with_previous":
		return splitMergedWithPrevious, nil
	case "MergedWithNext", "merged_with_next":
		return splitMergedWithNext, nil
	case "Contiguous", "contiguous":
		return splitContiguous, nil
	}
	return 0, unsupported(path, s)
}

// splitEach applies f to every piece not yet tokenised, keeping the
// others, and drops the empty pieces f returns.
func splitEach(ps []*piece, f func(p *piece) []*piece) []*piece {
	out := make([]*piece, 0, len(ps)*2)
	for _, p := range ps {
		if p.done {
			out = append(out, p)
			continue
		}
		for _, q := range f(p) {
			if q.norm != "" {
				out = append(out, q)
			}
		}
	}
	return out
}

func splitRunes(is func(rune) bool, b splitBehavior) preTokenizer {
	return func(ps []*piece) []*piece {
		return splitEach(ps, func(p *piece) []*piece { return p.split(matchRunes(p.norm, is), b) })
	}
}

func parsePreTokenizer(raw json.RawMessage, path string) (preTokenizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c config
	if err := decode(raw, path, &c); err != nil {
		return nil, err
	}
	switch c.Type {
	case "BertPreTokenizer":
		ws, punct := splitRunes(isWhitespace, splitRemoved), splitRunes(isPunct, splitIsolated)
		return func(ps []*piece) []*piece { return punct(ws(ps)) }, nil
	case "WhitespaceSplit":
		return splitRunes(isWhitespace, splitRemoved), nil
	case "Whitespace":
		return func(ps []*piece) []*piece {
			return splitEach(ps, func(p *piece) []*piece {
				return p.split(invert(matchSpans(p.norm, whitespaceWords(p.norm))), splitRemoved)
			})
		}, nil
	case "ByteLevel":
		var b byteLevelConfig
		if err := decode(raw, path, &b); err != nil {
			return nil, err
		}
		return b.preTokenize, nil
	case "Metaspace":
		return parseMetaspace(raw, path)
	case "Split":
		return parseSplit(raw, path)
	case "Punctuation":
		var s struct {
			Behavior *string `json:"behavior"`
		}
		if err := decode(raw, path, &s); err != nil {
			return nil, err
		}
		b := splitIsolated
		if s.Behavior != nil {
			var err error
			if b, err = parseBehavior(*s.Behavior, path+".behavior"); err != nil {
				return nil, err
			}
		}
		return splitRunes(isPunct, b), nil
	case "Digits":
		var s struct {
			Individual bool `json:"individual_digits"`
		}
		if err := decode(raw, path, &s); err != nil {
			return nil, err
		}
		if s.Individual {
			return splitRunes(isNumeric, splitIsolated), nil
		}
		return splitRunes(isNumeric, splitContiguous), nil
	case "CharDelimiterSplit":
		var s struct {
			Delimiter string `json:"delimiter"`
		}
		if err := decode(raw, path, &s); err != nil {
			return nil, err
		}
		d, n := utf8.DecodeRuneInString(s.Delimiter)
		if n == 0 || n != len(s.Delimiter) {
			return nil, fmt.Errorf("%s.delimiter %q is not one character", path, s.Delimiter)
		}
		return splitRunes(func(r rune) bool { return r == d }, splitRemoved), nil
	case "Sequence":
		return parsePreTokenizerSequence(raw, path)
	}
	return nil, unknownType(path, c.Type, knownPreTokenizers)
}

func parsePreTokenizerSequence(raw json.RawMessage, path string) (preTokenizer, error) {
	var s struct {
		PreTokenizers []json.RawMessage `json:"pretokenizers"`
	}
	if err := decode(raw, path, &s); err != nil {
		return nil, err
	}
	var list []preTokenizer
	for i, n := range s.PreTokenizers {
		f, err := parsePreTokenizer(n, fmt.Sprintf("%s.pretokenizers[%d]", path, i))
		if err != nil {
			return nil, err
		}
		if f != nil {
			list = append(list, f)
		}
	}
	return func(ps []*piece) []*piece {
		for _, f := range list {
			ps = f(ps)
		}
		return ps
	}, nil
}

// whitespaceWords returns the matches of \w+|[^\w\s]+ in s.
func whitespaceWords(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case isWord(r):
			e := runOf(s, i, isWord)
			out = append(out, [2]int{i, e})
			i = e
		case !isWhitespace(r):
			e := runOf(s, i, func(r rune) bool { return !isWord(r) && !isWhitespace(r) })
			out = append(out, [2]int{i, e})
			i = e
		default:
			i += n
		}
	}
	return out
}

type byteLevelConfig struct {
	AddPrefixSpace bool  `json:"add_prefix_space"`
	TrimOffsets    bool  `json:"trim_offsets"`
	UseRegex       *bool `json:"use_regex"`
}

func (b byteLevelConfig) preTokenize(ps []*piece) []*piece {
	ps = splitEach(ps, func(p *piece) []*piece {
		if b.AddPrefixSpace && (p.norm == "" || p.norm[0] != ' ') {
			p.prepend(" ")
		}
		if b.UseRegex == nil || *b.UseRegex {
			return p.split(matchSpans(p.norm, splitGPT2(p.norm)), splitIsolated)
		}
		return []*piece{p}
	})
	for _, p := range ps {
		if !p.done {
			byteLevelMap(p)
		}
	}
	return ps
}

// byteChar is GPT-2's map of bytes to printable characters.
var byteChar = func() [256]rune {
	var m [256]rune
	n := rune(0)
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE {
			m[b] = rune(b)
		} else {
			m[b] = 256 + n
			n++
		}
	}
	return m
}()

// byteLevelMap replaces every byte of the piece by its character, the
// bytes after a character's first inserted after it.
func byteLevelMap(p *piece) {
	var buf []byte
	al := make([]span, 0, len(p.norm)*2)
	for i := 0; i < len(p.norm); i++ {
		c := byteChar[p.norm[i]]
		buf = utf8.AppendRune(buf, c)
		// Each output byte aligns with its character's first byte, as all
		// bytes of a character share one alignment.
		a := p.al[i]
		for k := utf8.RuneLen(c); k > 0; k-- {
			al = append(al, a)
		}
	}
	p.norm, p.al = string(buf), al
}

func parseMetaspace(raw json.RawMessage, path string) (preTokenizer, error) {
	var m struct {
		Replacement    string  `json:"replacement"`
		AddPrefixSpace *bool   `json:"add_prefix_space"`
		PrependScheme  *string `json:"prepend_scheme"`
		Split          *bool   `json:"split"`
	}
	if err := decode(raw, path, &m); err != nil {
		return nil, err
	}
	rep, n := utf8.DecodeRuneInString(m.Replacement)
	if n == 0 || n != len(m.Replacement) {
		return nil, fmt.Errorf("%s.replacement %q is not one character", path, m.Replacement)
	}
	scheme := "always"
	if m.PrependScheme != nil {
		scheme = *m.PrependScheme
	}
	if m.AddPrefixSpace != nil && !*m.AddPrefixSpace {
		if scheme != "never" && m.PrependScheme != nil {
			return nil, fmt.Errorf("%s: add_prefix_space does not match declared prepend_scheme", path)
		}
		scheme = "never"
	}
	if scheme != "always" && scheme != "first" && scheme != "never" {
		return nil, unsupported(path+".prepend_scheme", scheme)
	}
	split := orTrue(m.Split)
	return func(ps []*piece) []*piece {
		return splitEach(ps, func(p *piece) []*piece {
			p.replace(matchRunes(p.norm, func(r rune) bool { return r == ' ' }), m.Replacement)
			first, _ := utf8.DecodeRuneInString(p.norm)
			starts := p.norm != "" && first == rep
			if !starts && (scheme == "always" || scheme == "first" && p.shift == 0) {
				p.prepend(m.Replacement)
			}
			if split {
				return p.split(matchRunes(p.norm, func(r rune) bool { return r == rep }), splitMergedWithNext)
			}
			return []*piece{p}
		})
	}, nil
}

func parseSplit(raw json.RawMessage, path string) (preTokenizer, error) {
	var s struct {
		Pattern  pattern `json:"pattern"`
		Behavior string  `json:"behavior"`
		Invert   bool    `json:"invert"`
	}
	if err := decode(raw, path, &s); err != nil {
		return nil, err
	}
	b, err := parseBehavior(s.Behavior, path+".behavior")
	if err != nil {
		return nil, err
	}
	find, err := compilePattern(s.Pattern, path+".pattern")
	if err != nil {
		return nil, err
	}
	return func(ps []*piece) []*piece {
		return splitEach(ps, func(p *piece) []*piece {
			ms := find(p.norm)
			if s.Invert {
				ms = invert(ms)
			}
			return p.split(ms, b)
		})
	}, nil
}
