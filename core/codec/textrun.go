package codec

import (
	"context"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/codec/decode"
	"github.com/svc-dev/svc/core/codec/tokenizer"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/sched"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

// The keys of the text's limits, for messages.
const (
	keyBatchTokens = "text.max_batch_tokens"
	keyMaxTokens   = "limits.max_tokens"
)

// tokenBytes is what one token of a request is counted as in the memory
// budget while it waits for its run: its id, type, mask, special flag,
// offsets and the token's string.
const tokenBytes = 80

// TextInput is a request's texts as a protocol decoded them.
type TextInput struct {
	// Texts are the texts; Pairs, nil or one per text, the second text of
	// each pair.
	Texts, Pairs []string
	// IDs are token ids sent in place of texts, one list per input, used
	// as they are (no special tokens added): the ids /tokenize answers.
	IDs [][]int64
	// Single says the client sent one text, not a list: messages name no
	// item.
	Single bool
	// Truncate cuts a text longer than the maximum length, or refuses it;
	// nil: the model's setting (text.truncation, text.auto_truncate).
	Truncate *bool
	// Direction is where a text is cut: "left" (its start), "right", or
	// "" as the tokenizer.json says.
	Direction string
	// Name is the input's name in messages ("" : text).
	Name string
	// Whole tokenizes each text whole, neither cut nor refused past the
	// maximum length, for a request that only tokenizes (it never runs);
	// NoSpecial leaves the special tokens out.
	Whole, NoSpecial bool
}

// Texts are a request's texts tokenized, before they run.
type Texts struct {
	encs   []tokenizer.Encoding
	texts  []string
	single bool
	tokens int64
}

// Len is the number of texts.
func (t *Texts) Len() int { return len(t.encs) }

// Tokens is the number of tokens of the texts, summed.
func (t *Texts) Tokens() int64 { return t.tokens }

// Encoding is text i's tokens.
func (t *Texts) Encoding(i int) tokenizer.Encoding { return t.encs[i] }

// Tokenize checks and tokenizes a request's texts (or takes its ids). A
// request is bounded before the work: more than limits.max_texts texts
// are refused before any is tokenized, and tokenizing stops at the text
// that takes the request past limits.max_tokens (*core.LimitError, a
// 413). A text that is not valid UTF-8, an id the model cannot look up,
// or a text longer than the maximum length when it is not to be cut is
// a *core.InputError naming the input, the item, its tokens and the
// limit. The tokens' memory is reserved against the request's ticket
// (core/budget); ctx is looked at between texts, and once it ends the
// work stops with core.Canceled.
func (x *Text) Tokenize(ctx context.Context, in TextInput) (*Texts, error) {
	name := in.Name
	if name == "" {
		name = InputText
	}
	n := len(in.Texts)
	if in.IDs != nil {
		n = len(in.IDs)
	}
	if n == 0 {
		return nil, &core.InputError{Input: name, Message: fmt.Sprintf("Input '%s': send a text or a list of texts", name)}
	}
	if err := x.CountTexts(n); err != nil {
		return nil, err
	}
	if err := x.checkPairs(in); err != nil {
		return nil, err
	}
	tok, cut := x.tokenizerFor(in)
	ts := &Texts{encs: make([]tokenizer.Encoding, n), texts: in.Texts, single: in.Single}
	for i := range n {
		if ctx.Err() != nil {
			return nil, core.Canceled(ctx)
		}
		e, err := x.encodeItem(tok, in, i, name)
		if err != nil {
			return nil, err
		}
		if limit := x.longest(); e.Len() > limit && !in.Whole {
			// A text is cut as it is tokenized; ids are cut here.
			if !cut {
				return nil, itemError(name, in.Single, i, fmt.Sprintf("%d tokens, over the maximum length of %d (%s)", e.Len(), limit, x.whyLimit()))
			}
			e = cutIDs(e, limit, in.Direction == "left" || in.Direction == "" && x.tok.TruncatesLeft())
		}
		ts.encs[i] = e
		ts.tokens += int64(e.Len())
		if limit := x.lim.MaxTokens; limit > 0 && ts.tokens > limit {
			if in.Single {
				return nil, &core.LimitError{Key: keyMaxTokens, Message: fmt.Sprintf("Input '%s': %d tokens, more than the %d one request may send (%s)", name, ts.tokens, limit, keyMaxTokens)}
			}
			return nil, &core.LimitError{Key: keyMaxTokens, Message: fmt.Sprintf("Input '%s': the texts up to item %d are %d tokens, more than the %d one request may send (%s)", name, i, ts.tokens, limit, keyMaxTokens)}
		}
	}
	if err := budget.Reserve(ctx, tokenBytes*ts.tokens, "for its tokens"); err != nil {
		return nil, err
	}
	return ts, nil
}

// checkPairs refuses pairs where they cannot be.
func (x *Text) checkPairs(in TextInput) error {
	switch {
	case in.Pairs == nil:
		return nil
	case x.Task == config.TaskTokens:
		return &core.InputError{Input: InputTextPair, Message: fmt.Sprintf("Input '%s': token classification finds the entities of one text; send '%s' alone", InputTextPair, InputText)}
	case in.IDs != nil || len(in.Pairs) != len(in.Texts):
		return &core.InputError{Input: InputTextPair, Message: fmt.Sprintf("Input '%s' has %d texts, '%s' %d: send one pair text per text", InputTextPair, len(in.Pairs), InputText, len(in.Texts))}
	}
	return nil
}

// tokenizerFor is the tokenizer the request asks for, and whether it
// cuts a longer text.
func (x *Text) tokenizerFor(in TextInput) (*tokenizer.Tokenizer, bool) {
	cut := x.Truncate
	if in.Truncate != nil {
		cut = *in.Truncate
	}
	switch {
	case !cut || in.Whole:
		return x.full, false
	case in.Direction == "left":
		return x.left, true
	case in.Direction == "right":
		return x.right, true
	}
	return x.tok, true
}

// longest is the most tokens of one text: the maximum length, else one
// batch's budget.
func (x *Text) longest() int {
	if x.MaxLength > 0 {
		return x.MaxLength
	}
	return x.MaxBatchTokens
}

// whyLimit says where the maximum length comes from, for a text not cut.
func (x *Text) whyLimit() string {
	if x.MaxLength == 0 {
		return "one batch of the model's, " + keyBatchTokens + "; truncation is off"
	}
	return "truncation is off"
}

// encodeItem tokenizes text i of in (or takes its ids).
func (x *Text) encodeItem(tok *tokenizer.Tokenizer, in TextInput, i int, name string) (tokenizer.Encoding, error) {
	if in.IDs != nil {
		return x.idsEncoding(in.IDs[i], in.Single, i, name)
	}
	if !utf8.ValidString(in.Texts[i]) {
		return tokenizer.Encoding{}, itemError(name, in.Single, i, "invalid UTF-8")
	}
	if in.Pairs == nil {
		e, err := tok.Encode(in.Texts[i], !in.NoSpecial)
		if err != nil {
			return e, itemError(name, in.Single, i, err.Error())
		}
		return e, nil
	}
	if !utf8.ValidString(in.Pairs[i]) {
		return tokenizer.Encoding{}, itemError(InputTextPair, in.Single, i, "invalid UTF-8")
	}
	e, err := tok.EncodePair(in.Texts[i], in.Pairs[i], true)
	if err != nil {
		return e, itemError(name, in.Single, i, err.Error())
	}
	return e, nil
}

// idsEncoding is the encoding of ids a client sent, each checked against
// the model's vocabulary.
func (x *Text) idsEncoding(ids []int64, single bool, i int, name string) (tokenizer.Encoding, error) {
	if len(ids) == 0 {
		return tokenizer.Encoding{}, itemError(name, single, i, "no token ids")
	}
	for j, id := range ids {
		if id < 0 || x.bounds.vocab > 0 && id >= x.bounds.vocab {
			bound := "0 or more"
			if x.bounds.vocab > 0 {
				bound = fmt.Sprintf("0 to %d (%s)", x.bounds.vocab-1, x.bounds.vocabFrom)
			}
			return tokenizer.Encoding{}, itemError(name, single, i, fmt.Sprintf("token %d: id %d is out of the vocabulary: the model takes %s", j, id, bound))
		}
	}
	n := len(ids)
	e := tokenizer.Encoding{IDs: ids, TypeIDs: make([]int64, n), AttentionMask: make([]int64, n), SpecialTokensMask: make([]int64, n), Offsets: make([][2]int, n), Tokens: make([]string, n)}
	for j := range e.AttentionMask {
		e.AttentionMask[j] = 1
	}
	return e, nil
}

// cutIDs keeps n of a client's ids, from the start's end when left.
func cutIDs(e tokenizer.Encoding, n int, left bool) tokenizer.Encoding {
	s, end := 0, n
	if left {
		s, end = e.Len()-n, e.Len()
	}
	return tokenizer.Encoding{IDs: e.IDs[s:end], TypeIDs: e.TypeIDs[s:end], AttentionMask: e.AttentionMask[s:end],
		SpecialTokensMask: e.SpecialTokensMask[s:end], Offsets: e.Offsets[s:end], Tokens: e.Tokens[s:end]}
}

// itemError is a refused text: the input, the item (unless single) and
// why.
func itemError(name string, single bool, i int, why string) error {
	where := fmt.Sprintf("Input '%s', item %d: ", name, i)
	if single {
		where = fmt.Sprintf("Input '%s': ", name)
	}
	return &core.InputError{Input: name, Message: where + why}
}

// TextBatch is one run of texts, for the metrics: its texts, their
// tokens, and its tokens padded (its texts × its longest).
type TextBatch struct {
	Size, Tokens, Padded int
}

// Answers are the answers to a request's texts, in its order: one
// embedding, one row of logits (classification) or the entities (token
// classification) per text.
type Answers struct {
	x        *Text
	single   bool
	tokens   int64
	vectors  [][]float32
	entities [][]decode.Entity
}

// Tokens is the number of tokens the texts ran as.
func (a *Answers) Tokens() int64 { return a.tokens }

// Embeddings are the texts' embeddings, normalised when the model
// normalises.
func (a *Answers) Embeddings() [][]float32 {
	if !a.x.Normalize {
		return a.vectors
	}
	return a.Normalized()
}

// Pooled are the texts' embeddings as pooled, never normalised.
func (a *Answers) Pooled() [][]float32 { return a.vectors }

// Normalized are the texts' embeddings scaled to unit length, whatever
// the model says.
func (a *Answers) Normalized() [][]float32 {
	out := make([][]float32, len(a.vectors))
	for i, v := range a.vectors {
		out[i] = append([]float32(nil), v...)
		normalize(out[i])
	}
	return out
}

// Logits are a classifier's logits, one row per text.
func (a *Answers) Logits() [][]float32 { return a.vectors }

// textItem is one text of a request in the queue.
type textItem struct {
	ts  *Texts
	ans *Answers
	i   int
}

// Run runs a request's texts, in as many batches as text.max_batch_tokens
// makes of them with the waiting texts of other requests, and returns
// their answers in the request's order.
func (x *Text) Run(ctx context.Context, ts *Texts) (*Answers, error) {
	if x.queue == nil {
		return nil, fmt.Errorf("text: no runner")
	}
	a := &Answers{x: x, single: ts.single, tokens: ts.tokens}
	if x.Task == config.TaskTokens {
		a.entities = make([][]decode.Entity, len(ts.encs))
	} else {
		a.vectors = make([][]float32, len(ts.encs))
		// The answers, and their encoding in JSON.
		if err := budget.Reserve(ctx, 3*4*int64(len(ts.encs))*max(x.Hidden, 1), "for its answers"); err != nil {
			return nil, err
		}
	}
	lens, refs := make([]int, len(ts.encs)), make([]any, len(ts.encs))
	for i, e := range ts.encs {
		lens[i], refs[i] = e.Len(), &textItem{ts: ts, ans: a, i: i}
	}
	if err := x.queue.Run(ctx, lens, refs); err != nil {
		return nil, err
	}
	return a, nil
}

// start makes the queue that runs batches of texts on r, at most as
// many at once as r's sessions run; each batch is told to observe.
func (x *Text) start(r core.Runner, observe func(TextBatch)) {
	slots := 1
	if s, ok := r.(interface{ Stats() core.SchedStats }); ok {
		slots = max(s.Stats().Sessions, 1)
	}
	x.runner, x.observe = r, observe
	x.queue = sched.NewTokens(x.MaxBatchTokens, slots, x.runBatch)
}

// runBatch runs one batch of texts (refs are *textItem) padded to its
// longest, holding its memory while it runs, and writes each text's
// answer.
func (x *Text) runBatch(ctx context.Context, refs []any) error {
	items := make([]*textItem, len(refs))
	encs := make([]tokenizer.Encoding, len(refs))
	texts := make([]string, len(refs))
	real, longest := 0, 0
	for k, ref := range refs {
		it := ref.(*textItem)
		items[k], encs[k] = it, it.ts.encs[it.i]
		if it.ts.texts != nil {
			texts[k] = it.ts.texts[it.i]
		}
		real += encs[k].Len()
		longest = max(longest, encs[k].Len())
	}
	b := x.batch(encs, false, texts)
	// The ids, the mask pooling keeps, and the run's outputs.
	release, err := budget.Hold(ctx, 4*8*int64(len(encs)*longest)+budget.Outputs(x.runner.Info(), b.Inputs), "for a batch of its texts")
	if err != nil {
		return err
	}
	defer release()
	res, err := x.runner.Predict(ctx, b.Inputs)
	if err != nil {
		return err
	}
	defer res.Release()
	t, err := x.answerOf(res)
	if err != nil {
		return &core.InferenceError{Err: err}
	}
	if err := x.answerBatch(b, t, items); err != nil {
		return &core.InferenceError{Err: err}
	}
	if x.observe != nil {
		x.observe(TextBatch{Size: len(encs), Tokens: real, Padded: len(encs) * longest})
	}
	return nil
}

// answerBatch writes each item's answer from the task's output t of the
// batch b's run.
func (x *Text) answerBatch(b *Batch, t *tensor.Tensor, items []*textItem) error {
	switch x.Task {
	case config.TaskTokens:
		ents, err := x.Entities(b, t)
		if err != nil {
			return err
		}
		for k, it := range items {
			it.ans.entities[it.i] = ents[k]
		}
		return nil
	case config.TaskClassification:
		if len(t.Shape) != 2 || t.Shape[0] != int64(b.n) {
			return fmt.Errorf("classification: the logits are %s %s, want [%d, classes]", t.DType, tensor.FormatShape(t.Shape), b.n)
		}
		f, ok := t.Data.([]float32)
		if !ok {
			return fmt.Errorf("classification: the logits are %s, want float32", t.DType)
		}
		c := int(t.Shape[1])
		for k, it := range items {
			it.ans.vectors[it.i] = append([]float32(nil), f[k*c:(k+1)*c]...)
		}
		return nil
	}
	emb, err := x.embed(b, t, false)
	if err != nil {
		return err
	}
	f := emb.Data.([]float32)
	d := int(emb.Shape[1])
	for k, it := range items {
		it.ans.vectors[it.i] = f[k*d : (k+1)*d : (k+1)*d]
	}
	return nil
}

// matrix is the answers' rows as one tensor [N, width]: the embeddings
// or the logits.
func (a *Answers) matrix() *tensor.Tensor {
	rows := a.vectors
	if a.x.Task == config.TaskEmbedding {
		rows = a.Embeddings()
	}
	width := 0
	if len(rows) > 0 {
		width = len(rows[0])
	}
	flat := make([]float32, 0, len(rows)*width)
	for _, v := range rows {
		flat = append(flat, v...)
	}
	return &tensor.Tensor{DType: tensor.Float32, Shape: []int64{int64(len(a.vectors)), int64(width)}, Data: flat}
}

// Classes are a classifier's labels of each text, best first, scored by
// its activation.
func (a *Answers) Classes() ([][]decode.Class, error) {
	return a.x.classify.Decode(a.matrix())
}

// AppendJSON appends the answer for the v1 API, as Text.AppendJSON
// writes it for one run.
func (a *Answers) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"`...)
	dst = append(dst, a.x.Answer()...)
	dst = append(dst, `":`...)
	switch a.x.Task {
	case config.TaskClassification:
		items, err := a.Classes()
		if err != nil {
			return dst, err
		}
		dst = decode.AppendClassesJSON(dst, items)
	case config.TaskTokens:
		dst = decode.AppendEntitiesJSON(dst, a.entities)
	default:
		dst = tensorjson.AppendJSON(dst, a.matrix())
	}
	return append(dst, '}'), nil
}

// Tensor is the answer as the Open Inference Protocol carries it, as
// Text.Tensor makes it for one run.
func (a *Answers) Tensor() (*tensor.Tensor, error) {
	switch a.x.Task {
	case config.TaskClassification:
		items, err := a.Classes()
		if err != nil {
			return nil, err
		}
		k := 0
		if len(items) > 0 {
			k = len(items[0])
		}
		return &tensor.Tensor{DType: tensor.String, Shape: []int64{int64(len(items)), int64(k)}, Data: decode.TritonClasses(items)}, nil
	case config.TaskTokens:
		out := make([]string, len(a.entities))
		for i, item := range a.entities {
			out[i] = string(decode.AppendEntityListJSON(nil, item))
		}
		return &tensor.Tensor{DType: tensor.String, Shape: []int64{int64(len(out))}, Data: out}, nil
	}
	return a.matrix(), nil
}

// Relevance is a cross-encoder's score of each pair: its one logit, or
// with two classes the second's logit less the first's (whose sigmoid is
// the second class's softmax), through a sigmoid unless raw. A
// classifier of more classes has no relevance (an error).
func (a *Answers) Relevance(raw bool) ([]float64, error) {
	out := make([]float64, len(a.vectors))
	for i, v := range a.vectors {
		var s float64
		switch len(v) {
		case 1:
			s = float64(v[0])
		case 2:
			s = float64(v[1]) - float64(v[0])
		default:
			return nil, fmt.Errorf("the model has %d classes: a cross-encoder scores a pair with one logit or two classes", len(v))
		}
		if !raw {
			s = 1 / (1 + math.Exp(-s))
		}
		out[i] = s
	}
	return out, nil
}

// Reranks reports whether the model scores pairs: a classifier of one
// logit or two classes (a cross-encoder), or unknown classes.
func (x *Text) Reranks() bool {
	return x.Task == config.TaskClassification && (x.Hidden <= 0 || x.Hidden <= 2)
}

// TokenizerFull is the model's tokenizer, cutting nothing: for /decode.
func (x *Text) TokenizerFull() *tokenizer.Tokenizer { return x.full }

// Rerank scores each document against query with a cross-encoder: the
// pairs (query, document) tokenized as the tokenizer's pair template
// says, run in batches; the answers' Relevance are the scores. in says
// how to truncate and names the documents in messages.
func (x *Text) Rerank(ctx context.Context, query string, docs []string, in TextInput) (*Answers, error) {
	if !x.Reranks() {
		what := fmt.Sprintf("The model is a %s model", x.Task)
		if x.Task == config.TaskClassification {
			what = fmt.Sprintf("The model is a classifier of %d classes", x.Hidden)
		}
		return nil, &core.InputError{Input: in.Name, Message: what + ": reranking takes a cross-encoder, a classifier of pairs with one logit or two classes"}
	}
	if !utf8.ValidString(query) {
		return nil, &core.InputError{Input: "query", Message: "Input 'query': invalid UTF-8"}
	}
	in.Texts, in.Pairs = make([]string, len(docs)), docs
	for i := range docs {
		in.Texts[i] = query
	}
	ts, err := x.Tokenize(ctx, in)
	if err != nil {
		return nil, err
	}
	return x.Run(ctx, ts)
}

// Dimensions cuts an embedding to its first d values (a Matryoshka
// model's shorter embedding) and, when norm (the model normalises, or
// the request asks it), scales them to unit length again.
func Dimensions(v []float32, d int, norm bool) []float32 {
	if d <= 0 || d >= len(v) {
		return v
	}
	out := append([]float32(nil), v[:d]...)
	if norm {
		normalize(out)
	}
	return out
}
