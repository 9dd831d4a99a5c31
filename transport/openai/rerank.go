package openai

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport"
)

// rerankRequest is POST /v1/rerank's body (Cohere's and Jina's), decoded.
type rerankRequest struct {
	model, query string
	docs         []string
	topN         int
	returnDocs   bool
}

// parseRerank decodes the body: query, documents (strings or {"text"}),
// top_n, return_documents, model.
func parseRerank(body []byte) (*rerankRequest, error) {
	m, err := fields(body, "model", "query", "documents", "top_n", "return_documents")
	if err != nil {
		return nil, err
	}
	req := &rerankRequest{topN: -1}
	if present(m["model"]) {
		if err := decodeField("model", m["model"], &req.model, "a string"); err != nil {
			return nil, err
		}
	}
	if !present(m["query"]) {
		return nil, invalid("query", "'query' is a required property: send the text to rank the documents against")
	}
	if err := decodeField("query", m["query"], &req.query, "a string"); err != nil {
		return nil, err
	}
	if req.query == "" {
		return nil, invalid("query", "'query' is an empty string: send a text")
	}
	if !present(m["documents"]) {
		return nil, invalid("documents", "'documents' is a required property: send a list of texts, or of {\"text\": ...}")
	}
	if req.docs, err = parseDocuments(m["documents"]); err != nil {
		return nil, err
	}
	if present(m["top_n"]) {
		if err := decodeField("top_n", m["top_n"], &req.topN, "an integer"); err != nil {
			return nil, err
		}
		if req.topN < 1 {
			return nil, invalid("top_n", "Invalid value for 'top_n': %d: send 1 or more (the number of results)", req.topN)
		}
	}
	if present(m["return_documents"]) {
		if err := decodeField("return_documents", m["return_documents"], &req.returnDocs, "a boolean"); err != nil {
			return nil, err
		}
	}
	return req, nil
}

// parseDocuments reads the documents: strings, or objects {"text": ...}
// (Cohere's and Jina's).
func parseDocuments(raw json.RawMessage) ([]string, error) {
	var items []json.RawMessage
	if err := decodeField("documents", raw, &items, "a list"); err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, invalid("documents", "'documents' is an empty list: send the texts to rank")
	}
	docs := make([]string, len(items))
	for i, it := range items {
		switch it[0] {
		case '"':
			_ = json.Unmarshal(it, &docs[i])
		case '{':
			var d struct {
				Text *string `json:"text"`
			}
			if err := json.Unmarshal(it, &d); err != nil || d.Text == nil {
				return nil, invalid("documents", "Invalid value for 'documents[%d]': an object takes its text as \"text\"", i)
			}
			docs[i] = *d.Text
		default:
			return nil, invalid("documents", "Invalid type for 'documents[%d]': expected a string or {\"text\": ...}, got %s", i, transport.Quote(string(it)))
		}
		if docs[i] == "" {
			return nil, invalid("documents", "'documents[%d]' is an empty string: send a text", i)
		}
	}
	return docs, nil
}

// serveRerank answers POST /v1/rerank in Cohere's and Jina's shape.
func (h *Handler) serveRerank(w http.ResponseWriter, r *http.Request, q *transport.Inference, v *view, body []byte) core.Outcome {
	req, err := parseRerank(body)
	if err != nil {
		return h.fail(w, r, err)
	}
	if err := h.checkModel(req.model); err != nil {
		return h.fail(w, r, err)
	}
	if err := q.ReserveBody(int64(len(body)), int64(len(req.docs))); err != nil {
		return h.fail(w, r, err)
	}
	ans, err := v.x.Rerank(q.Ctx, req.query, req.docs, codec.TextInput{Name: "documents"})
	if err != nil {
		return h.fail(w, r, err)
	}
	scores, err := ans.Relevance(false)
	if err != nil {
		return h.fail(w, r, &core.InferenceError{Err: err})
	}
	writeBody(w, http.StatusOK, appendRerank(body[:0], req, scores, ans.Tokens(), h.opts.Model.Name()))
	return core.OutcomeSuccess
}

// Ranked orders documents by score, best first (equal scores by index),
// the first n of them (n < 0: all).
func Ranked(scores []float64, n int) []int {
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	if n >= 0 && n < len(order) {
		order = order[:n]
	}
	return order
}

// appendRerank writes the answer as Cohere's and Jina's: {"id", "model",
// "results": [{"index", "relevance_score", "document"?: {"text"}}],
// "usage": {"total_tokens"}, "meta": {"billed_units": {"search_units"}}}.
func appendRerank(dst []byte, req *rerankRequest, scores []float64, tokens int64, model string) []byte {
	dst = append(dst, `{"id":"rerank","model":`...)
	dst = strconv.AppendQuote(dst, model)
	dst = append(dst, `,"results":[`...)
	for k, i := range Ranked(scores, req.topN) {
		if k > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"index":`...)
		dst = strconv.AppendInt(dst, int64(i), 10)
		dst = append(dst, `,"relevance_score":`...)
		dst = tensorjson.AppendFloat64(dst, scores[i])
		if req.returnDocs {
			dst = append(dst, `,"document":{"text":`...)
			dst = tensorjson.AppendString(dst, req.docs[i])
			dst = append(dst, '}')
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `],"usage":{"total_tokens":`...)
	dst = strconv.AppendInt(dst, tokens, 10)
	dst = append(dst, `},"meta":{"billed_units":{"search_units":1}}}`...)
	return dst
}
