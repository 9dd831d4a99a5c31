package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// span is a range of bytes [s, e) of the original text.
type span struct{ s, e int }

// change is one character of a transformation's output: ch is 0 when r
// replaces one character of the input, n > 0 when r is inserted after the
// previous one, and -n when r replaces one character and removes the n
// that follow it. This is the alignment bookkeeping of the reference's
// NormalizedString, which the offsets depend on.
type change struct {
	r  rune
	ch int
}

// piece is a part of the text being tokenised: its normalised form and,
// for every byte of it, the bytes of the original text it comes from.
// Offsets into the original are absolute (from the start of the input),
// and shift is where the piece began in the original when it was cut.
type piece struct {
	norm  string
	al    []span
	shift int
	// ids is set once the piece has been tokenised (an added token, or the
	// model's output).
	toks []token
	done bool
}

// token is one token of a piece: [s, e) are bytes of the piece's norm.
type token struct {
	id    int
	value string
	s, e  int
}

func newPiece(text string) *piece {
	p := &piece{norm: text, al: make([]span, len(text))}
	for i, r := range text {
		n := utf8.RuneLen(r)
		if r == utf8.RuneError {
			_, n = utf8.DecodeRuneInString(text[i:])
		}
		for k := 0; k < n; k++ {
			p.al[i+k] = span{i, i + n}
		}
	}
	return p
}

// transform replaces the whole normalised string by dest, skipping the
// first initial characters of it (removed), as the reference does.
func (p *piece) transform(dest []change, initial int) {
	old, oldAl := p.norm, p.al
	off := 0
	for i := 0; i < initial && off < len(old); i++ {
		_, n := utf8.DecodeRuneInString(old[off:])
		off += n
	}
	var b strings.Builder
	b.Grow(len(old))
	al := make([]span, 0, len(old))
	for _, d := range dest {
		var a span
		switch {
		case d.ch > 0 && off < 1:
			a = span{p.shift, p.shift}
		case d.ch > 0:
			a = oldAl[min(off, len(oldAl))-1]
		case off < len(oldAl):
			a = oldAl[off]
		case len(oldAl) > 0:
			a = oldAl[len(oldAl)-1]
		default:
			a = span{p.shift, p.shift}
		}
		if d.ch <= 0 && off < len(old) {
			_, n := utf8.DecodeRuneInString(old[off:])
			off += n
		}
		for k := 0; k < -d.ch && off < len(old); k++ {
			_, n := utf8.DecodeRuneInString(old[off:])
			off += n
		}
		b.WriteRune(d.r)
		for k := utf8.RuneLen(d.r); k > 0; k-- {
			al = append(al, a)
		}
	}
	p.norm, p.al = b.String(), al
}

// mapRunes replaces every character by f's (one for one).
func (p *piece) mapRunes(f func(rune) rune) {
	// Most text maps to itself: nothing is built until a character
	// changes.
	var dest []change
	for i, r := range p.norm {
		m := f(r)
		if dest == nil && m != r {
			dest = make([]change, 0, len(p.norm))
			for _, q := range p.norm[:i] {
				dest = append(dest, change{q, 0})
			}
		}
		if dest != nil {
			dest = append(dest, change{m, 0})
		}
	}
	if dest != nil {
		p.transform(dest, 0)
	}
}

// filter keeps the characters for which keep is true.
func (p *piece) filter(keep func(rune) bool) {
	// Most text keeps every character: nothing is built unless one goes.
	all := true
	for _, r := range p.norm {
		if !keep(r) {
			all = false
			break
		}
	}
	if all {
		return
	}
	removed, removedStart := 0, 0
	dest := make([]change, 0, len(p.norm))
	var last rune
	have, any := false, false
	for _, r := range p.norm {
		if keep(r) {
			if have {
				dest = append(dest, change{last, -removed})
			} else {
				removedStart = removed
			}
			last, have = r, true
			removed = 0
		} else {
			removed++
			any = true
		}
	}
	if !any {
		return
	}
	if have {
		dest = append(dest, change{last, -removed})
	}
	p.transform(dest, removedStart)
}

// prepend puts s before the first character, aligned with it.
func (p *piece) prepend(s string) {
	if p.norm == "" {
		return
	}
	first, n := utf8.DecodeRuneInString(p.norm)
	a := p.al[0]
	var b strings.Builder
	b.WriteString(s)
	b.WriteRune(first)
	al := make([]span, 0, len(p.al)+len(s))
	for k := b.Len(); k > 0; k-- {
		al = append(al, a)
	}
	b.WriteString(p.norm[n:])
	p.norm = b.String()
	p.al = append(al, p.al[n:]...)
}

// strip removes the leading and trailing whitespace (as Rust's
// char::is_whitespace) that left and right ask for.
func (p *piece) strip(left, right bool) {
	runes := []rune(p.norm)
	lead, trail := 0, 0
	if left {
		for lead < len(runes) && isWhitespace(runes[lead]) {
			lead++
		}
	}
	if right {
		for trail < len(runes) && isWhitespace(runes[len(runes)-1-trail]) {
			trail++
		}
	}
	if lead == 0 && trail == 0 {
		return
	}
	dest := make([]change, 0, len(runes))
	for i, r := range runes {
		switch {
		case i < lead || i >= len(runes)-trail:
		case i == len(runes)-trail-1:
			dest = append(dest, change{r, -trail})
		default:
			dest = append(dest, change{r, 0})
		}
	}
	p.transform(dest, lead)
}

// match is one part of a string cut by a pattern: [s, e) in bytes, and
// whether it is a match of the pattern.
type match struct {
	s, e int
	m    bool
}

// replace replaces every match of the pattern by content.
func (p *piece) replace(matches []match, content string) {
	var b strings.Builder
	al := make([]span, 0, len(p.al))
	for _, m := range matches {
		if !m.m {
			b.WriteString(p.norm[m.s:m.e])
			al = append(al, p.al[m.s:m.e]...)
			continue
		}
		// Every character of content is inserted after the removed match:
		// it takes the alignment of the match's last byte.
		var a span
		if m.e < 1 {
			a = span{p.shift, p.shift}
		} else {
			a = p.al[m.e-1]
		}
		b.WriteString(content)
		for k := len(content); k > 0; k-- {
			al = append(al, a)
		}
	}
	p.norm, p.al = b.String(), al
}

// slice cuts the bytes [s, e) of the normalised string out as a new piece.
func (p *piece) slice(s, e int) *piece {
	q := &piece{norm: p.norm[s:e], al: p.al[s:e:e], shift: p.shift}
	if s < e {
		q.shift = p.al[s].s
	}
	return q
}

// split cuts the piece by matches with the reference's
// SplitDelimiterBehavior.
func (p *piece) split(matches []match, behavior splitBehavior) []*piece {
	var parts []match
	switch behavior {
	case splitIsolated:
		parts = make([]match, len(matches))
		for i, m := range matches {
			parts[i] = match{m.s, m.e, false}
		}
	case splitRemoved:
		parts = matches
	case splitContiguous:
		prev := false
		for _, m := range matches {
			if m.m == prev && len(parts) > 0 {
				parts[len(parts)-1].e = m.e
			} else {
				parts = append(parts, match{m.s, m.e, false})
			}
			prev = m.m
		}
	case splitMergedWithPrevious:
		prev := false
		for _, m := range matches {
			if m.m && !prev && len(parts) > 0 {
				parts[len(parts)-1].e = m.e
			} else {
				parts = append(parts, match{m.s, m.e, false})
			}
			prev = m.m
		}
	case splitMergedWithNext:
		prev := false
		for i := len(matches) - 1; i >= 0; i-- {
			m := matches[i]
			if m.m && !prev && len(parts) > 0 {
				parts[len(parts)-1].s = m.s
			} else {
				parts = append(parts, match{m.s, m.e, false})
			}
			prev = m.m
		}
		for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
			parts[i], parts[j] = parts[j], parts[i]
		}
	}
	out := make([]*piece, 0, len(parts))
	for _, m := range parts {
		if !m.m && m.s < m.e {
			out = append(out, p.slice(m.s, m.e))
		}
	}
	return out
}

// matchRunes returns the parts of s cut at every character for which is
// is true, each such character a match of its own.
func matchRunes(s string, is func(rune) bool) []match {
	if s == "" {
		return []match{{0, 0, false}}
	}
	var out []match
	last := 0
	for i, r := range s {
		if is(r) {
			n := utf8.RuneLen(r)
			if r == utf8.RuneError {
				_, n = utf8.DecodeRuneInString(s[i:])
			}
			if last < i {
				out = append(out, match{last, i, false})
			}
			out = append(out, match{i, i + n, true})
			last = i + n
		}
	}
	if last < len(s) {
		out = append(out, match{last, len(s), false})
	}
	return out
}

// matchSpans turns the [start, end) byte ranges of a pattern's matches in
// s into the parts of s.
func matchSpans(s string, found [][2]int) []match {
	if s == "" {
		return []match{{0, 0, false}}
	}
	out := make([]match, 0, 2*len(found)+1)
	prev := 0
	for _, f := range found {
		if prev != f[0] {
			out = append(out, match{prev, f[0], false})
		}
		out = append(out, match{f[0], f[1], true})
		prev = f[1]
	}
	if prev != len(s) {
		out = append(out, match{prev, len(s), false})
	}
	return out
}

func invert(ms []match) []match {
	for i := range ms {
		ms[i].m = !ms[i].m
	}
	return ms
}
