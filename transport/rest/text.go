package rest

import (
	"encoding/json"
	"fmt"
	"net/http"

	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport"
)

// textSpecs are the inputs of a text body: {"text": ..., "text_pair": ...}.
var textSpecs = []tensor.Spec{
	{Name: codec.InputText, DType: tensor.String, Required: true},
	{Name: codec.InputTextPair, DType: tensor.String},
}

// textBody reports whether a JSON body, scanned as sc, sends text (a
// "text" or "text_pair" key) rather than the model's inputs, for a model
// with text inputs (x non-nil); a text input that is neither a string nor
// a list is refused here, named. A body whose keys hold escapes is read
// to find its keys' names.
func textBody(sc *tensorjson.Scan, body []byte, x *codec.Text) (bool, error) {
	if x == nil {
		return false, nil
	}
	first := map[string]byte{}
	if sc.Escaped {
		var keys map[string]json.RawMessage
		if json.Unmarshal(body, &keys) != nil {
			return false, nil
		}
		for k, v := range keys {
			if len(v) > 0 {
				first[k] = v[0]
			}
		}
	} else {
		for _, k := range sc.Keys {
			first[string(k.Key)] = k.First
		}
	}
	found := false
	for _, name := range []string{codec.InputText, codec.InputTextPair} {
		c, ok := first[name]
		if !ok {
			continue
		}
		found = true
		if c != '"' && c != '[' {
			return true, &core.InputError{Input: name, Message: fmt.Sprintf("Input '%s': expected a string or a list of strings, got %s", name, jsonKind(c))}
		}
	}
	return found, nil
}

// jsonKind names the JSON kind of a value from its first byte.
func jsonKind(c byte) string {
	switch c {
	case '{':
		return "an object"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// textReq is a text body decoded: its texts to run in batches (in), or,
// for a raw answer, their one run's inputs (batch).
type textReq struct {
	in    *codec.TextInput
	batch *codec.Batch
}

// textInputs decodes a text body.
func textInputs(body []byte, x *codec.Text, maxString int, values int64) (*codec.TextInput, error) {
	ts, err := decodeRequest(body, textSpecs, maxString, values, nil)
	if err != nil {
		return nil, err
	}
	defer tensor.RecycleAll(ts)
	text, pair := ts[0], ts[1]
	if len(text.Shape) > 1 {
		return nil, &core.InputError{Input: codec.InputText, Message: fmt.Sprintf("Input '%s': send a text or a list of texts, not a nested list", codec.InputText)}
	}
	texts, _ := text.Data.([]string)
	var pairs []string
	if pair != nil {
		if len(pair.Shape) != len(text.Shape) {
			return nil, &core.InputError{Input: codec.InputTextPair, Message: fmt.Sprintf("Input '%s': send one text per text of '%s' (a text for a text, a list for a list)", codec.InputTextPair, codec.InputText)}
		}
		pairs, _ = pair.Data.([]string)
		pairs = append([]string(nil), pairs...)
	}
	return &codec.TextInput{Texts: append([]string(nil), texts...), Pairs: pairs, Single: len(text.Shape) == 0}, nil
}

// serveTexts answers a text body: its texts tokenized, run in batches of
// text.max_batch_tokens, their answers in its order.
func (h *Handler) serveTexts(w http.ResponseWriter, q *transport.Inference, v *view, in *codec.TextInput, body []byte) core.Outcome {
	x := v.media.Text()
	ts, err := x.Tokenize(q.Ctx, *in)
	if err != nil {
		h.writeErr(w, err)
		return decodeOutcome(err)
	}
	ans, err := x.Run(q.Ctx, ts)
	if err != nil {
		h.writeErr(w, err)
		return core.OutcomeOf(err)
	}
	defer core.TraceStep(q.Ctx, core.StepEncode, core.TraceStart(q.Ctx), 0)
	out, err := ans.AppendJSON(body[:0])
	if err != nil {
		h.log.Error("encode outputs", zap.Error(err), zap.String("request_id", w.Header().Get(transport.RequestIDHeader)))
		WriteError(w, http.StatusInternalServerError, "Inference failed: "+err.Error())
		return core.OutcomeInference
	}
	writeJSON(w, out)
	return core.OutcomeSuccess
}

// addTextInfo says in /info what text does: input_ids may give way to
// text; the inputs text and text_pair, and the answer to text (embedding,
// labels or entities) follow the model's own.
func addTextInfo(out *Info, x *codec.Text) {
	for k := range out.Inputs {
		if out.Inputs[k].Name == "input_ids" {
			out.Inputs[k].Description = joinDescription(out.Inputs[k].Description, "(or send \"text\" in its place: "+x.Describe()+")")
		}
	}
	batch := []int64{-1}
	out.Inputs = append(out.Inputs,
		InputInfo{Name: codec.InputText, Type: "string", Description: "A text, or a list of texts, in place of the id inputs: " + x.Describe() + ".", Shape: &batch},
		InputInfo{Name: codec.InputTextPair, Type: "string", Description: "The second text of each pair, one per text (optional).", Shape: &batch})
	o := OutputInfo{Name: x.Answer(), Labels: x.Labels, Description: "The answer to text (" + x.Task + "): " + textAnswerDescription(x) + "."}
	shape, dt := x.AnswerShape()
	o.Type, o.Shape = dt.String(), &shape
	out.Outputs = append(out.Outputs, o)
}

// textAnswerDescription says what the answer to text holds.
func textAnswerDescription(x *codec.Text) string {
	switch x.Answer() {
	case codec.OutputLabels:
		return fmt.Sprintf("per text, its labels best first: {\"label\", \"index\", \"score\"} (%s scores)", x.Activation())
	case codec.OutputEntities:
		return "per text, its entities: {\"entity\", \"start\", \"end\", \"text\", \"score\"}, start and end in characters (Unicode code points) of the text"
	}
	return "per text, its embedding"
}
