package oip

import (
	"context"
	"errors"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/tensor"
)

// textView is what the view holds of a model with text inputs: the
// inputs text and text_pair, BYTES [N], after the model's own (whose id
// inputs become optional: a request sends text or ids), and the answer
// to text after the model's outputs: embedding, FP32 [N, hidden]; labels,
// BYTES [N, k]; entities, BYTES [N].
type textView struct {
	x *codec.Text
	// models is the model's input count; text and pair the indices of
	// text and text_pair in the view's specs.
	models, text, pair int
	// answerAt is the index of the text's answer in the view's outputs;
	// answer is what a text request answers by default.
	answerAt int
	answer   []RequestedOutput
}

// addText adds the text inputs to the view (addAnswer the answer, once
// the model's outputs are in).
func (v *View) addText(x *codec.Text, outputs int) {
	t := &textView{x: x, models: len(v.specs), text: len(v.specs), pair: len(v.specs) + 1, answerAt: outputs}
	for k := range v.specs {
		v.specs[k].Required = false
	}
	for _, name := range []string{codec.InputText, codec.InputTextPair} {
		v.specs = append(v.specs, tensor.Spec{Name: name, DType: tensor.String, Shape: []int64{-1}})
	}
	t.answer = []RequestedOutput{{Index: outputs}}
	v.text = t
}

// addAnswer adds the answer to text (embedding, labels or entities) to
// the view's outputs and metadata.
func (v *View) addAnswer() {
	shape, dt := v.text.x.AnswerShape()
	name := v.text.x.Answer()
	v.outputs = append(v.outputs, outputInfo{name: name, dtype: dt, modelType: dt, isTensor: true, kind: core.KindTensor})
	v.metaOutputs = append(v.metaOutputs, TensorMetadata{Name: name, Datatype: Datatype(dt), Shape: shape})
}

// texts makes a text request's id inputs from its texts, or checks that a
// request without text sends the model's required inputs.
func (v *View) texts(ctx context.Context, req *Request) error {
	t := v.text
	if t == nil {
		return nil
	}
	text, pair := req.inputs[t.text], req.inputs[t.pair]
	req.inputs = req.inputs[:t.models]
	defer func() { text.Recycle(); pair.Recycle() }()
	if text == nil {
		if pair != nil {
			return invalid("Input '%s' goes with '%s': send both", codec.InputTextPair, codec.InputText)
		}
		for k, s := range v.runner.Specs() {
			if s.Required && req.inputs[k] == nil {
				return invalid("Missing required input: '%s' (or send '%s')", s.Name, codec.InputText)
			}
		}
		return checkIDs(t.x, req)
	}
	for k, in := range req.inputs {
		if in != nil {
			return invalid("Input '%s' and '%s': send text or the model's inputs, not both", codec.InputText, v.specs[k].Name)
		}
	}
	texts := append([]string(nil), text.Data.([]string)...)
	var pairs []string
	if pair != nil {
		pairs = append([]string(nil), pair.Data.([]string)...)
	}
	if req.outputs == nil || len(req.outputs) == 1 && req.outputs[0].Index == t.answerAt {
		// The answer alone: the texts run in batches of
		// text.max_batch_tokens, with other requests' texts.
		ts, err := t.x.Tokenize(ctx, codec.TextInput{Texts: texts, Pairs: pairs})
		if err == nil {
			req.answers, err = t.x.Run(ctx, ts)
		}
		return inputError(err)
	}
	b, err := t.x.Encode(ctx, texts, pairs, false)
	if err != nil {
		return inputError(err)
	}
	copy(req.inputs, b.Inputs)
	req.text = b
	return nil
}

// inputError is err, a refused input made the protocol's 400.
func inputError(err error) error {
	var ie *core.InputError
	if errors.As(err, &ie) {
		return invalid("%s", ie.Message)
	}
	return err
}

// answer answers the text output (embedding, labels or entities) of a
// text request.
func (v *View) answer(res core.Result, req *Request) (*tensor.Tensor, error) {
	if req.answers != nil {
		return req.answers.Tensor()
	}
	if req.text == nil {
		return nil, invalid("Output '%s' answers a request that sends '%s'", v.text.x.Answer(), codec.InputText)
	}
	return v.text.x.Tensor(res, req.text)
}
