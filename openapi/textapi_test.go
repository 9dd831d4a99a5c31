package openapi_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/openapi"
)

// TestTextAPIDocument: a text model's document describes the routes it
// answers in other servers' shapes, and only those: the embeddings routes
// for an embedding model, the rerank routes for a cross-encoder (one
// logit), neither for a classifier of three classes, /v1/models,
// /tokenize and /decode for each, none for a tensor model. Each request
// example fits its request schema, and a real answer and a real error fit
// the route's schemas while a malformed one does not.
func TestTextAPIDocument(t *testing.T) {
	tok := filepath.Join("..", "core", "codec", "tokenizer", "testdata", "fixtures", "bert-uncased.json")
	ids := func(name string) core.InputSpec {
		return core.InputSpec{Name: name, Type: "int64", Shape: []int64{-1, -1}, Required: true, Kind: core.KindTensor}
	}
	inputs := []core.InputSpec{ids("input_ids"), ids("attention_mask"), ids("token_type_ids")}
	common := []string{"/v1/models", "/tokenize", "/decode"}
	tests := []struct {
		name  string
		out   core.OutputSpec
		text  *config.Text
		paths []string
	}{
		{"embedding", tensorOut("last_hidden_state", -1, -1, 4), &config.Text{Task: config.TaskEmbedding},
			append([]string{"/v1/embeddings", "/embed"}, common...)},
		{"cross-encoder", tensorOut("logits", -1, 1), &config.Text{Task: config.TaskClassification},
			append([]string{"/v1/rerank", "/rerank"}, common...)},
		{"classifier of three classes", tensorOut("logits", -1, 3), &config.Text{Task: config.TaskClassification, Labels: config.Labels{List: []string{"a", "b", "c"}}},
			common},
		{"tensor model", tensorOut("logits", -1, 3), nil, nil},
	}
	all := []string{"/v1/embeddings", "/embed", "/v1/rerank", "/rerank", "/v1/models", "/tokenize", "/decode"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.text != nil {
				tt.text.Tokenizer = tok
			}
			r := newMediaRunner(inputs, []core.OutputSpec{tt.out})
			set, err := codec.New(config.Model{Text: tt.text}, config.Default().Limits).For(r)
			if err != nil {
				t.Fatalf("codec: %v", err)
			}
			doc, err := openapi.BuildWith(r.Info(), set)
			if err != nil {
				t.Fatal(err)
			}
			if err := doc.Validate(context.Background()); err != nil {
				t.Fatalf("the document is not valid: %v", err)
			}
			for _, p := range all {
				if got, want := doc.Paths.Value(p) != nil, slices.Contains(tt.paths, p); got != want {
					t.Errorf("%s described: %v, want %v", p, got, want)
				}
			}
			for _, p := range tt.paths {
				item := doc.Paths.Value(p)
				if item == nil {
					continue
				}
				op := item.Post
				if op == nil {
					op = item.Get
				}
				if op.RequestBody != nil {
					mt := op.RequestBody.Value.Content.Get("application/json")
					if err := mt.Schema.Value.VisitJSON(mt.Example); err != nil {
						t.Errorf("%s: the example %v does not fit the request schema: %v", p, mt.Example, err)
					}
				}
				for status, answers := range textAPIAnswers[p] {
					s := op.Responses.Status(status).Value.Content.Get("application/json").Schema.Value
					if err := s.VisitJSON(mustJSON(t, answers[0])); err != nil {
						t.Errorf("%s %d: %s refused: %v", p, status, answers[0], err)
					}
					if err := s.VisitJSON(mustJSON(t, answers[1])); err == nil {
						t.Errorf("%s %d: %s accepted", p, status, answers[1])
					}
				}
			}
		})
	}
}

// textAPIAnswers are, by route and status, an answer svc gives and a
// malformed one.
var textAPIAnswers = map[string]map[int][2]string{
	"/v1/embeddings": {
		200: {`{"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [0.5, 0.5]}, {"object": "embedding", "index": 1, "embedding": "AACAPw=="}], "model": "ocr", "usage": {"prompt_tokens": 3, "total_tokens": 3}}`,
			`{"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": {"a": 1}}]}`},
		400: {`{"error": {"message": "'input' is an empty string", "type": "invalid_request_error", "param": "input", "code": null}}`,
			`{"error": "'input' is an empty string"}`},
		404: {`{"error": {"message": "The model 'gpt-4' does not exist", "type": "invalid_request_error", "param": "model", "code": "model_not_found"}}`,
			`{"error": {"message": "no param"}}`},
	},
	"/v1/rerank": {
		200: {`{"id": "x", "model": "ocr", "results": [{"index": 1, "relevance_score": 0.9, "document": {"text": "b"}}, {"index": 0, "relevance_score": 0.1}], "usage": {"total_tokens": 9}, "meta": {}}`,
			`{"results": [{"index": "first", "relevance_score": 0.9}]}`},
		400: {`{"error": {"message": "Invalid value for 'top_n': 0", "type": "invalid_request_error", "param": "top_n", "code": null}}`,
			`{"detail": "top_n"}`},
	},
	"/embed": {
		200: {`[[0.5, 0.5], [0.25, 0.75]]`, `[0.5, 0.5]`},
		400: {"{\"error\": \"`inputs[1]` cannot be empty\", \"error_type\": \"Empty\"}", `{"error": "x", "error_type": "Unknown"}`},
		413: {`{"error": "Input 'inputs': 62 tokens", "error_type": "Validation"}`, `{"error": "x"}`},
	},
	"/rerank": {
		200: {`[{"index": 2, "score": -4.1, "text": "c"}, {"index": 0, "score": -4.3}]`, `[{"index": 2, "score": "high"}]`},
		422: {`{"error": "unknown field", "error_type": "Validation"}`, `{"message": "x"}`},
	},
	"/tokenize": {
		200: {`[[{"id": 440, "text": "[CLS]", "special": true, "start": null, "stop": null}, {"id": 378, "text": "hello", "special": false, "start": 0, "stop": 5}]]`,
			`[[{"id": 378, "text": "hello", "special": false, "start": -1, "stop": 5}]]`},
	},
	"/decode": {
		200: {`["hello world", "hello"]`, `"hello"`},
	},
	"/v1/models": {
		200: {`{"object": "list", "data": [{"id": "ocr", "object": "model", "created": 0, "owned_by": "svc"}]}`, `{"object": "list", "data": {"id": "ocr"}}`},
	},
}
