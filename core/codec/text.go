package codec

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/codec/decode"
	"github.com/svc-dev/svc/core/codec/tokenizer"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/sched"
	"github.com/svc-dev/svc/core/tensor"
)

// The names of the text inputs and of the answers to text (the
// embeddings, the labels of classification, the entities of token
// classification), in every protocol.
const (
	InputText       = "text"
	InputTextPair   = "text_pair"
	OutputEmbedding = "embedding"
	OutputLabels    = "labels"
	OutputEntities  = "entities"
)

// Text is a model that takes token ids served from text: the tokenizer
// fills its id inputs, and the task says what its output means: hidden
// states pooled into one embedding per text, a classifier's logits read
// as labels and scores, or a token classifier's as entities.
type Text struct {
	// Task is config.TaskEmbedding, TaskClassification or TaskTokens.
	Task string
	// lim bounds the texts of one request (MaxTexts, MaxTokens).
	lim config.Limits
	// tok cuts a text longer than the maximum length as the
	// tokenizer.json says (the model's truncation); left and right cut
	// from the start or the end, as a request may ask; full cuts nothing.
	tok, left, right, full *tokenizer.Tokenizer
	// MaxBatchTokens bounds one run: its texts × the tokens of the
	// longest (text.max_batch_tokens); queue forms the runs.
	MaxBatchTokens int
	queue          *sched.Tokens
	runner         core.Runner
	observe        func(TextBatch)
	// ids, mask and types are the indices of input_ids, attention_mask
	// and token_type_ids among the model's inputs (-1: absent).
	ids, mask, types int
	dtypes           [3]tensor.DType
	nInputs          int
	// padID and padType fill the padding of a batch: the tokenizer.json's
	// padding (tok has it stripped, as the batch pads itself).
	padID, padType int64
	// bounds are what the id inputs may hold when a client sends them.
	bounds idBounds
	// MaxLength caps a text's tokens (0: no cap); Truncate cuts a longer
	// text, else it is refused.
	MaxLength int
	Truncate  bool
	// Pooling is mean, cls or max; Normalize scales to unit length.
	Pooling   string
	Normalize bool
	// Output is the index of the output the task reads: hidden states
	// [N, S, H] (Hidden is H), logits [N, C] or [N, S, C] (Hidden is C);
	// -1 when unknown until a run.
	Output int
	Hidden int64
	// Tokenizer is the tokenizer.json's path; From says where the pooling
	// settings came from (the labels and activation for the other tasks).
	Tokenizer string
	From      string
	// classify reads the logits of classification and token
	// classification; Labels are its labels.
	classify *decode.Classifier
	Labels   []string
}

// Batch is a batch of texts made into the model's inputs, padded to the
// longest, with the attention mask pooling needs after the run (the
// inputs go back to the pools then).
type Batch struct {
	// Inputs are the model's inputs, the id inputs filled.
	Inputs []*tensor.Tensor
	mask   []int64
	n, seq int
	single bool
	// texts, offsets and special are what token classification needs
	// after the run: each text, its tokens' character offsets and which
	// tokens are special.
	texts   []string
	offsets [][][2]int
	special [][]int64
}

// Single reports whether the client sent one text, not a list.
func (b *Batch) Single() bool { return b.single }

// Describe says in one line what the text inputs do, for /info and
// OpenAPI.
func (x *Text) Describe() string {
	switch x.Task {
	case config.TaskClassification:
		top := "every label"
		if k := x.TopK(); k > 0 {
			top = fmt.Sprintf("the top %d labels", k)
		}
		return fmt.Sprintf("text classification: text tokenized by %s (%s), %s per text with their scores, best first (%s)", x.Tokenizer, x.describeLength(), top, x.From)
	case config.TaskTokens:
		return fmt.Sprintf("token classification: text tokenized by %s (%s), the entities in each text with their character offsets (%s)", x.Tokenizer, x.describeLength(), x.From)
	}
	norm := ""
	if x.Normalize {
		norm = ", L2-normalised"
	}
	return fmt.Sprintf("sentence embeddings: text tokenized by %s (%s), %s pooling of the hidden states%s (%s)", x.Tokenizer, x.describeLength(), x.Pooling, norm, x.From)
}

// describeLength says how long a text may be.
func (x *Text) describeLength() string {
	trunc := "longer texts are refused"
	if x.Truncate {
		trunc = "longer texts are truncated"
	}
	if x.MaxLength == 0 {
		trunc = "no maximum length"
	} else {
		trunc = fmt.Sprintf("at most %d tokens, %s", x.MaxLength, trunc)
	}
	return trunc
}

// Encode tokenizes texts (and pairs, nil or one per text) into the model's
// inputs for one run, as a raw answer (the model's own outputs) needs:
// Tokenize's checks, and the texts padded together must fit one batch
// (text.max_batch_tokens). single says the client sent one text, not a
// list, so messages name no item. The ids' memory is reserved against
// the request's ticket (core/budget) before the batch is made.
func (x *Text) Encode(ctx context.Context, texts, pairs []string, single bool) (*Batch, error) {
	ts, err := x.Tokenize(ctx, TextInput{Texts: texts, Pairs: pairs, Single: single})
	if err != nil {
		return nil, err
	}
	longest := 0
	for _, e := range ts.encs {
		longest = max(longest, e.Len())
	}
	if cost := int64(len(ts.encs)) * int64(longest); cost > int64(x.MaxBatchTokens) {
		return nil, &core.LimitError{Key: keyBatchTokens, Message: fmt.Sprintf("Input '%s': %d texts padded to %d tokens are %d tokens, more than one run of the model takes (%d, %s): a raw answer is the outputs of one run; ask for the answer to text to have them split", InputText, len(ts.encs), longest, cost, x.MaxBatchTokens, keyBatchTokens)}
	}
	// input_ids, attention_mask, token_type_ids and the mask pooling keeps.
	if err := budget.Reserve(ctx, 4*8*int64(len(texts))*int64(longest), "for its token ids"); err != nil {
		return nil, err
	}
	return x.batch(ts.encs, single, texts), nil
}

// CountTexts refuses a request of n texts, if that is more than
// limits.max_texts: the protocols call it with what the request declares
// before they decode the texts, and Tokenize with the texts themselves.
func (x *Text) CountTexts(n int) error {
	if limit := x.lim.MaxTexts; limit > 0 && n > limit {
		return &core.LimitError{Key: "limits.max_texts", Message: fmt.Sprintf("Input '%s': %d texts, more than the %d one request may send (limits.max_texts)", InputText, n, limit)}
	}
	return nil
}

// batch pads the encodings to the longest, on the right; texts are the
// texts they are of (token classification reads its entities in them).
func (x *Text) batch(encs []tokenizer.Encoding, single bool, texts []string) *Batch {
	seq := 0
	for _, e := range encs {
		seq = max(seq, e.Len())
	}
	n := len(encs)
	ids, mask, types := make([]int64, n*seq), make([]int64, n*seq), make([]int64, n*seq)
	for i, e := range encs {
		row := i * seq
		for j := range seq {
			if j < e.Len() {
				ids[row+j], mask[row+j], types[row+j] = e.IDs[j], e.AttentionMask[j], e.TypeIDs[j]
			} else {
				ids[row+j], types[row+j] = x.padID, x.padType
			}
		}
	}
	b := &Batch{Inputs: make([]*tensor.Tensor, x.nInputs), mask: mask, n: n, seq: seq, single: single}
	if x.Task == config.TaskTokens {
		b.texts = texts
		b.offsets, b.special = make([][][2]int, n), make([][]int64, n)
		for i, e := range encs {
			b.offsets[i], b.special[i] = e.Offsets, e.SpecialTokensMask
		}
	}
	shape := []int64{int64(n), int64(seq)}
	for k, pair := range []struct {
		at   int
		data []int64
	}{{x.ids, ids}, {x.mask, slices.Clone(mask)}, {x.types, types}} {
		if pair.at >= 0 {
			b.Inputs[pair.at] = idTensor(x.dtypes[k], shape, pair.data)
		}
	}
	return b
}

func idTensor(dt tensor.DType, shape []int64, data []int64) *tensor.Tensor {
	if dt == tensor.Int32 {
		d := make([]int32, len(data))
		for i, v := range data {
			d[i] = int32(v)
		}
		return &tensor.Tensor{DType: dt, Shape: shape, Data: d}
	}
	return &tensor.Tensor{DType: tensor.Int64, Shape: shape, Data: data}
}

// Embed pools the hidden states of the batch's run, [N, S, H] float32,
// into its embeddings, [N, H].
func (x *Text) Embed(b *Batch, hidden *tensor.Tensor) (*tensor.Tensor, error) {
	return x.embed(b, hidden, x.Normalize)
}

// embed is Embed, normalising when norm.
func (x *Text) embed(b *Batch, hidden *tensor.Tensor, norm bool) (*tensor.Tensor, error) {
	h, ok := hidden.Data.([]float32)
	if !ok || len(hidden.Shape) != 3 || hidden.Shape[0] != int64(b.n) || hidden.Shape[1] != int64(b.seq) {
		return nil, fmt.Errorf("embedding: the hidden states are %s %s, want float32 [%d, %d, H]", hidden.DType, tensor.FormatShape(hidden.Shape), b.n, b.seq)
	}
	dim := int(hidden.Shape[2])
	out := make([]float32, b.n*dim)
	for i := range b.n {
		pool(out[i*dim:(i+1)*dim], h[i*b.seq*dim:(i+1)*b.seq*dim], b.mask[i*b.seq:(i+1)*b.seq], x.Pooling)
		if norm {
			normalize(out[i*dim : (i+1)*dim])
		}
	}
	return &tensor.Tensor{DType: tensor.Float32, Shape: []int64{int64(b.n), int64(dim)}, Data: out}, nil
}

// inputList names the model's inputs, for messages.
func specNames(specs []tensor.Spec) string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = "'" + s.Name + "'"
	}
	return strings.Join(names, ", ")
}

func containsFold(s, sub string) bool { return strings.Contains(strings.ToLower(s), sub) }
