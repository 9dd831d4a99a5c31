package main_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// apiCase is a request to a route of OpenAI's or TEI's shape and the
// answer it must get.
type apiCase struct {
	name, path, body string
	status           int
	// msg is in the message; kind is OpenAI's error type and param (as
	// "type/param/code") or TEI's error_type.
	msg, kind string
	// rerank sends it to a cross-encoder rather than an embedding model.
	rerank bool
}

// checkAPIError posts c and checks its status and error, in the shape of
// c.path's API.
func checkAPIError(t *testing.T, s *server, c apiCase) {
	t.Helper()
	r := s.do(http.MethodPost, c.path, "application/json", strings.NewReader(c.body))
	if r.Status != c.status {
		t.Fatalf("%s %s: %d %s, want %d", c.path, transportQuote(c.body), r.Status, r.Body, c.status)
	}
	if strings.HasPrefix(c.path, "/v1/") {
		var e struct {
			Error struct {
				Message string  `json:"message"`
				Type    string  `json:"type"`
				Param   *string `json:"param"`
				Code    *string `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(r.Body, &e); err != nil {
			t.Fatalf("%s: not OpenAI's error shape: %s", c.path, r.Body)
		}
		kind := e.Error.Type + "/" + deref(e.Error.Param) + "/" + deref(e.Error.Code)
		if !strings.Contains(e.Error.Message, c.msg) || kind != c.kind {
			t.Fatalf("%s: %s, want %q in the message and %s", c.path, r.Body, c.msg, c.kind)
		}
		return
	}
	var e map[string]string
	if err := json.Unmarshal(r.Body, &e); err != nil || len(e) != 2 {
		t.Fatalf("%s: not TEI's error shape {error, error_type}: %s", c.path, r.Body)
	}
	if !strings.Contains(e["error"], c.msg) || e["error_type"] != c.kind {
		t.Fatalf("%s: %s, want %q in the error and error_type %s", c.path, r.Body, c.msg, c.kind)
	}
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

func transportQuote(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// apiLimits are the limits TestTextAPIErrors serves with: small, so that
// bodies and lists reach them.
const apiLimits = "limits:\n  max_body_size: 4096\n  max_texts: 8\n"

// apiErrorCases are the bad requests of every route, each with the
// status and error of its API: OpenAI's for /v1, TEI's elsewhere. Each
// bad input of the issue is sent in every shape that takes it: an empty
// input, a list with an empty text, a wrong encoding_format, dimensions
// of 0 or above the model's, top_n of 0, an unknown field, a body over
// the limit. rerank sends the case to the cross-encoder.
func apiErrorCases() []apiCase {
	pad := strings.Repeat("a ", 3000)
	big := fmt.Sprintf(`{"input": %q}`, pad)
	nine := `["a","b","c","d","e","f","g","h","i"]`
	long := strings.Repeat("word ", 100)
	bad := "invalid_request_error/"
	tooLarge := "Request body too large: the limit is 4 KiB"
	return []apiCase{
		{"empty input", "/v1/embeddings", `{"input": ""}`, 400, "'input' is an empty string", bad + "input/null", false},
		{"empty list", "/v1/embeddings", `{"input": []}`, 400, "'input' is an empty list", bad + "input/null", false},
		{"an empty string in a list", "/v1/embeddings", `{"input": ["a", ""]}`, 400, "'input[1]' is an empty string", bad + "input/null", false},
		{"no input", "/v1/embeddings", `{"model": "text-embed"}`, 400, "'input' is a required property", bad + "input/null", false},
		{"wrong encoding_format", "/v1/embeddings", `{"input": "a", "encoding_format": "hex"}`, 400, "Invalid value for 'encoding_format': 'hex'", bad + "encoding_format/null", false},
		{"dimensions 0", "/v1/embeddings", `{"input": "a", "dimensions": 0}`, 400, "'dimensions': 0: the model's embeddings have 32 dimensions; send 1 to 32", bad + "dimensions/null", false},
		{"dimensions above", "/v1/embeddings", `{"input": "a", "dimensions": 33}`, 400, "'dimensions': 33", bad + "dimensions/null", false},
		{"unknown field", "/v1/embeddings", `{"input": "a", "temperature": 1}`, 400, "Unrecognized request argument supplied: temperature", bad + "temperature/null", false},
		{"another model", "/v1/embeddings", `{"input": "a", "model": "gpt-4"}`, 404, "The model 'gpt-4' does not exist", bad + "model/model_not_found", false},
		{"not JSON", "/v1/embeddings", `{"input": `, 400, "The body is not a JSON object", bad + "null/null", false},
		{"an id out of the vocabulary", "/v1/embeddings", `{"input": [[440, 9999]]}`, 400, "Input 'input', item 0: token 1: id 9999 is out of the vocabulary: the model takes 0 to 443", bad + "input/null", false},
		{"body over the limit", "/v1/embeddings", big, 413, tooLarge, bad + "null/request_too_large", false},
		{"texts over the limit", "/v1/embeddings", `{"input": ` + nine + `}`, 413, "9 texts, more than the 8 one request may send (limits.max_texts)", bad + "limits.max_texts/request_too_large", false},
		{"rerank top_n 0", "/v1/rerank", `{"query": "q", "documents": ["a"], "top_n": 0}`, 400, "Invalid value for 'top_n': 0", bad + "top_n/null", true},
		{"rerank no documents", "/v1/rerank", `{"query": "q", "documents": []}`, 400, "'documents' is an empty list", bad + "documents/null", true},
		{"rerank an empty document", "/v1/rerank", `{"query": "q", "documents": ["a", {"text": ""}]}`, 400, "'documents[1]' is an empty string", bad + "documents/null", true},
		{"rerank an empty string document", "/v1/rerank", `{"query": "q", "documents": ["a", ""]}`, 400, "'documents[1]' is an empty string", bad + "documents/null", true},
		{"rerank an empty query", "/v1/rerank", `{"query": "", "documents": ["a"]}`, 400, "'query' is an empty string", bad + "query/null", true},
		{"rerank unknown field", "/v1/rerank", `{"query": "q", "documents": ["a"], "rank_fields": ["x"]}`, 400, "Unrecognized request argument supplied: rank_fields", bad + "rank_fields/null", true},
		{"rerank another model", "/v1/rerank", `{"query": "q", "documents": ["a"], "model": "rerank-v3.5"}`, 404, "The model 'rerank-v3.5' does not exist", bad + "model/model_not_found", true},
		{"rerank body over the limit", "/v1/rerank", fmt.Sprintf(`{"query": "q", "documents": [%q]}`, pad), 413, tooLarge, bad + "null/request_too_large", true},
		{"rerank texts over the limit", "/v1/rerank", `{"query": "q", "documents": ` + nine + `}`, 413, "(limits.max_texts)", bad + "limits.max_texts/request_too_large", true},
		{"rerank an embedding model", "/v1/rerank", `{"query": "q", "documents": ["a"]}`, 400, "The model is a embedding model: reranking takes a cross-encoder", bad + "documents/null", false},
		{"embed empty input", "/embed", `{"inputs": ""}`, 400, "`inputs` cannot be empty", "Empty", false},
		{"embed empty list", "/embed", `{"inputs": []}`, 400, "`inputs` cannot be empty", "Empty", false},
		{"embed an empty string in a list", "/embed", `{"inputs": ["a", ""]}`, 400, "`inputs[1]` cannot be empty", "Empty", false},
		{"embed unknown field", "/embed", `{"inputs": "a", "temperature": 1}`, 422, "unknown field `temperature`", "Validation", false},
		{"embed encoding_format, not TEI's", "/embed", `{"inputs": "a", "encoding_format": "hex"}`, 422, "unknown field `encoding_format`", "Validation", false},
		{"embed dimensions 0", "/embed", `{"inputs": "a", "dimensions": 0}`, 413, "`dimensions` 0 is out of range: the model's embeddings have 32 dimensions", "Validation", false},
		{"embed dimensions above", "/embed", `{"inputs": "a", "dimensions": 33}`, 413, "`dimensions` 33 is out of range: the model's embeddings have 32 dimensions", "Validation", false},
		{"embed wrong direction", "/embed", `{"inputs": "a", "truncation_direction": "Up"}`, 422, "unknown variant `Up`", "Validation", false},
		{"embed too long, truncate false", "/embed", fmt.Sprintf(`{"inputs": %q, "truncate": false}`, long), 413, "Input 'inputs': 202 tokens, over the maximum length of 48 (truncation is off)", "Validation", false},
		{"embed body over the limit", "/embed", strings.Replace(big, "input", "inputs", 1), 413, tooLarge, "Validation", false},
		{"embed texts over the limit", "/embed", `{"inputs": ` + nine + `}`, 413, "(limits.max_texts)", "Validation", false},
		{"tei rerank no texts", "/rerank", `{"query": "q", "texts": []}`, 400, "`texts` cannot be empty", "Empty", true},
		{"tei rerank an empty text", "/rerank", `{"query": "q", "texts": ["a", ""]}`, 400, "`texts[1]` cannot be empty", "Empty", true},
		{"tei rerank an empty query", "/rerank", `{"query": "", "texts": ["a"]}`, 400, "`query` cannot be empty", "Empty", true},
		{"tei rerank top_n, not TEI's", "/rerank", `{"query": "q", "texts": ["a"], "top_n": 0}`, 422, "unknown field `top_n`", "Validation", true},
		{"tei rerank body over the limit", "/rerank", fmt.Sprintf(`{"query": "q", "texts": [%q]}`, pad), 413, tooLarge, "Validation", true},
		{"tei rerank texts over the limit", "/rerank", `{"query": "q", "texts": ` + nine + `}`, 413, "(limits.max_texts)", "Validation", true},
		{"tokenize empty", "/tokenize", `{"inputs": []}`, 400, "`inputs` cannot be empty", "Empty", false},
		{"tokenize an empty string in a list", "/tokenize", `{"inputs": ["a", ""]}`, 400, "`inputs[1]` cannot be empty", "Empty", false},
		{"tokenize unknown field", "/tokenize", `{"inputs": "a", "truncate": true}`, 422, "unknown field `truncate`", "Validation", false},
		{"tokenize body over the limit", "/tokenize", strings.Replace(big, "input", "inputs", 1), 413, tooLarge, "Validation", false},
		{"decode empty", "/decode", `{"ids": []}`, 400, "`ids` cannot be empty", "Empty", false},
		{"decode an unknown id", "/decode", `{"ids": [440, 99999]}`, 422, "`ids[0]`: id 99999 (at 1) is not one of the tokenizer's", "Tokenizer", false},
		{"decode unknown field", "/decode", `{"ids": [440], "normalize": true}`, 422, "unknown field `normalize`", "Validation", false},
		{"decode body over the limit", "/decode", fmt.Sprintf(`{"ids": [%s440]}`, strings.Repeat("440, ", 1000)), 413, tooLarge, "Validation", false},
	}
}

// TestTextAPIErrors sends bad input to every route of OpenAI's and TEI's
// shapes, the embedding routes to text-embed and the rerank routes to
// text-rerank: each gets its documented status and message in its API's
// error shape; with one worker and with --workers 2.
func TestTextAPIErrors(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, apiLimits)
	for _, workers := range []string{"1", "2"} {
		t.Run("workers "+workers, func(t *testing.T) {
			t.Parallel()
			embed := startServer(t, filepath.Join(repoRoot, "examples", "text-embed"), "--config", cfg, "--workers", workers)
			rerank := startServer(t, filepath.Join(repoRoot, "examples", "text-rerank"), "--config", cfg, "--workers", workers)
			for _, c := range apiErrorCases() {
				s := embed
				if c.rerank {
					s = rerank
				}
				t.Run(c.name, func(t *testing.T) { checkAPIError(t, s, c) })
			}
			// The routes still answer after every refusal.
			for _, c := range []struct {
				s          *server
				path, body string
			}{{embed, "/v1/embeddings", `{"input": "a"}`}, {embed, "/embed", `{"inputs": "a"}`}, {rerank, "/v1/rerank", `{"query": "q", "documents": ["a"]}`}, {rerank, "/rerank", `{"query": "q", "texts": ["a"]}`}} {
				if r := c.s.do(http.MethodPost, c.path, "application/json", strings.NewReader(c.body)); r.Status != http.StatusOK {
					t.Fatalf("%s after the refusals: %d %s", c.path, r.Status, r.Body)
				}
			}
		})
	}
}

// TestTextAPIOnOtherModels: a model that takes no text answers the text
// routes with a 400 in their shape, and /v1/models lists it.
func TestTextAPIOnOtherModels(t *testing.T) {
	t.Parallel()
	s := startServer(t, model("classifier.onnx"))
	checkAPIError(t, s, apiCase{path: "/v1/embeddings", body: `{"input": "a"}`, status: 400, msg: "The served model takes no text", kind: "invalid_request_error/null/null"})
	checkAPIError(t, s, apiCase{path: "/embed", body: `{"inputs": "a"}`, status: 400, msg: "The served model takes no text", kind: "Validation"})
	r := s.get("/v1/models")
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"id":"classifier"`) {
		t.Fatalf("/v1/models: %d %s", r.Status, r.Body)
	}
}

// postJSON posts body to path and decodes a 200's answer into out.
func postJSON(t *testing.T, s *server, path, body string, out any) {
	t.Helper()
	r := s.do(http.MethodPost, path, "application/json", strings.NewReader(body))
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, out) != nil {
		t.Fatalf("%s %s: %d %s", path, transportQuote(body), r.Status, r.Body)
	}
}

// metricValue sums a Prometheus series over its workers: the lines of
// series whose labels hold label ("": any).
func metricValue(t *testing.T, s *server, series, label string) float64 {
	t.Helper()
	r := s.do(http.MethodGet, "/metrics", "", nil, "Accept", "text/plain")
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + `(\{[^}]*\})? (\S+)$`)
	sum, found := 0.0, false
	for _, m := range re.FindAllStringSubmatch(string(r.Body), -1) {
		if !strings.Contains(m[1], label) {
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		sum, found = sum+v, true
	}
	if !found {
		t.Fatalf("no %s{%s} in /metrics:\n%s", series, label, r.Body)
	}
	return sum
}

// batchTexts are n texts of lengths from 3 to 48 tokens, in no order.
func batchTexts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = clientTexts[(i*3)%len(clientTexts)]
		if i%4 == 1 {
			out[i] = strings.Repeat("word ", i%13+1)
		}
	}
	return out
}

// TestTextBatchesByTokens serves text-embed with text.max_batch_tokens
// 96: a client's list of many texts, more than one batch holds, is
// split into runs of at most 96 padded tokens and answered in its order
// (each vector the text's alone); the runs are Prometheus series; only
// past limits.max_tokens, the request's tokens summed, is a list
// refused; with one worker and with --workers 2.
func TestTextBatchesByTokens(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, fmt.Sprintf("limits:\n  max_tokens: 600\nmodels:\n  text-embed:\n    path: %s\n    text: {max_batch_tokens: 96}\n",
		filepath.Join(repoRoot, "examples", "text-embed", "model.onnx")))
	texts := batchTexts(30)
	for _, workers := range []string{"1", "2"} {
		t.Run("workers "+workers, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, "text-embed", "--config", cfg, "--workers", workers)
			var got struct {
				Data []struct {
					Index     int       `json:"index"`
					Embedding []float64 `json:"embedding"`
				} `json:"data"`
				Usage struct {
					Prompt float64 `json:"prompt_tokens"`
				} `json:"usage"`
			}
			body, _ := json.Marshal(map[string]any{"input": texts, "encoding_format": "float"})
			postJSON(t, s, "/v1/embeddings", string(body), &got)
			if len(got.Data) != len(texts) {
				t.Fatalf("%d embeddings for %d texts", len(got.Data), len(texts))
			}
			for i, d := range got.Data {
				if d.Index != i {
					t.Fatalf("item %d has index %d", i, d.Index)
				}
				closeTo(t, fmt.Sprintf("text %d in the list", i), [][]float64{d.Embedding}, embeddings(t, s, texts[i]), 1e-5)
			}
			runs := metricValue(t, s, "svc_text_batch_size_count", "")
			if padded := metricValue(t, s, "svc_text_batch_tokens_sum", ""); runs < 2 || padded < got.Usage.Prompt {
				t.Fatalf("%v runs of %v padded tokens for a request of %v tokens", runs, padded, got.Usage.Prompt)
			}
			if within := metricValue(t, s, "svc_text_batch_tokens_bucket", `le="128"`); within != runs {
				t.Fatalf("%v of %v runs within 128 tokens; the budget is 96", within, runs)
			}
			text, pad := metricValue(t, s, "svc_text_tokens_total", `kind="text"`), metricValue(t, s, "svc_text_tokens_total", `kind="padding"`)
			t.Logf("%v runs; padding %.1f%% of %v tokens", runs, 100*pad/(text+pad), text+pad)
			many, _ := json.Marshal(map[string]any{"input": batchTexts(50)})
			checkAPIError(t, s, apiCase{path: "/v1/embeddings", body: string(many), status: 413,
				msg: "more than the 600 one request may send (limits.max_tokens)", kind: "invalid_request_error/limits.max_tokens/request_too_large"})
		})
	}
}

// TestTextBatchBudgetSmallerThanAText: a text.max_batch_tokens that one
// text of the maximum length would not fit fails start-up, naming both,
// with one worker and with --workers 2.
func TestTextBatchBudgetSmallerThanAText(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, fmt.Sprintf("models:\n  text-embed:\n    path: %s\n    text: {max_batch_tokens: 16}\n",
		filepath.Join(repoRoot, "examples", "text-embed", "model.onnx")))
	for _, workers := range []string{"1", "2"} {
		t.Run("workers "+workers, func(t *testing.T) {
			t.Parallel()
			code, _, stderr := runSvc(t, nil, "serve", "text-embed", "--config", cfg, "--port", "0", "--workers", workers)
			if code == 0 || !strings.Contains(stderr, "text.max_batch_tokens: 16 tokens, fewer than one text may have (48, its maximum length)") {
				t.Fatalf("exit %d: %s", code, stderr)
			}
		})
	}
}
