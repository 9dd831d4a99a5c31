package tokenizer

import (
	"sort"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The character classes below are the reference's (Rust's char methods and
// the regex crates' Unicode classes), written with Go's unicode tables.

// isWhitespace is Rust's char::is_whitespace: the White_Space property.
func isWhitespace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || r >= '\t' && r <= '\r'
	}
	return unicode.Is(unicode.White_Space, r)
}

// isOther is the general category C, unassigned code points included.
func isOther(r rune) bool {
	if r < utf8.RuneSelf {
		return r < 0x20 || r == 0x7f
	}
	return unicode.In(r, unicode.C) || !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// isPunct is BERT's punctuation: ASCII punctuation (symbols included) or
// the general category P.
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= '!' && r <= '/' || r >= ':' && r <= '@' || r >= '[' && r <= '`' || r >= '{' && r <= '~'
	}
	return unicode.In(r, unicode.P)
}

// isNumeric is Rust's char::is_numeric: the general category N.
func isNumeric(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= '0' && r <= '9'
	}
	return unicode.In(r, unicode.N)
}

// isWord is the regex class \w: Alphabetic, marks, decimal digits,
// connector punctuation and the joiners.
func isWord(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_'
	}
	return unicode.In(r, unicode.L, unicode.Nl, unicode.Other_Alphabetic, unicode.M, unicode.Nd, unicode.Pc, unicode.Join_Control)
}

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}
	return unicode.IsLetter(r)
}

func isChineseChar(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF ||
		r >= 0x20000 && r <= 0x2A6DF || r >= 0x2A700 && r <= 0x2B73F ||
		r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B920 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lowercase is Rust's char::to_lowercase over the string: U+0130 is the
// one character whose lower case is two.
func lowercaseChanges(s string) ([]change, bool) {
	dest := make([]change, 0, len(s))
	same := true
	for _, r := range s {
		if r == 0x130 {
			dest = append(dest, change{'i', 0}, change{0x307, 1})
			same = false
			continue
		}
		l := unicode.ToLower(r)
		same = same && l == r
		dest = append(dest, change{l, 0})
	}
	return dest, same
}

// normForm is one of the four Unicode normalisation forms.
type normForm struct {
	compat, compose bool
	form            norm.Form
}

var (
	formNFD  = normForm{false, false, norm.NFD}
	formNFKD = normForm{true, false, norm.NFKD}
	formNFC  = normForm{false, true, norm.NFC}
	formNFKC = normForm{true, true, norm.NFKC}
)

// apply normalises p, aligned as the reference's
// unicode-normalization-alignments does: the characters of a
// decomposition are inserted after the first, canonical reordering moves
// those marks, and a composition removes the characters it absorbs.
func (f normForm) apply(p *piece) {
	if isASCII(p.norm) || f.form.IsNormalString(p.norm) {
		return
	}
	dest := decompose(p.norm, f.compat)
	if f.compose {
		dest = recompose(dest)
	}
	p.transform(dest, 0)
}

type decomposed struct {
	c   change
	ccc uint8
}

func decompose(s string, compat bool) []change {
	form := norm.NFD
	if compat {
		form = norm.NFKD
	}
	buf := make([]decomposed, 0, len(s))
	var one [utf8.UTFMax]byte
	for _, r := range s {
		if r < utf8.RuneSelf {
			// ASCII is its own decomposition, a starter.
			buf = append(buf, decomposed{change{r, 0}, 0})
			continue
		}
		n := utf8.EncodeRune(one[:], r)
		d := one[:n]
		if !form.IsNormal(d) {
			d = form.Bytes(d)
		}
		first := true
		for len(d) > 0 {
			c, size := utf8.DecodeRune(d)
			d = d[size:]
			ch := 1
			if first {
				ch = 0
			}
			first = false
			buf = append(buf, decomposed{change{c, ch}, cccOf(c)})
		}
	}
	// Canonical ordering: every run of non-starters is sorted by combining
	// class, stably.
	for i := 0; i < len(buf); {
		if buf[i].ccc == 0 {
			i++
			continue
		}
		j := i
		for j < len(buf) && buf[j].ccc != 0 {
			j++
		}
		run := buf[i:j]
		sort.SliceStable(run, func(a, b int) bool { return run[a].ccc < run[b].ccc })
		i = j
	}
	out := make([]change, len(buf))
	for i, d := range buf {
		out[i] = d.c
	}
	return out
}

func cccOf(r rune) uint8 {
	if r < 0x300 {
		return 0
	}
	return norm.NFD.PropertiesString(string(r)).CCC()
}

// recompose is the canonical composition of the alignments crate, kept as
// it is written (a non-starter before the first starter is never composed).
func recompose(in []change) []change {
	out := make([]change, 0, len(in))
	var composee change
	hasComposee := false
	var buffer []change
	lastCCC := -1
	for _, c := range in {
		class := int(cccOf(c.r))
		if !hasComposee {
			if class != 0 {
				out = append(out, c)
				continue
			}
			composee, hasComposee = c, true
			continue
		}
		if lastCCC < 0 {
			if r, ok := compose(composee.r, c.r); ok {
				composee = change{r, composee.ch + c.ch - 1}
				continue
			}
			if class == 0 {
				out = append(out, composee)
				composee = c
				continue
			}
			buffer = append(buffer, c)
			lastCCC = class
			continue
		}
		if lastCCC >= class {
			if class == 0 {
				out = append(out, composee)
				out = append(out, buffer...)
				buffer = buffer[:0]
				composee = c
				lastCCC = -1
				continue
			}
			buffer = append(buffer, c)
			lastCCC = class
			continue
		}
		if r, ok := compose(composee.r, c.r); ok {
			composee = change{r, composee.ch + c.ch - 1}
			continue
		}
		buffer = append(buffer, c)
		lastCCC = class
	}
	if hasComposee {
		out = append(out, composee)
	}
	return append(out, buffer...)
}

const (
	hangulS0 = 0xAC00
	hangulL0 = 0x1100
	hangulV0 = 0x1161
	hangulT0 = 0x11A7
	hangulLN = 19
	hangulVN = 21
	hangulTN = 28
	hangulNN = hangulVN * hangulTN
	hangulSN = hangulLN * hangulNN
)

var (
	composeOnce  sync.Once
	composeTable map[[2]rune]rune
)

// compose is the primary composite of a and b, if there is one.
func compose(a, b rune) (rune, bool) {
	if a >= hangulL0 && a < hangulL0+hangulLN && b >= hangulV0 && b < hangulV0+hangulVN {
		return hangulS0 + ((a-hangulL0)*hangulVN+(b-hangulV0))*hangulTN, true
	}
	if a >= hangulS0 && a < hangulS0+hangulSN && (a-hangulS0)%hangulTN == 0 && b > hangulT0 && b < hangulT0+hangulTN {
		return a + (b - hangulT0), true
	}
	composeOnce.Do(buildComposeTable)
	r, ok := composeTable[[2]rune{a, b}]
	return r, ok
}

// buildComposeTable finds every character that NFC keeps and whose
// canonical decomposition is two characters (the first one possibly
// composed itself).
func buildComposeTable() {
	composeTable = make(map[[2]rune]rune, 1024)
	for r := rune(0xC0); r < 0x30000; r++ {
		if r >= hangulS0 && r < hangulS0+hangulSN || r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		s := string(r)
		p := norm.NFD.PropertiesString(s)
		if p.Decomposition() == nil || !norm.NFC.IsNormalString(s) {
			continue
		}
		d := []rune(norm.NFD.String(s))
		if len(d) < 2 {
			continue
		}
		last := d[len(d)-1]
		head := []rune(norm.NFC.String(string(d[:len(d)-1])))
		if len(head) != 1 {
			continue
		}
		composeTable[[2]rune{head[0], last}] = r
	}
}

// isMark is the general category M.
func isMark(r rune) bool { return r >= 0x300 && unicode.In(r, unicode.M) }

// isNonspacingMark is the general category Mn.
func isNonspacingMark(r rune) bool { return r >= 0x300 && unicode.Is(unicode.Mn, r) }
