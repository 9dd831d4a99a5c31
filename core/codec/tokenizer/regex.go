package tokenizer

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// gpt2Pattern is GPT-2's pre-tokenisation regex, which the ByteLevel
// pre-tokenizer uses and many Split pre-tokenizers repeat. Its \s+(?!\S)
// is a look-ahead, which Go's regexp (RE2) does not have: splitGPT2 is
// that regex written out by hand.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// splitGPT2 returns the matches of gpt2Pattern in s, as the reference's
// Oniguruma finds them: at every position the first alternative that
// matches, the leftmost match first.
func splitGPT2(s string) [][2]int {
	out := make([][2]int, 0, len(s)/4+1)
	for i := 0; i < len(s); {
		e := gpt2At(s, i)
		out = append(out, [2]int{i, e})
		i = e
	}
	return out
}

// gpt2At returns the end of the match of gpt2Pattern that starts at i.
// Every character is a letter, a number, a space or none of those, so one
// alternative always matches.
func gpt2At(s string, i int) int {
	if s[i] == '\'' && i+1 < len(s) {
		switch s[i+1] {
		case 's', 't', 'm', 'd':
			return i + 2
		case 'r', 'v':
			if i+2 < len(s) && s[i+2] == 'e' {
				return i + 3
			}
		case 'l':
			if i+2 < len(s) && s[i+2] == 'l' {
				return i + 3
			}
		}
	}
	j := i
	if s[i] == ' ' {
		j++
	}
	if j < len(s) {
		r, _ := utf8.DecodeRuneInString(s[j:])
		var class func(rune) bool
		switch {
		case isLetter(r):
			class = isLetter
		case isNumeric(r):
			class = isNumeric
		case !isWhitespace(r):
			class = isGPT2Other
		}
		if class != nil {
			return runOf(s, j, class)
		}
	}
	// A run of white space: all of it when it ends the text, else all but
	// its last character (which goes with what follows), unless that
	// leaves nothing.
	end := runOf(s, i, isWhitespace)
	if end == len(s) {
		return end
	}
	_, last := utf8.DecodeLastRuneInString(s[:end])
	if end-last > i {
		return end - last
	}
	return end
}

func isGPT2Other(r rune) bool { return !isWhitespace(r) && !isLetter(r) && !isNumeric(r) }

// runOf returns the end of the run of characters of class starting at i.
func runOf(s string, i int, class func(rune) bool) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !class(r) {
			break
		}
		i += n
	}
	return i
}

// compileRegex compiles a tokenizer.json regex (Oniguruma syntax in the
// reference) into a function returning its matches. GPT-2's pattern is
// written by hand; any other pattern must translate into Go's RE2 with
// the same meaning, else it is refused.
func compileRegex(pat, path string) (func(string) [][2]int, error) {
	if pat == gpt2Pattern {
		return splitGPT2, nil
	}
	expr, err := translateRegex(pat)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %v", path, pat, err)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%s %q: not supported by Go's regexp: %v", path, pat, err)
	}
	return func(s string) [][2]int {
		found := re.FindAllStringIndex(s, -1)
		out := make([][2]int, 0, len(found))
		for _, f := range found {
			if f[0] < f[1] {
				out = append(out, [2]int{f[0], f[1]})
			}
		}
		return out
	}, nil
}

// Oniguruma's Unicode classes, which RE2 spells otherwise (its \s, \d and
// \w are ASCII only).
const (
	classSpace = `\t-\r \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}`
	classDigit = `\p{Nd}`
	classWord  = `\p{L}\p{M}\p{Nd}\p{Pc}`
)

// translateRegex rewrites the Oniguruma escapes whose meaning differs in
// RE2 and refuses what RE2 lacks (look-around, back-references, atomic
// groups, possessive quantifiers).
func translateRegex(pat string) (string, error) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch {
		case c == '\\' && i+1 < len(pat):
			i++
			e := pat[i]
			cls := map[byte]string{'s': classSpace, 'd': classDigit, 'w': classWord}
			switch {
			case cls[e] != "" && inClass:
				b.WriteString(cls[e])
			case cls[e] != "":
				b.WriteString("[" + cls[e] + "]")
			case (e == 'S' || e == 'D' || e == 'W') && !inClass:
				b.WriteString("[^" + cls[e+'a'-'A'] + "]")
			case e == 'S' || e == 'D' || e == 'W':
				return "", fmt.Errorf("\\%c inside a class is not supported", e)
			case e >= '1' && e <= '9', e == 'k', e == 'G', e == 'h', e == 'H', e == 'R', e == 'X':
				return "", fmt.Errorf("\\%c is not supported", e)
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
			continue
		case c == '[' && !inClass:
			inClass = true
		case c == ']' && inClass:
			inClass = false
		case c == '(' && !inClass && strings.HasPrefix(pat[i:], "(?"):
			for _, p := range []string{"(?=", "(?!", "(?<=", "(?<!", "(?>"} {
				if strings.HasPrefix(pat[i:], p) {
					return "", fmt.Errorf("look-around and atomic groups (%s) are not supported", p)
				}
			}
		case c == '+' && !inClass && i > 1 && strings.ContainsRune("*+?}", rune(pat[i-1])) && pat[i-2] != '\\':
			return "", fmt.Errorf("possessive quantifiers are not supported")
		}
		b.WriteByte(c)
	}
	return b.String(), nil
}
