package decode

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

// Piece is one token of a text, for Entities: where it lies in the text,
// [Start, End) in characters (Unicode code points), and its best class
// (from Classifier.Decode of the token's scores).
type Piece struct {
	Start, End int
	Class      Class
}

// Entity is a span of a text and what it names: the label without its
// B-/I- prefix, [Start, End) in characters (Unicode code points) of the
// text, the text of the span, and the mean score of its pieces.
type Entity struct {
	Entity     string
	Start, End int
	Text       string
	Score      float64
}

// Entities groups the pieces of text (its tokens in order, special tokens
// left out) into entities, by the simple aggregation of token
// classification: a piece labelled "B-X" starts an entity of X; a piece
// labelled "I-X", or "X" without a prefix, continues the entity before it
// when that is of X, else starts one; an entity's span runs from its first
// piece's start to its last piece's end and its score is the mean of its
// pieces' scores. Entities of "O" (outside any entity) are left out. An
// offset past the text is clamped to its end. No pieces gives an empty,
// non-nil list.
func Entities(text string, pieces []Piece) []Entity {
	out := []Entity{}
	var cur *Entity
	var sum float64
	var count int
	flush := func() {
		if cur != nil && cur.Entity != "O" {
			cur.Score = sum / float64(count)
			out = append(out, *cur)
		}
		cur = nil
	}
	for _, p := range pieces {
		begin, tag := entityTag(p.Class.Label)
		if cur == nil || begin || tag != cur.Entity {
			flush()
			cur = &Entity{Entity: tag, Start: p.Start, End: p.End}
			sum, count = 0, 0
		}
		cur.End = max(cur.End, p.End)
		sum += p.Class.Score
		count++
	}
	flush()
	if len(out) > 0 {
		chars := charStarts(text)
		for i := range out {
			out[i].Text = text[chars(out[i].Start):chars(out[i].End)]
		}
	}
	return out
}

// entityTag splits a label into its B- prefix (begin) and the entity it
// names: "B-PER" is (true, "PER"), "I-PER" (false, "PER"), "O" (false,
// "O").
func entityTag(label string) (begin bool, tag string) {
	if t, ok := strings.CutPrefix(label, "B-"); ok {
		return true, t
	}
	if t, ok := strings.CutPrefix(label, "I-"); ok {
		return false, t
	}
	return false, label
}

// charStarts returns a function from a character offset of text to its
// byte offset (the text's length past its last character).
func charStarts(text string) func(int) int {
	starts := make([]int, 0, utf8.RuneCountInString(text)+1)
	for b := range text {
		starts = append(starts, b)
	}
	starts = append(starts, len(text))
	return func(c int) int {
		return starts[min(max(c, 0), len(starts)-1)]
	}
}

// AppendEntitiesJSON appends the entities of every text as a JSON array
// with one array per text:
// [[{"entity":"PER","start":0,"end":4,"text":"John","score":0.99}]].
func AppendEntitiesJSON(dst []byte, items [][]Entity) []byte {
	return appendArray(dst, items, AppendEntityListJSON)
}

// AppendEntityListJSON appends one text's entities as a JSON array.
func AppendEntityListJSON(dst []byte, entities []Entity) []byte {
	return appendArray(dst, entities, func(d []byte, e Entity) []byte { return e.appendJSON(d) })
}

// MarshalJSON writes e as AppendEntityListJSON writes each entity.
func (e Entity) MarshalJSON() ([]byte, error) { return e.appendJSON(nil), nil }

func (e Entity) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"entity":`...)
	dst = tensorjson.AppendString(dst, e.Entity)
	dst = append(dst, `,"start":`...)
	dst = strconv.AppendInt(dst, int64(e.Start), 10)
	dst = append(dst, `,"end":`...)
	dst = strconv.AppendInt(dst, int64(e.End), 10)
	dst = append(dst, `,"text":`...)
	dst = tensorjson.AppendString(dst, e.Text)
	dst = append(dst, `,"score":`...)
	dst = appendScore(dst, e.Score)
	return append(dst, '}')
}
