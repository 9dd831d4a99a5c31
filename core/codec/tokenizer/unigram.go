package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"unicode/utf8"
)

// unkPenalty is what an unknown character costs below the lowest score.
const unkPenalty = 10.0

type unigram struct {
	tokens       []string
	scores       []float64
	ids          map[string]int
	unkID        int // -1: none
	byteFallback bool
	minScore     float64
	maxLen       int

	mu    sync.Mutex
	cache map[string][]string
}

func parseUnigram(raw json.RawMessage, path string) (model, error) {
	var u struct {
		Vocab        [][2]json.RawMessage `json:"vocab"`
		UnkID        *int                 `json:"unk_id"`
		ByteFallback bool                 `json:"byte_fallback"`
	}
	if err := decode(raw, path, &u); err != nil {
		return nil, err
	}
	m := &unigram{ids: make(map[string]int, len(u.Vocab)), unkID: -1, byteFallback: u.ByteFallback,
		minScore: math.Inf(1), cache: map[string][]string{}}
	for i, v := range u.Vocab {
		var tok string
		var score float64
		if err := json.Unmarshal(v[0], &tok); err != nil {
			return nil, fmt.Errorf("%s.vocab[%d]: %v", path, i, err)
		}
		if err := json.Unmarshal(v[1], &score); err != nil {
			return nil, fmt.Errorf("%s.vocab[%d]: %v", path, i, err)
		}
		m.tokens = append(m.tokens, tok)
		m.scores = append(m.scores, score)
		m.ids[tok] = i
		m.minScore = min(m.minScore, score)
		m.maxLen = max(m.maxLen, len(tok))
	}
	if u.UnkID != nil {
		if len(u.Vocab) == 0 {
			return nil, fmt.Errorf("%s: the vocabulary is empty", path)
		}
		if *u.UnkID < 0 || *u.UnkID >= len(u.Vocab) {
			return nil, fmt.Errorf("%s.unk_id %d is not in the vocabulary", path, *u.UnkID)
		}
		m.unkID = *u.UnkID
	}
	return m, nil
}

func (m *unigram) tokenToID(s string) (int, bool) { id, ok := m.ids[s]; return id, ok }
func (m *unigram) vocabSize() int                 { return len(m.tokens) }

var errMissingUnk = errors.New("unigram: an unknown character and no unk_id")

func (m *unigram) tokenize(s string) ([]token, error) {
	strs, err := m.encode(s)
	if err != nil {
		return nil, err
	}
	out := make([]token, 0, len(strs))
	off := 0
	for _, str := range strs {
		n := len(str)
		id, ok := m.ids[str]
		if !ok && m.byteFallback {
			if toks, ok := m.bytesOf(str, off); ok {
				out = append(out, toks...)
				off += n
				continue
			}
		}
		if !ok {
			if m.unkID < 0 {
				return nil, errMissingUnk
			}
			id = m.unkID
		}
		out = append(out, token{id: id, value: str, s: off, e: off + n})
		off += n
	}
	return out, nil
}

func (m *unigram) bytesOf(str string, off int) ([]token, bool) {
	toks := make([]token, 0, len(str))
	for i := 0; i < len(str); i++ {
		b := fmt.Sprintf("<0x%02X>", str[i])
		id, ok := m.ids[b]
		if !ok {
			return nil, false
		}
		toks = append(toks, token{id: id, value: b, s: off, e: off + len(str)})
	}
	return toks, true
}

func (m *unigram) encode(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	m.mu.Lock()
	hit, ok := m.cache[s]
	m.mu.Unlock()
	if ok {
		return hit, nil
	}
	out, err := m.viterbi(s)
	if err != nil {
		return nil, err
	}
	if len(s) < 256 {
		m.mu.Lock()
		if len(m.cache) >= bpeCacheMax {
			clear(m.cache)
		}
		m.cache[s] = out
		m.mu.Unlock()
	}
	return out, nil
}

type bestPath struct {
	id     int
	score  float64
	starts int // -1: not reached
}

// viterbi is the reference's optimised best path: for every byte where a
// character ends, the best-scoring segmentation ending there; unknown
// characters (no single-character piece) cost the lowest score minus
// unkPenalty, and consecutive unknowns are fused.
func (m *unigram) viterbi(s string) ([]string, error) {
	best := make([]bestPath, len(s)+1)
	for i := range best {
		best[i].starts = -1
	}
	unkScore := m.minScore - unkPenalty
	for start := 0; start < len(s); {
		here := best[start].score
		_, mblen := utf8.DecodeRuneInString(s[start:])
		single := false
		for end := start + 1; end <= len(s) && end-start <= m.maxLen; end++ {
			id, ok := m.ids[s[start:end]]
			if !ok {
				continue
			}
			cand := m.scores[id] + here
			if t := &best[end]; t.starts < 0 || cand > t.score {
				*t = bestPath{id: id, score: cand, starts: start}
			}
			if end-start == mblen {
				single = true
			}
		}
		if !single {
			if m.unkID < 0 {
				return nil, errMissingUnk
			}
			cand := unkScore + here
			if t := &best[start+mblen]; t.starts < 0 || cand > t.score {
				*t = bestPath{id: m.unkID, score: cand, starts: start}
			}
		}
		start += mblen
	}
	var out []string
	fused := -1 // the start of the unknown run being fused, -1: none
	for end := len(s); end > 0; {
		node := best[end]
		if node.id == m.unkID {
			if fused < 0 {
				fused = end
			}
		} else {
			if fused >= 0 {
				out = append(out, s[end:fused])
				fused = -1
			}
			out = append(out, s[node.starts:end])
		}
		end = node.starts
	}
	if fused >= 0 {
		out = append(out, s[0:fused])
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}
