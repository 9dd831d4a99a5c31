package tei

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport"
)

// parseInputs reads inputs: a string, token ids, or a list of either
// (all texts or all ids).
func parseInputs(raw json.RawMessage) (codec.TextInput, error) {
	in := codec.TextInput{Name: "inputs"}
	if !present(raw) {
		return in, invalid("Failed to deserialize the JSON body: missing field `inputs`")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		in.Texts, in.Single = []string{s}, true
		return in, checkTexts(in.Texts, true)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return in, invalid("Failed to deserialize the JSON body: `inputs`: expected a string, token ids, or a list of either, got %s", transport.Quote(string(raw)))
	}
	if len(items) == 0 {
		return in, empty("`inputs` cannot be empty")
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) == nil {
		in.IDs, in.Single = [][]int64{ids}, true
		return in, nil
	}
	texts := make([]string, 0, len(items))
	lists := make([][]int64, 0, len(items))
	for i, it := range items {
		var t string
		var l []int64
		switch {
		case json.Unmarshal(it, &t) == nil:
			texts = append(texts, t)
		case json.Unmarshal(it, &l) == nil && len(l) > 0:
			lists = append(lists, l)
		default:
			return in, invalid("Failed to deserialize the JSON body: `inputs[%d]`: expected a string or a non-empty list of token ids, got %s", i, transport.Quote(string(it)))
		}
	}
	if len(texts) > 0 && len(lists) > 0 {
		return in, invalid("Failed to deserialize the JSON body: `inputs` mixes texts and token ids: send one or the other")
	}
	if len(lists) > 0 {
		in.IDs = lists
		return in, nil
	}
	in.Texts = texts
	return in, checkTexts(texts, false)
}

// checkTexts refuses an empty text: 400 Empty.
func checkTexts(texts []string, single bool) error {
	for i, t := range texts {
		if t == "" {
			if single {
				return empty("`inputs` cannot be empty")
			}
			return empty("`inputs[%d]` cannot be empty", i)
		}
	}
	return nil
}

// truncation reads truncate and truncation_direction into in.
func truncation(m map[string]json.RawMessage, in *codec.TextInput) error {
	if present(m["truncate"]) {
		var t bool
		if err := field(m, "truncate", &t, "a boolean"); err != nil {
			return err
		}
		in.Truncate = &t
	}
	var dir string
	if err := field(m, "truncation_direction", &dir, "\"Left\" or \"Right\""); err != nil {
		return err
	}
	switch dir {
	case "", "Right", "right":
		in.Direction = "right"
	case "Left", "left":
		in.Direction = "left"
	default:
		return invalid("Failed to deserialize the JSON body: `truncation_direction`: unknown variant `%s`, expected `Left` or `Right`", transport.Quote(dir))
	}
	return nil
}

// noPrompts refuses prompt_name: the model has no prompts.
func noPrompts(m map[string]json.RawMessage) error {
	if present(m["prompt_name"]) {
		return &apiError{Status: http.StatusRequestEntityTooLarge, Type: ErrValidation, Message: "`prompt_name` is set but the model has no prompts"}
	}
	return nil
}

// embed serves POST /embed: {"inputs", "normalize", "truncate",
// "truncation_direction", "dimensions"}, answered [[...], ...].
func (h *Handler) embed(w http.ResponseWriter, _ *http.Request, q *transport.Inference, x *codec.Text, body []byte) error {
	m, err := fields(body, "inputs", "normalize", "truncate", "truncation_direction", "prompt_name", "dimensions")
	if err != nil {
		return err
	}
	in, err := parseInputs(m["inputs"])
	if err != nil {
		return err
	}
	norm, dims := true, 0
	if err := field(m, "normalize", &norm, "a boolean"); err != nil {
		return err
	}
	if err := field(m, "dimensions", &dims, "an integer"); err != nil {
		return err
	}
	if err := firstErr(truncation(m, &in), noPrompts(m)); err != nil {
		return err
	}
	if x.Task != config.TaskEmbedding {
		return &apiError{Status: http.StatusBadRequest, Type: ErrValidation, Message: "The model is a " + x.Task + " model: it answers " + x.Answer() + ", not embeddings"}
	}
	if present(m["dimensions"]) && (dims < 1 || int64(dims) > x.Hidden) {
		return &apiError{Status: http.StatusRequestEntityTooLarge, Type: ErrValidation, Message: "`dimensions` " + strconv.Itoa(dims) + " is out of range: the model's embeddings have " + strconv.FormatInt(x.Hidden, 10) + " dimensions"}
	}
	if err := q.ReserveBody(int64(len(body)), int64(len(in.Texts)+len(in.IDs))); err != nil {
		return err
	}
	ans, err := run(q, x, in)
	if err != nil {
		return err
	}
	vs := ans.Pooled()
	if norm {
		vs = ans.Normalized()
	}
	out := append(body[:0], '[')
	for i, v := range vs {
		if i > 0 {
			out = append(out, ',')
		}
		out = tensorjson.AppendFloat32Array(out, codec.Dimensions(v, dims, norm))
	}
	writeBody(w, append(out, ']'))
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// run tokenizes and runs a request's texts.
func run(q *transport.Inference, x *codec.Text, in codec.TextInput) (*codec.Answers, error) {
	ts, err := x.Tokenize(q.Ctx, in)
	if err != nil {
		return nil, err
	}
	return x.Run(q.Ctx, ts)
}

// rerank serves POST /rerank: {"query", "texts", "truncate",
// "truncation_direction", "raw_scores", "return_text"}, answered
// [{"index", "score", "text"?}], best first.
func (h *Handler) rerank(w http.ResponseWriter, _ *http.Request, q *transport.Inference, x *codec.Text, body []byte) error {
	m, err := fields(body, "query", "texts", "truncate", "truncation_direction", "raw_scores", "return_text")
	if err != nil {
		return err
	}
	var query string
	var texts []string
	var raw, withText bool
	if !present(m["query"]) || !present(m["texts"]) {
		return invalid("Failed to deserialize the JSON body: missing field `query` or `texts`")
	}
	if err := firstErr(field(m, "query", &query, "a string"), field(m, "texts", &texts, "a list of strings"),
		field(m, "raw_scores", &raw, "a boolean"), field(m, "return_text", &withText, "a boolean")); err != nil {
		return err
	}
	if query == "" {
		return empty("`query` cannot be empty")
	}
	if len(texts) == 0 {
		return empty("`texts` cannot be empty")
	}
	for i, t := range texts {
		if t == "" {
			return empty("`texts[%d]` cannot be empty", i)
		}
	}
	in := codec.TextInput{Name: "texts"}
	if err := truncation(m, &in); err != nil {
		return err
	}
	if err := q.ReserveBody(int64(len(body)), int64(len(texts))); err != nil {
		return err
	}
	ans, err := x.Rerank(q.Ctx, query, texts, in)
	if err != nil {
		return err
	}
	scores, err := ans.Relevance(raw)
	if err != nil {
		return &core.InferenceError{Err: err}
	}
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	out := append(body[:0], '[')
	for k, i := range order {
		if k > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"index":`...)
		out = strconv.AppendInt(out, int64(i), 10)
		out = append(out, `,"score":`...)
		out = tensorjson.AppendFloat64(out, scores[i])
		if withText {
			t, _ := json.Marshal(texts[i])
			out = append(append(out, `,"text":`...), t...)
		}
		out = append(out, '}')
	}
	writeBody(w, append(out, ']'))
	return nil
}

// token is one token as /tokenize answers it: start and stop in
// characters of the input, null for a special token.
type token struct {
	ID      int64  `json:"id"`
	Text    string `json:"text"`
	Special bool   `json:"special"`
	Start   *int   `json:"start"`
	Stop    *int   `json:"stop"`
}

// tokenize serves POST /tokenize: {"inputs", "add_special_tokens"},
// answered [[{"id", "text", "special", "start", "stop"}], ...].
func (h *Handler) tokenize(w http.ResponseWriter, _ *http.Request, q *transport.Inference, x *codec.Text, body []byte) error {
	m, err := fields(body, "inputs", "add_special_tokens", "prompt_name")
	if err != nil {
		return err
	}
	in, err := parseInputs(m["inputs"])
	if err != nil {
		return err
	}
	if in.IDs != nil {
		return invalid("Failed to deserialize the JSON body: `inputs`: expected a string or a list of strings")
	}
	add := true
	if err := firstErr(field(m, "add_special_tokens", &add, "a boolean"), noPrompts(m)); err != nil {
		return err
	}
	in.Whole, in.NoSpecial = true, !add
	if err := q.ReserveBody(int64(len(body)), int64(len(in.Texts))); err != nil {
		return err
	}
	ts, err := x.Tokenize(q.Ctx, in)
	if err != nil {
		return err
	}
	out := make([][]token, ts.Len())
	for i := range out {
		e := ts.Encoding(i)
		chars := []rune(in.Texts[i])
		out[i] = make([]token, e.Len())
		for j, id := range e.IDs {
			t := token{ID: id, Special: e.SpecialTokensMask[j] == 1, Text: e.Tokens[j]}
			if !t.Special {
				s, end := e.Offsets[j][0], e.Offsets[j][1]
				s, end = min(max(s, 0), len(chars)), min(max(end, s), len(chars))
				t.Start, t.Stop, t.Text = &s, &end, string(chars[s:end])
			}
			out[i][j] = t
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// decode serves POST /decode: {"ids", "skip_special_tokens"}, answered
// ["...", ...].
func (h *Handler) decode(w http.ResponseWriter, _ *http.Request, q *transport.Inference, x *codec.Text, body []byte) error {
	m, err := fields(body, "ids", "skip_special_tokens")
	if err != nil {
		return err
	}
	if !present(m["ids"]) {
		return invalid("Failed to deserialize the JSON body: missing field `ids`")
	}
	var lists [][]int64
	var one []int64
	if json.Unmarshal(m["ids"], &one) == nil {
		lists = [][]int64{one}
	} else if err := field(m, "ids", &lists, "token ids or a list of them"); err != nil {
		return err
	}
	skip := true
	if err := field(m, "skip_special_tokens", &skip, "a boolean"); err != nil {
		return err
	}
	if len(lists) == 0 || len(lists[0]) == 0 {
		return empty("`ids` cannot be empty")
	}
	if err := x.CountTexts(len(lists)); err != nil {
		return err
	}
	if err := q.ReserveBody(int64(len(body)), int64(len(body)/2)); err != nil {
		return err
	}
	tok := x.TokenizerFull()
	out := make([]string, len(lists))
	for i, ids := range lists {
		s, err := tok.Decode(ids, skip)
		if err != nil {
			return &apiError{Status: http.StatusUnprocessableEntity, Type: ErrTokenizer, Message: "`ids[" + strconv.Itoa(i) + "]`: " + err.Error()}
		}
		out[i] = s
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func writeBody(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
