package tokenizer

import (
	"encoding/json"
	"fmt"
	"sort"
	"unicode/utf8"
)

// addedToken is one entry of tokenizer.json's added_tokens.
type addedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

type addedEntry struct {
	pattern string
	id      int
}

// addedVocab finds the added tokens in the text: those not normalized in
// the raw text first, then the normalized ones in the normalized rest.
type addedVocab struct {
	byContent map[string]int
	byID      map[int]addedToken
	raw       []addedEntry // longest first
	normed    []addedEntry // longest first
}

func parseAdded(raw json.RawMessage, m model, n normalizer) (*addedVocab, error) {
	var list []addedToken
	if !isNull(raw) {
		if err := decode(raw, "added_tokens", &list); err != nil {
			return nil, err
		}
	}
	v := &addedVocab{byContent: map[string]int{}, byID: map[int]addedToken{}}
	next := m.vocabSize()
	var order []addedToken
	for _, t := range list {
		if t.Content == "" {
			continue
		}
		id, ok := v.byContent[t.Content]
		if !ok {
			id, ok = m.tokenToID(t.Content)
		}
		if !ok {
			id = next
			next++
		}
		if id >= next {
			next = id + 1
		}
		t.ID = id
		v.byContent[t.Content] = id
		v.byID[id] = t
		order = append(order, t)
	}
	seen := map[string]bool{}
	for _, t := range order {
		if seen[t.Content] {
			continue
		}
		seen[t.Content] = true
		t = v.byID[v.byContent[t.Content]]
		if !t.Normalized {
			v.raw = append(v.raw, addedEntry{t.Content, t.ID})
			continue
		}
		p := newPiece(t.Content)
		if n != nil {
			n(p)
		}
		if p.norm != "" {
			v.normed = append(v.normed, addedEntry{p.norm, t.ID})
		}
	}
	for _, l := range [][]addedEntry{v.raw, v.normed} {
		sort.SliceStable(l, func(i, j int) bool { return len(l[i].pattern) > len(l[j].pattern) })
	}
	return v, nil
}

// find returns the leftmost-longest non-overlapping matches of entries in s.
func find(s string, entries []addedEntry) [][3]int {
	var out [][3]int
	if len(entries) == 0 {
		return nil
	}
	for i := 0; i < len(s); {
		found := false
		for _, e := range entries {
			if len(e.pattern) <= len(s)-i && s[i:i+len(e.pattern)] == e.pattern {
				out = append(out, [3]int{i, i + len(e.pattern), e.id})
				i += len(e.pattern)
				found = true
				break
			}
		}
		if !found {
			i++
		}
	}
	return out
}

// splitAdded cuts p at the added tokens of entries, as the reference's
// find_matches does (single_word, lstrip and rstrip included).
func (v *addedVocab) splitAdded(p *piece, entries []addedEntry) []*piece {
	s := p.norm
	if s == "" {
		return nil
	}
	matches := find(s, entries)
	if matches == nil {
		return []*piece{p.slice(0, len(s))}
	}
	var out []*piece
	startOffset := 0
	for _, m := range matches {
		start, stop, id := m[0], m[1], m[2]
		t := v.byID[id]
		if t.SingleWord {
			startSpace := start == 0 || !endsWithWord(s[:start])
			stopSpace := stop == len(s) || !startsWithWord(s[stop:])
			if !startSpace || !stopSpace {
				continue
			}
		}
		if t.LStrip {
			start = max(trailingSpaceStart(s[:start]), startOffset)
		}
		if t.RStrip {
			stop += leadingSpaceEnd(s[stop:])
		}
		if startOffset < start {
			out = append(out, p.slice(startOffset, start))
		}
		q := p.slice(start, stop)
		q.toks = []token{{id: id, value: q.norm, s: 0, e: len(q.norm)}}
		q.done = true
		out = append(out, q)
		startOffset = stop
	}
	if startOffset != len(s) {
		out = append(out, p.slice(startOffset, len(s)))
	}
	return out
}

func endsWithWord(s string) bool {
	r, n := utf8.DecodeLastRuneInString(s)
	return n > 0 && isWord(r)
}

func startsWithWord(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	return n > 0 && isWord(r)
}

func trailingSpaceStart(s string) int {
	i := len(s)
	for i > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:i])
		if !isWhitespace(r) {
			break
		}
		i -= n
	}
	return i
}

func leadingSpaceEnd(s string) int { return runOf(s, 0, isWhitespace) }

// extract cuts text at the added tokens and normalises the rest.
func (v *addedVocab) extract(text string, n normalizer) []*piece {
	first := splitEach([]*piece{newPiece(text)}, func(p *piece) []*piece { return v.splitAdded(p, v.raw) })
	return splitEach(first, func(p *piece) []*piece {
		if n != nil {
			n(p)
		}
		return v.splitAdded(p, v.normed)
	})
}

func (v *addedVocab) String() string { return fmt.Sprintf("%d added tokens", len(v.byID)) }
