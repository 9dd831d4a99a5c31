package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport"
)

// fields reads a JSON object's fields, refusing anything but an object
// and a field not among known, as OpenAI's API does.
func fields(body []byte, known ...string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return nil, invalid("", "The body is not a JSON object: %s", jsonProblem(err))
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, invalid(unknown[0], "Unrecognized request argument supplied: %s (this route takes %v)", transport.Quote(unknown[0]), known)
	}
	return m, nil
}

func jsonProblem(err error) string {
	if err == nil {
		return "null"
	}
	return err.Error()
}

// present reports whether a field was sent with a value (null is none).
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// decodeField decodes field name's raw value into v, or refuses it.
func decodeField(name string, raw json.RawMessage, v any, want string) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return invalid(name, "Invalid type for '%s': expected %s, got %s", name, want, transport.Quote(string(raw)))
	}
	return nil
}

// embeddingsRequest is POST /v1/embeddings' body, decoded.
type embeddingsRequest struct {
	in      codec.TextInput
	model   string
	base64  bool
	dims    int
	hasDims bool
}

// parseEmbeddings decodes the body.
func parseEmbeddings(body []byte) (*embeddingsRequest, error) {
	m, err := fields(body, "input", "model", "encoding_format", "dimensions", "user")
	if err != nil {
		return nil, err
	}
	req := &embeddingsRequest{}
	if present(m["model"]) {
		if err := decodeField("model", m["model"], &req.model, "a string"); err != nil {
			return nil, err
		}
	}
	if present(m["encoding_format"]) {
		var f string
		if err := decodeField("encoding_format", m["encoding_format"], &f, "a string"); err != nil {
			return nil, err
		}
		switch f {
		case "float":
		case "base64":
			req.base64 = true
		default:
			return nil, invalid("encoding_format", "Invalid value for 'encoding_format': '%s': expected 'float' or 'base64'", transport.Quote(f))
		}
	}
	if present(m["dimensions"]) {
		if err := decodeField("dimensions", m["dimensions"], &req.dims, "an integer"); err != nil {
			return nil, err
		}
		req.hasDims = true
	}
	if present(m["user"]) {
		var u string
		if err := decodeField("user", m["user"], &u, "a string"); err != nil {
			return nil, err
		}
	}
	if !present(m["input"]) {
		return nil, invalid("input", "'input' is a required property: send a text, a list of texts, a list of token ids or a list of such lists")
	}
	if req.in, err = parseInput(m["input"]); err != nil {
		return nil, err
	}
	return req, nil
}

// parseInput reads input: a string, a list of strings, a list of token
// ids, or a list of lists of token ids.
func parseInput(raw json.RawMessage) (codec.TextInput, error) {
	in := codec.TextInput{Name: "input"}
	switch raw[0] {
	case '"':
		var s string
		if err := decodeField("input", raw, &s, "a string"); err != nil {
			return in, err
		}
		in.Texts, in.Single = []string{s}, true
		return in, checkTexts(in.Texts, true)
	case '[':
	default:
		return in, invalid("input", "Invalid type for 'input': expected a string, a list of strings, a list of token ids or a list of such lists, got %s", transport.Quote(string(raw)))
	}
	var items []json.RawMessage
	if err := decodeField("input", raw, &items, "a list"); err != nil {
		return in, err
	}
	if len(items) == 0 {
		return in, invalid("input", "'input' is an empty list: send a text or a list of texts")
	}
	switch items[0][0] {
	case '"':
		in.Texts = make([]string, len(items))
		for i, it := range items {
			if err := json.Unmarshal(it, &in.Texts[i]); err != nil || it[0] != '"' {
				return in, invalid("input", "Invalid type for 'input[%d]': expected a string, as the items before it, got %s", i, transport.Quote(string(it)))
			}
		}
		return in, checkTexts(in.Texts, false)
	case '[':
		in.IDs = make([][]int64, len(items))
		for i, it := range items {
			ids, err := parseIDs(it, fmt.Sprintf("input[%d]", i))
			if err != nil {
				return in, err
			}
			in.IDs[i] = ids
		}
		return in, nil
	}
	ids, err := parseIDs(raw, "input")
	in.IDs, in.Single = [][]int64{ids}, true
	return in, err
}

// parseIDs reads a list of token ids.
func parseIDs(raw json.RawMessage, name string) ([]int64, error) {
	var ids []int64
	if err := json.Unmarshal(raw, &ids); err != nil || raw[0] != '[' {
		return nil, invalid("input", "Invalid type for '%s': expected a list of token ids (integers), got %s", name, transport.Quote(string(raw)))
	}
	if len(ids) == 0 {
		return nil, invalid("input", "'%s' is an empty list of token ids", name)
	}
	return ids, nil
}

// checkTexts refuses an empty text, as OpenAI's API does.
func checkTexts(texts []string, single bool) error {
	for i, s := range texts {
		if s == "" {
			if single {
				return invalid("input", "'input' is an empty string: send a text")
			}
			return invalid("input", "'input[%d]' is an empty string: send a text", i)
		}
	}
	return nil
}

// serveEmbeddings answers POST /v1/embeddings.
func (h *Handler) serveEmbeddings(w http.ResponseWriter, r *http.Request, q *transport.Inference, v *view, body []byte) core.Outcome {
	req, err := parseEmbeddings(body)
	if err != nil {
		return h.fail(w, r, err)
	}
	if err := h.checkModel(req.model); err != nil {
		return h.fail(w, r, err)
	}
	x := v.x
	if x.Task != config.TaskEmbedding {
		return h.fail(w, r, invalid("model", "The model is a %s model: it answers %s, not embeddings", x.Task, x.Answer()))
	}
	if req.hasDims && (req.dims < 1 || int64(req.dims) > x.Hidden) {
		return h.fail(w, r, invalid("dimensions", "Invalid value for 'dimensions': %d: the model's embeddings have %d dimensions; send 1 to %d", req.dims, x.Hidden, x.Hidden))
	}
	n := len(req.in.Texts) + len(req.in.IDs)
	if err := q.ReserveBody(int64(len(body)), int64(n)); err != nil {
		return h.fail(w, r, err)
	}
	ts, err := x.Tokenize(q.Ctx, req.in)
	if err != nil {
		return h.fail(w, r, err)
	}
	ans, err := x.Run(q.Ctx, ts)
	if err != nil {
		return h.fail(w, r, err)
	}
	out := appendEmbeddings(body[:0], x, ans, req, h.opts.Model.Name())
	writeBody(w, http.StatusOK, out)
	return core.OutcomeSuccess
}

// appendEmbeddings writes the answer: {"object": "list", "data": [...],
// "model", "usage"}.
func appendEmbeddings(dst []byte, x *codec.Text, ans *codec.Answers, req *embeddingsRequest, model string) []byte {
	dst = append(dst, `{"object":"list","data":[`...)
	var raw []byte
	for i, e := range ans.Embeddings() {
		if req.hasDims {
			e = codec.Dimensions(e, req.dims, x.Normalize)
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"object":"embedding","index":`...)
		dst = strconv.AppendInt(dst, int64(i), 10)
		dst = append(dst, `,"embedding":`...)
		if req.base64 {
			raw = raw[:0]
			for _, f := range e {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
			}
			dst = append(dst, '"')
			dst = base64.StdEncoding.AppendEncode(dst, raw)
			dst = append(dst, '"')
		} else {
			dst = tensorjson.AppendFloat32Array(dst, e)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `],"model":`...)
	dst = strconv.AppendQuote(dst, model)
	dst = append(dst, `,"usage":{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, ans.Tokens(), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, ans.Tokens(), 10)
	return append(dst, `}}`...)
}
