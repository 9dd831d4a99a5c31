package tokenizer

import (
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// model turns one pre-tokenised piece into tokens, offsets in its bytes.
type model interface {
	tokenize(s string) ([]token, error)
	tokenToID(s string) (int, bool)
	vocabSize() int
}

func parseModel(raw json.RawMessage) (model, error) {
	const path = "model"
	var c config
	if err := decode(raw, path, &c); err != nil {
		return nil, err
	}
	switch c.Type {
	case "WordPiece":
		return parseWordPiece(raw, path)
	case "BPE":
		return parseBPE(raw, path)
	case "Unigram":
		return parseUnigram(raw, path)
	case "":
		// Older files leave the type out; the fields tell the model.
		var probe map[string]json.RawMessage
		if err := decode(raw, path, &probe); err != nil {
			return nil, err
		}
		switch {
		case probe["merges"] != nil:
			return parseBPE(raw, path)
		case probe["max_input_chars_per_word"] != nil:
			return parseWordPiece(raw, path)
		}
	}
	return nil, unknownType(path, c.Type, knownModels)
}

type wordPiece struct {
	vocab    map[string]int
	unk      string
	prefix   string
	maxChars int
}

func parseWordPiece(raw json.RawMessage, path string) (model, error) {
	var w struct {
		Vocab    map[string]int `json:"vocab"`
		Unk      *string        `json:"unk_token"`
		Prefix   *string        `json:"continuing_subword_prefix"`
		MaxChars *int           `json:"max_input_chars_per_word"`
	}
	if err := decode(raw, path, &w); err != nil {
		return nil, err
	}
	m := &wordPiece{vocab: w.Vocab, unk: "[UNK]", prefix: "##", maxChars: 100}
	if w.Unk != nil {
		m.unk = *w.Unk
	}
	if w.Prefix != nil {
		m.prefix = *w.Prefix
	}
	if w.MaxChars != nil {
		m.maxChars = *w.MaxChars
	}
	return m, nil
}

func (m *wordPiece) tokenToID(s string) (int, bool) { id, ok := m.vocab[s]; return id, ok }
func (m *wordPiece) vocabSize() int                 { return len(m.vocab) }

func (m *wordPiece) unkToken(s string) ([]token, error) {
	id, ok := m.vocab[m.unk]
	if !ok {
		return nil, errors.New("wordpiece: the unknown token is missing from the vocabulary")
	}
	return []token{{id: id, value: m.unk, s: 0, e: len(s)}}, nil
}

func (m *wordPiece) tokenize(s string) ([]token, error) {
	if utf8.RuneCountInString(s) > m.maxChars {
		return m.unkToken(s)
	}
	var out []token
	for start := 0; start < len(s); {
		end := len(s)
		found := false
		for start < end {
			sub := s[start:end]
			if start > 0 {
				sub = m.prefix + sub
			}
			if id, ok := m.vocab[sub]; ok {
				out = append(out, token{id: id, value: sub, s: start, e: end})
				found = true
				break
			}
			_, n := utf8.DecodeLastRuneInString(sub)
			end -= max(n, 1)
		}
		if !found {
			return m.unkToken(s)
		}
		start = end
	}
	return out, nil
}

type bpe struct {
	vocab        map[string]int
	vocabR       map[int]string
	merges       map[[2]int]bpeMerge
	unk          *string
	prefix       *string
	suffix       *string
	fuseUnk      bool
	byteFallback bool
	ignoreMerges bool

	mu    sync.Mutex
	cache map[string][]token
}

type bpeMerge struct{ rank, id int }

func parseBPE(raw json.RawMessage, path string) (model, error) {
	var b struct {
		Vocab        map[string]int    `json:"vocab"`
		Merges       []json.RawMessage `json:"merges"`
		Unk          *string           `json:"unk_token"`
		Prefix       *string           `json:"continuing_subword_prefix"`
		Suffix       *string           `json:"end_of_word_suffix"`
		FuseUnk      bool              `json:"fuse_unk"`
		ByteFallback bool              `json:"byte_fallback"`
		IgnoreMerges bool              `json:"ignore_merges"`
		Dropout      *float64          `json:"dropout"`
	}
	if err := decode(raw, path, &b); err != nil {
		return nil, err
	}
	if b.Dropout != nil && *b.Dropout != 0 {
		return nil, fmt.Errorf("%s.dropout %v is not supported (random; only null)", path, *b.Dropout)
	}
	m := &bpe{vocab: b.Vocab, vocabR: make(map[int]string, len(b.Vocab)), merges: make(map[[2]int]bpeMerge, len(b.Merges)),
		unk: b.Unk, prefix: b.Prefix, suffix: b.Suffix, fuseUnk: b.FuseUnk, byteFallback: b.ByteFallback,
		ignoreMerges: b.IgnoreMerges, cache: map[string][]token{}}
	for s, id := range b.Vocab {
		m.vocabR[id] = s
	}
	prefixLen := 0
	if b.Prefix != nil {
		prefixLen = len(*b.Prefix)
	}
	for rank, rawMerge := range b.Merges {
		a, c, err := parseMerge(rawMerge)
		if err != nil {
			return nil, fmt.Errorf("%s.merges[%d]: %v", path, rank, err)
		}
		ia, oka := m.vocab[a]
		ic, okc := m.vocab[c]
		if !oka || !okc || len(c) < prefixLen {
			return nil, fmt.Errorf("%s.merges[%d]: %q %q is not in the vocabulary", path, rank, a, c)
		}
		id, ok := m.vocab[a+c[prefixLen:]]
		if !ok {
			return nil, fmt.Errorf("%s.merges[%d]: %q is not in the vocabulary", path, rank, a+c[prefixLen:])
		}
		m.merges[[2]int{ia, ic}] = bpeMerge{rank, id}
	}
	return m, nil
}

// parseMerge reads a merge as ["a", "b"] or as "a b".
func parseMerge(raw json.RawMessage) (string, string, error) {
	var pair []string
	if err := json.Unmarshal(raw, &pair); err == nil {
		if len(pair) != 2 {
			return "", "", errors.New("a merge is two tokens")
		}
		return pair[0], pair[1], nil
	}
	var line string
	if err := json.Unmarshal(raw, &line); err != nil {
		return "", "", err
	}
	parts := strings.Split(line, " ")
	if len(parts) != 2 {
		return "", "", errors.New("a merge is two tokens")
	}
	return parts[0], parts[1], nil
}

func (m *bpe) tokenToID(s string) (int, bool) { id, ok := m.vocab[s]; return id, ok }
func (m *bpe) vocabSize() int                 { return len(m.vocab) }

const bpeCacheMax = 10000

func (m *bpe) tokenize(s string) ([]token, error) {
	if s == "" {
		return nil, nil
	}
	if m.ignoreMerges {
		if id, ok := m.vocab[s]; ok {
			return []token{{id: id, value: s, s: 0, e: len(s)}}, nil
		}
	}
	m.mu.Lock()
	hit, ok := m.cache[s]
	m.mu.Unlock()
	if ok {
		return append([]token(nil), hit...), nil
	}
	toks, err := m.mergeWord(s)
	if err != nil {
		return nil, err
	}
	if len(s) < 256 {
		m.mu.Lock()
		if len(m.cache) >= bpeCacheMax {
			clear(m.cache)
		}
		m.cache[s] = toks
		m.mu.Unlock()
	}
	return append([]token(nil), toks...), nil
}

type symbol struct{ id, prev, next, len int }

// mergeWord splits s into characters (with the prefix, suffix, byte
// fallback and unknown token of the model) and applies the merges, lowest
// rank first, leftmost first among equals.
func (m *bpe) mergeWord(s string) ([]token, error) {
	var syms []symbol
	add := func(id, n int) {
		syms = append(syms, symbol{id: id, prev: len(syms) - 1, next: len(syms) + 1, len: n})
	}
	unkID, unkLen := -1, 0
	for i, r := range s {
		n := utf8.RuneLen(r)
		if r == utf8.RuneError {
			_, n = utf8.DecodeRuneInString(s[i:])
		}
		c := s[i : i+n]
		if i > 0 && m.prefix != nil {
			c = *m.prefix + c
		}
		if i+n == len(s) && m.suffix != nil {
			c += *m.suffix
		}
		if id, ok := m.vocab[c]; ok {
			if unkID >= 0 {
				add(unkID, unkLen)
				unkID = -1
			}
			add(id, n)
			continue
		}
		if m.byteFallback {
			if ids, ok := m.byteIDs(c); ok {
				for _, id := range ids {
					add(id, 1)
				}
				continue
			}
		}
		if m.unk == nil {
			continue
		}
		id, ok := m.vocab[*m.unk]
		if !ok {
			return nil, fmt.Errorf("bpe: the unknown token %q is missing from the vocabulary", *m.unk)
		}
		switch {
		case unkID >= 0 && m.fuseUnk:
			unkLen += n
		case unkID >= 0:
			add(unkID, unkLen)
			unkID, unkLen = id, n
		default:
			unkID, unkLen = id, n
		}
	}
	if unkID >= 0 {
		add(unkID, unkLen)
	}
	if len(syms) > 0 {
		syms[len(syms)-1].next = -1
	}
	m.mergeAll(syms)
	var out []token
	off := 0
	for _, sy := range syms {
		if sy.len == 0 {
			continue
		}
		out = append(out, token{id: sy.id, value: m.vocabR[sy.id], s: off, e: off + sy.len})
		off += sy.len
	}
	return out, nil
}

func (m *bpe) byteIDs(c string) ([]int, bool) {
	ids := make([]int, 0, len(c))
	for i := 0; i < len(c); i++ {
		id, ok := m.vocab[fmt.Sprintf("<0x%02X>", c[i])]
		if !ok {
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

type mergeItem struct{ pos, rank, id int }
type mergeQueue []mergeItem

func (q mergeQueue) Len() int { return len(q) }
func (q mergeQueue) Less(i, j int) bool {
	if q[i].rank != q[j].rank {
		return q[i].rank < q[j].rank
	}
	return q[i].pos < q[j].pos
}
func (q mergeQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *mergeQueue) Push(x any)   { *q = append(*q, x.(mergeItem)) }
func (q *mergeQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

func (m *bpe) mergeAll(syms []symbol) {
	q := make(mergeQueue, 0, len(syms))
	for i := 0; i+1 < len(syms); i++ {
		if mg, ok := m.merges[[2]int{syms[i].id, syms[i+1].id}]; ok {
			q = append(q, mergeItem{i, mg.rank, mg.id})
		}
	}
	heap.Init(&q)
	for q.Len() > 0 {
		top := heap.Pop(&q).(mergeItem)
		cur := &syms[top.pos]
		if cur.len == 0 || cur.next == -1 {
			continue
		}
		nextPos := cur.next
		right := syms[nextPos]
		if mg, ok := m.merges[[2]int{cur.id, right.id}]; !ok || mg.id != top.id {
			continue
		}
		cur.id = top.id
		cur.len += right.len
		cur.next = right.next
		syms[nextPos].len = 0
		if right.next >= 0 && right.next < len(syms) {
			syms[right.next].prev = top.pos
		}
		if cur.prev >= 0 {
			if mg, ok := m.merges[[2]int{syms[cur.prev].id, cur.id}]; ok {
				heap.Push(&q, mergeItem{cur.prev, mg.rank, mg.id})
			}
		}
		if cur.next >= 0 && cur.next < len(syms) {
			if mg, ok := m.merges[[2]int{cur.id, syms[cur.next].id}]; ok {
				heap.Push(&q, mergeItem{top.pos, mg.rank, mg.id})
			}
		}
	}
}
