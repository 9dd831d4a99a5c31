package codec

import (
	"encoding/json"
	"fmt"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec/decode"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

// Answer is the name of what a text request answers: embedding, labels
// or entities.
func (x *Text) Answer() string {
	switch x.Task {
	case config.TaskClassification:
		return OutputLabels
	case config.TaskTokens:
		return OutputEntities
	}
	return OutputEmbedding
}

// TopK is how many labels classification answers per text (-1 when the
// model's classes are unknown until a run and every label is asked for;
// 0 for the other tasks).
func (x *Text) TopK() int {
	if x.Task != config.TaskClassification {
		return 0
	}
	if x.classify.TopK == allLabels {
		return -1
	}
	return x.classify.TopK
}

// Activation names what turns the logits into scores: softmax, sigmoid
// or none.
func (x *Text) Activation() string {
	switch {
	case x.classify == nil:
		return ""
	case x.classify.Softmax:
		return config.ActivationSoftmax
	case x.classify.Sigmoid:
		return config.ActivationSigmoid
	}
	return config.ActivationNone
}

// allLabels is the classifier's TopK when every label is asked for and
// the number of classes is unknown (the decoder caps it at the classes).
const allLabels = 1 << 30

// answerOf reads the task's output from a run's result.
func (x *Text) answerOf(res core.Result) (*tensor.Tensor, error) {
	t, err := res.Tensor(x.Output)
	if err != nil {
		return nil, fmt.Errorf("output %d: %w", x.Output, err)
	}
	return t, nil
}

// Classify reads the labels of each text of the batch from the logits of
// its run, [N, C], best first.
func (x *Text) Classify(b *Batch, logits *tensor.Tensor) ([][]decode.Class, error) {
	if len(logits.Shape) != 2 || logits.Shape[0] != int64(b.n) {
		return nil, fmt.Errorf("classification: the logits are %s %s, want [%d, classes]", logits.DType, tensor.FormatShape(logits.Shape), b.n)
	}
	return x.classify.Decode(logits)
}

// Entities reads the entities of each text of the batch from the logits
// of its run, [N, S, C]: each token's best label (the classifier's top
// class), grouped by decode.Entities, with offsets in characters of the
// text.
func (x *Text) Entities(b *Batch, logits *tensor.Tensor) ([][]decode.Entity, error) {
	if len(logits.Shape) != 3 || logits.Shape[0] != int64(b.n) || logits.Shape[1] != int64(b.seq) {
		return nil, fmt.Errorf("token classification: the logits are %s %s, want [%d, %d, classes]", logits.DType, tensor.FormatShape(logits.Shape), b.n, b.seq)
	}
	flat := &tensor.Tensor{DType: logits.DType, Shape: []int64{int64(b.n * b.seq), logits.Shape[2]}, Data: logits.Data}
	best, err := x.classify.Decode(flat)
	if err != nil {
		return nil, fmt.Errorf("token classification: %w", err)
	}
	out := make([][]decode.Entity, b.n)
	var pieces []decode.Piece
	for i := range b.n {
		pieces = pieces[:0]
		for j, o := range b.offsets[i] {
			if b.special[i][j] == 0 {
				pieces = append(pieces, decode.Piece{Start: o[0], End: o[1], Class: best[i*b.seq+j][0]})
			}
		}
		out[i] = decode.Entities(b.texts[i], pieces)
	}
	return out, nil
}

// AppendJSON appends the answer to a text request for the v1 API:
// {"embedding": [[...]]}, {"labels": [[{"label","index","score"}]]} or
// {"entities": [[{"entity","start","end","text","score"}]]}, one item per
// text.
func (x *Text) AppendJSON(dst []byte, res core.Result, b *Batch) ([]byte, error) {
	t, err := x.answerOf(res)
	if err != nil {
		return dst, err
	}
	dst = append(dst, `{"`...)
	dst = append(dst, x.Answer()...)
	dst = append(dst, `":`...)
	switch x.Task {
	case config.TaskClassification:
		items, err := x.Classify(b, t)
		if err != nil {
			return dst, err
		}
		dst = decode.AppendClassesJSON(dst, items)
	case config.TaskTokens:
		items, err := x.Entities(b, t)
		if err != nil {
			return dst, err
		}
		dst = decode.AppendEntitiesJSON(dst, items)
	default:
		emb, err := x.Embed(b, t)
		if err != nil {
			return dst, err
		}
		dst = tensorjson.AppendJSON(dst, emb)
	}
	return append(dst, '}'), nil
}

// Tensor is the answer to a text request as the Open Inference Protocol
// carries it: embedding FP32 [N, hidden]; labels BYTES [N, k], Triton's
// classification strings "score:index:label"; entities BYTES [N], each
// text's entities as a JSON array.
func (x *Text) Tensor(res core.Result, b *Batch) (*tensor.Tensor, error) {
	t, err := x.answerOf(res)
	if err != nil {
		return nil, err
	}
	switch x.Task {
	case config.TaskClassification:
		items, err := x.Classify(b, t)
		if err != nil {
			return nil, err
		}
		k := 0
		if len(items) > 0 {
			k = len(items[0])
		}
		return &tensor.Tensor{DType: tensor.String, Shape: []int64{int64(len(items)), int64(k)}, Data: decode.TritonClasses(items)}, nil
	case config.TaskTokens:
		items, err := x.Entities(b, t)
		if err != nil {
			return nil, err
		}
		out := make([]string, len(items))
		for i, item := range items {
			out[i] = string(decode.AppendEntityListJSON(nil, item))
		}
		return &tensor.Tensor{DType: tensor.String, Shape: []int64{int64(len(out))}, Data: out}, nil
	}
	return x.Embed(b, t)
}

// AnswerShape is the answer's shape in the Open Inference Protocol's
// metadata, and its element type.
func (x *Text) AnswerShape() ([]int64, tensor.DType) {
	switch x.Task {
	case config.TaskClassification:
		return []int64{-1, int64(x.TopK())}, tensor.String
	case config.TaskTokens:
		return []int64{-1}, tensor.String
	}
	return []int64{-1, x.Hidden}, tensor.Float32
}

// hfConfig is what svc reads of a Hugging Face config.json.
type hfConfig struct {
	Architectures []string          `json:"architectures"`
	ID2Label      map[string]string `json:"id2label"`
	ProblemType   string            `json:"problem_type"`
	// What the id inputs may hold (ids.go).
	ModelType     looseString `json:"model_type"`
	VocabSize     looseInt    `json:"vocab_size"`
	TypeVocabSize looseInt    `json:"type_vocab_size"`
	PadTokenID    looseInt    `json:"pad_token_id"`
}

// labels is id2label as a list by index, a missing index labelled with
// its decimal form; nil when id2label is empty or its keys are not
// indices.
func (c *hfConfig) labels() []string {
	if c == nil || len(c.ID2Label) == 0 {
		return nil
	}
	labels := make([]string, len(c.ID2Label))
	seen := 0
	for k, v := range c.ID2Label {
		var i int
		if _, err := fmt.Sscanf(k, "%d", &i); err != nil || i < 0 || i >= len(labels) || fmt.Sprint(i) != k {
			return nil
		}
		labels[i] = v
		seen++
	}
	if seen != len(labels) {
		return nil
	}
	return labels
}

// unmarshalHF reads config.json's data.
func unmarshalHF(data []byte) (*hfConfig, error) {
	var c hfConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	return &c, nil
}
