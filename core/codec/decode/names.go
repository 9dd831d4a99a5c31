package decode

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// parseNames reads a Python literal of class names: a dict from index to
// name, {0: 'person', 1: "it's"}, as Ultralytics writes its "names"
// metadata (str of a dict), or a list of names, ['person', "it's"]. It
// accepts what Python's repr writes and a little more (string keys of
// digits, a trailing comma, any whitespace between tokens); anything else
// is not ok.
func parseNames(s string) ([]string, bool) {
	p := &pyParser{s: s}
	p.space()
	var labels []string
	var ok bool
	switch p.peek() {
	case '{':
		labels, ok = p.dict()
	case '[':
		labels, ok = p.list()
	}
	p.space()
	if !ok || p.i != len(p.s) {
		return nil, false
	}
	return labels, true
}

// pyParser reads a Python literal from s, at i.
type pyParser struct {
	s string
	i int
}

// peek is the next byte, 0 at the end.
func (p *pyParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// space skips whitespace.
func (p *pyParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\n\r\f\v", p.s[p.i]) >= 0 {
		p.i++
	}
}

// sequence reads the items of a bracketed, comma-separated sequence whose
// opening bracket is next, calling item for each, up to close.
func (p *pyParser) sequence(close byte, item func() bool) bool {
	p.i++ // the opening bracket
	for {
		p.space()
		if p.peek() == close {
			p.i++
			return true
		}
		if !item() {
			return false
		}
		p.space()
		switch p.peek() {
		case ',':
			p.i++
		case close:
			p.i++
			return true
		default:
			return false
		}
	}
}

// list reads ['a', 'b'].
func (p *pyParser) list() ([]string, bool) {
	var labels []string
	ok := p.sequence(']', func() bool {
		s, ok := p.str()
		labels = append(labels, s)
		return ok && len(labels) <= maxLabels
	})
	return labels, ok
}

// dict reads {0: 'a', 1: 'b'}: the labels by index, a missing index
// labelled with its decimal form, a repeated key's last value kept.
func (p *pyParser) dict() ([]string, bool) {
	names := map[int]string{}
	top := -1
	ok := p.sequence('}', func() bool {
		k, ok := p.key()
		if !ok {
			return false
		}
		p.space()
		if p.peek() != ':' {
			return false
		}
		p.i++
		p.space()
		v, ok := p.str()
		names[k] = v
		top = max(top, k)
		return ok
	})
	if !ok {
		return nil, false
	}
	labels := make([]string, top+1)
	for i := range labels {
		if v, found := names[i]; found {
			labels[i] = v
		} else {
			labels[i] = strconv.Itoa(i)
		}
	}
	return labels, true
}

// key reads a dict key: a non-negative decimal integer below maxLabels,
// bare or as a string.
func (p *pyParser) key() (int, bool) {
	var digits string
	if c := p.peek(); c == '\'' || c == '"' {
		s, ok := p.str()
		if !ok {
			return 0, false
		}
		digits = s
	} else {
		start := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		digits = p.s[start:p.i]
	}
	if digits == "" || len(digits) > 7 || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	k, err := strconv.Atoi(digits)
	return k, err == nil && k < maxLabels
}

// str reads a Python string literal in single or double quotes, with
// Python's escapes. A raw newline, an unknown \N{...} name or the end of
// the input inside it is not ok; an unrecognised escape keeps its
// backslash, as Python does.
func (p *pyParser) str() (string, bool) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", false
	}
	p.i++
	var b []byte
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return string(b), true
		case c == '\n' || c == '\r':
			return "", false
		case c == '\\':
			var ok bool
			if b, ok = p.escape(b); !ok {
				return "", false
			}
		default:
			b = append(b, c)
			p.i++
		}
	}
	return "", false
}

// simpleEscapes maps the byte after a backslash to what it stands for.
var simpleEscapes = map[byte]string{
	'\\': "\\", '\'': "'", '"': "\"", '\n': "",
	'a': "\a", 'b': "\b", 'f': "\f", 'n': "\n", 'r': "\r", 't': "\t", 'v': "\v",
}

// escape appends what the escape sequence at i (a backslash) stands for.
func (p *pyParser) escape(b []byte) ([]byte, bool) {
	if p.i+1 >= len(p.s) {
		return b, false
	}
	c := p.s[p.i+1]
	p.i += 2
	if s, ok := simpleEscapes[c]; ok {
		return append(b, s...), true
	}
	switch c {
	case 'x':
		return p.hexRune(b, 2)
	case 'u':
		return p.hexRune(b, 4)
	case 'U':
		return p.hexRune(b, 8)
	case 'N':
		return b, false
	}
	if c >= '0' && c <= '7' {
		r := rune(c - '0')
		for n := 1; n < 3 && p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '7'; n++ {
			r = r*8 + rune(p.s[p.i]-'0')
			p.i++
		}
		return utf8.AppendRune(b, r), true
	}
	return append(b, '\\', c), true
}

// hexRune appends the rune written as n hex digits at i.
func (p *pyParser) hexRune(b []byte, n int) ([]byte, bool) {
	if p.i+n > len(p.s) {
		return b, false
	}
	v, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
	if err != nil || v > utf8.MaxRune {
		return b, false
	}
	p.i += n
	return utf8.AppendRune(b, rune(v)), true
}
