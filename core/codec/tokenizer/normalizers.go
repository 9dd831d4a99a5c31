package tokenizer

import (
	"encoding/json"
	"fmt"
	"regexp"
)

// normalizer rewrites a piece in place, keeping its alignments.
type normalizer func(p *piece)

// config is the part of a component's JSON that names it.
type config struct {
	Type string `json:"type"`
}

func unsupported(path, what string) error {
	return fmt.Errorf("%s %q is not supported", path, what)
}

func decode(raw json.RawMessage, path string, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// parseNormalizer builds the normalizer of raw; path names it in errors
// ("normalizer", "normalizer.normalizers[1]").
func parseNormalizer(raw json.RawMessage, path string) (normalizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c config
	if err := decode(raw, path, &c); err != nil {
		return nil, err
	}
	switch c.Type {
	case "BertNormalizer":
		var b struct {
			CleanText          *bool `json:"clean_text"`
			HandleChineseChars *bool `json:"handle_chinese_chars"`
			StripAccents       *bool `json:"strip_accents"`
			Lowercase          *bool `json:"lowercase"`
		}
		if err := decode(raw, path, &b); err != nil {
			return nil, err
		}
		lower := orTrue(b.Lowercase)
		strip := lower
		if b.StripAccents != nil {
			strip = *b.StripAccents
		}
		return bertNormalizer(orTrue(b.CleanText), orTrue(b.HandleChineseChars), strip, lower), nil
	case "Lowercase":
		return lowercase, nil
	case "NFD":
		return formNFD.apply, nil
	case "NFKD":
		return formNFKD.apply, nil
	case "NFC":
		return formNFC.apply, nil
	case "NFKC":
		return formNFKC.apply, nil
	case "StripAccents":
		return func(p *piece) { p.filter(func(r rune) bool { return !isMark(r) }) }, nil
	case "Strip":
		var s struct {
			Left  bool `json:"strip_left"`
			Right bool `json:"strip_right"`
		}
		if err := decode(raw, path, &s); err != nil {
			return nil, err
		}
		return func(p *piece) { p.strip(s.Left, s.Right) }, nil
	case "Replace":
		return parseReplace(raw, path)
	case "Prepend":
		var s struct {
			Prepend string `json:"prepend"`
		}
		if err := decode(raw, path, &s); err != nil {
			return nil, err
		}
		return func(p *piece) { p.prepend(s.Prepend) }, nil
	case "Nmt":
		return nmt, nil
	case "Precompiled":
		return parsePrecompiled(raw, path)
	case "Sequence":
		return parseNormalizerSequence(raw, path)
	}
	return nil, unknownType(path, c.Type, knownNormalizers)
}

func parseNormalizerSequence(raw json.RawMessage, path string) (normalizer, error) {
	var s struct {
		Normalizers []json.RawMessage `json:"normalizers"`
	}
	if err := decode(raw, path, &s); err != nil {
		return nil, err
	}
	var list []normalizer
	for i, n := range s.Normalizers {
		f, err := parseNormalizer(n, fmt.Sprintf("%s.normalizers[%d]", path, i))
		if err != nil {
			return nil, err
		}
		if f != nil {
			list = append(list, f)
		}
	}
	return func(p *piece) {
		for _, f := range list {
			f(p)
		}
	}, nil
}

// pattern is the JSON of a Replace or Split pattern: {"String": s} or
// {"Regex": r}.
type pattern struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

func parseReplace(raw json.RawMessage, path string) (normalizer, error) {
	var s struct {
		Pattern pattern `json:"pattern"`
		Content string  `json:"content"`
	}
	if err := decode(raw, path, &s); err != nil {
		return nil, err
	}
	find, err := compilePattern(s.Pattern, path+".pattern")
	if err != nil {
		return nil, err
	}
	return func(p *piece) {
		if p.norm == "" {
			return
		}
		p.replace(find(p.norm), s.Content)
	}, nil
}

// compilePattern returns the function that cuts a string into the parts
// that match the pattern and those that do not.
func compilePattern(pt pattern, path string) (func(string) []match, error) {
	switch {
	case pt.String != nil:
		lit := *pt.String
		if lit == "" {
			return func(s string) []match { return []match{{0, len([]rune(s)), false}} }, nil
		}
		re := regexp.MustCompile(regexp.QuoteMeta(lit))
		return func(s string) []match { return matchSpans(s, asPairs(re.FindAllStringIndex(s, -1))) }, nil
	case pt.Regex != nil:
		find, err := compileRegex(*pt.Regex, path+".Regex")
		if err != nil {
			return nil, err
		}
		return func(s string) []match { return matchSpans(s, find(s)) }, nil
	}
	return nil, fmt.Errorf("%s: neither String nor Regex", path)
}

func asPairs(found [][]int) [][2]int {
	out := make([][2]int, len(found))
	for i, f := range found {
		out[i] = [2]int{f[0], f[1]}
	}
	return out
}

func bertNormalizer(clean, chinese, strip, lower bool) normalizer {
	return func(p *piece) {
		if clean {
			p.filter(func(r rune) bool { return !(r == 0 || r == 0xfffd || isBertControl(r)) })
			p.mapRunes(func(r rune) rune {
				if r == '\t' || r == '\n' || r == '\r' || isWhitespace(r) {
					return ' '
				}
				return r
			})
		}
		if chinese {
			handleChinese(p)
		}
		if strip {
			formNFD.apply(p)
			p.filter(func(r rune) bool { return !isNonspacingMark(r) })
		}
		if lower {
			lowercase(p)
		}
	}
}

func isBertControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return isOther(r)
}

func handleChinese(p *piece) {
	var dest []change
	for i, r := range p.norm {
		if isChineseChar(r) {
			if dest == nil {
				dest = make([]change, 0, len(p.norm)+8)
				for _, q := range p.norm[:i] {
					dest = append(dest, change{q, 0})
				}
			}
			dest = append(dest, change{' ', 0}, change{r, 1}, change{' ', 1})
		} else if dest != nil {
			dest = append(dest, change{r, 0})
		}
	}
	if dest != nil {
		p.transform(dest, 0)
	}
}

func lowercase(p *piece) {
	if dest, same := lowercaseChanges(p.norm); !same {
		p.transform(dest, 0)
	}
}

func nmt(p *piece) {
	p.filter(func(r rune) bool {
		return !(r >= 1 && r <= 8 || r == 0xB || r >= 0xE && r <= 0x1F || r == 0x7F || r == 0x8F || r == 0x9F)
	})
	p.mapRunes(func(r rune) rune {
		switch {
		case r == 9 || r == 0xA || r == 0xC || r == 0xD || r == 0x1680 || r >= 0x200B && r <= 0x200F ||
			r == 0x2028 || r == 0x2029 || r == 0x2581 || r == 0xFEFF || r == 0xFFFD:
			return ' '
		}
		return r
	})
}

func orTrue(b *bool) bool { return b == nil || *b }

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}
