package codec

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec/tokenizer"
	"github.com/svc-dev/svc/core/onnxpb"
	"github.com/svc-dev/svc/core/tensor"
)

// idBounds are what a text model's id inputs may hold when a client sends
// them as tensors, so that an id the model cannot gather is a 400 naming
// it rather than ONNX Runtime's failure: vocab ids (0 to vocab-1), types
// token types (0 to types-1; 0: unknown, any from 0), and positions
// tokens per text (0: unknown). The from strings say where each comes
// from, for messages.
type idBounds struct {
	vocab, types, positions             int64
	vocabFrom, typesFrom, positionsFrom string
}

// tables are the rows of the model's embedding tables, read from its
// graph: the initializer a Gather takes input_ids from (words), the one
// it takes token_type_ids from (types), and one gathered by anything else
// with "position" in its name (positions); 0 where not found.
type tables struct {
	words, types, positions int64
}

// readTables reads the model's embedding tables from modelFile.
func readTables(modelFile string) tables {
	var t tables
	if modelFile == "" {
		return t
	}
	m, err := onnxpb.ReadFile(modelFile)
	if err != nil || m.Graph == nil {
		return t
	}
	inits := map[string][]int64{}
	for _, init := range m.Graph.Initializers {
		inits[init.Name] = init.Dims
	}
	for _, n := range m.Graph.Nodes {
		if n.OpType != "Gather" || len(n.Inputs) < 2 {
			continue
		}
		d, ok := inits[n.Inputs[0]]
		if !ok || len(d) != 2 {
			continue
		}
		switch {
		case n.Inputs[1] == inputIDs:
			t.words = d[0]
		case n.Inputs[1] == inputTypeIDs:
			t.types = d[0]
		case containsFold(n.Inputs[0], "position"):
			t.positions = d[0]
		}
	}
	return t
}

// offsetPositions are the config.json model types whose position ids
// start after the padding id (pad_token_id + 1), as RoBERTa's do: the
// first rows of their position table are never a token's.
var offsetPositions = []string{"camembert", "data2vec-text", "esm", "ibert", "longformer", "luke", "markuplm", "mpnet", "roberta", "roberta-prelayernorm", "xlm-roberta", "xlm-roberta-xl", "xmod"}

// slots is how many tokens a text may have in a model whose position
// table has rows rows (0: unknown), and why, for messages.
func slots(rows int64, hf *hfConfig) (int64, string) {
	if rows <= 0 {
		return 0, ""
	}
	from := fmt.Sprintf("its position embeddings have %d rows", rows)
	if hf == nil || !slices.Contains(offsetPositions, string(hf.ModelType)) {
		return rows, from
	}
	pad := int64(1)
	if hf.PadTokenID.set {
		pad = hf.PadTokenID.n
	}
	if pad < 0 || pad+1 >= rows {
		return rows, from
	}
	return rows - pad - 1, fmt.Sprintf("%s, and %s's position ids start at pad_token_id + 1 = %d", from, hf.ModelType, pad+1)
}

// boundsOf works out the id inputs' bounds: the vocabulary from the
// model's word embeddings, else config.json's vocab_size, else the
// tokenizer's ids (its added tokens included); the token types from the
// model's token-type embeddings, else config.json's type_vocab_size; the
// positions as slots gives them.
func boundsOf(t tables, hf *hfConfig, hfPath string, tok *tokenizer.Tokenizer) idBounds {
	var b idBounds
	switch {
	case t.words > 0:
		b.vocab, b.vocabFrom = t.words, fmt.Sprintf("its word embeddings have %d rows", t.words)
	case hf != nil && hf.VocabSize.n > 0:
		b.vocab, b.vocabFrom = hf.VocabSize.n, fmt.Sprintf("%s's vocab_size is %d", hfPath, hf.VocabSize.n)
	default:
		b.vocab, b.vocabFrom = int64(tok.VocabSize()), fmt.Sprintf("the tokenizer has %d ids", tok.VocabSize())
	}
	switch {
	case t.types > 0:
		b.types, b.typesFrom = t.types, fmt.Sprintf("its token-type embeddings have %d rows", t.types)
	case hf != nil && hf.TypeVocabSize.n > 0:
		b.types, b.typesFrom = hf.TypeVocabSize.n, fmt.Sprintf("%s's type_vocab_size is %d", hfPath, hf.TypeVocabSize.n)
	}
	b.positions, b.positionsFrom = slots(t.positions, hf)
	return b
}

// CheckIDs checks the id inputs a client sent as tensors (inputs in the
// model's order, nil where absent) against what the model can gather:
// input_ids from 0 to below the vocabulary, token_type_ids from 0 to
// below the token types, and no more tokens per text than the model has
// positions. An id outside is a *core.InputError naming the input, the
// value, its place and the bound. A nil x checks nothing.
func (x *Text) CheckIDs(inputs []*tensor.Tensor) error {
	if x == nil {
		return nil
	}
	for _, at := range []int{x.ids, x.mask, x.types} {
		if at < 0 || at >= len(inputs) || inputs[at] == nil {
			continue
		}
		t := inputs[at]
		if b := x.bounds.positions; b > 0 && len(t.Shape) == 2 && t.Shape[1] > b {
			name := x.inputName(at)
			return &core.InputError{Input: name, Message: fmt.Sprintf("Input '%s' has %d tokens per text (shape %s): the model has %d positions (%s)", name, t.Shape[1], tensor.FormatShape(t.Shape), b, x.bounds.positionsFrom)}
		}
	}
	if err := x.checkRange(inputs, x.ids, x.bounds.vocab, x.bounds.vocabFrom, "id", "is out of the vocabulary"); err != nil {
		return err
	}
	return x.checkRange(inputs, x.types, x.bounds.types, x.bounds.typesFrom, "token type", "is out of range")
}

// checkRange checks that the input at index at holds values from 0 to
// below bound (any from 0 when bound is 0).
func (x *Text) checkRange(inputs []*tensor.Tensor, at int, bound int64, from, what, fault string) error {
	if at < 0 || at >= len(inputs) || inputs[at] == nil {
		return nil
	}
	t := inputs[at]
	bad := -1
	var v int64
	switch d := t.Data.(type) {
	case []int64:
		bad = slices.IndexFunc(d, func(v int64) bool { return v < 0 || bound > 0 && v >= bound })
		if bad >= 0 {
			v = d[bad]
		}
	case []int32:
		bad = slices.IndexFunc(d, func(v int32) bool { return v < 0 || bound > 0 && int64(v) >= bound })
		if bad >= 0 {
			v = int64(d[bad])
		}
	}
	if bad < 0 {
		return nil
	}
	name := x.inputName(at)
	takes := fmt.Sprintf("the model takes 0 to %d (%s)", bound-1, from)
	if bound <= 0 {
		takes = what + "s are 0 or more"
	}
	return &core.InputError{Input: name, Message: fmt.Sprintf("Input '%s' at %s: %s %d %s: %s", name, place(bad, t.Shape), what, v, fault, takes)}
}

// inputName names the model's id input at index at.
func (x *Text) inputName(at int) string {
	switch at {
	case x.mask:
		return inputMask
	case x.types:
		return inputTypeIDs
	}
	return inputIDs
}

// place writes the flat index i of a tensor of the shape as its indices:
// [0, 3].
func place(i int, shape []int64) string {
	idx := make([]string, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		if d := int(shape[k]); d > 0 {
			idx[k] = strconv.Itoa(i % d)
			i /= d
		} else {
			idx[k] = "0"
		}
	}
	if len(shape) == 0 {
		return "[" + strconv.Itoa(i) + "]"
	}
	return "[" + strings.Join(idx, ", ") + "]"
}

// looseInt is a config.json integer that svc reads when it is one: any
// other value (null, a string, a list) leaves it unset, as svc does not
// need it to serve the model.
type looseInt struct {
	n   int64
	set bool
}

func (l *looseInt) UnmarshalJSON(b []byte) error {
	if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		l.n, l.set = n, true
	}
	return nil
}

// looseString is a config.json string, "" when the value is not one.
type looseString string

func (l *looseString) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*l = looseString(s)
	}
	return nil
}
