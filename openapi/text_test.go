package openapi_test

import (
	"path/filepath"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/openapi"
)

// TestTextDocument: for a model with text inputs, each task, the request
// takes text and text_pair (nothing required), the /predict example is a
// sentence the request schema accepts, and the response schema takes the
// task's answer and refuses a malformed one.
func TestTextDocument(t *testing.T) {
	tok := filepath.Join("..", "core", "codec", "tokenizer", "testdata", "fixtures", "bert-uncased.json")
	ids := func(name string) core.InputSpec {
		return core.InputSpec{Name: name, Type: "int64", Shape: []int64{-1, -1}, Required: true, Kind: core.KindTensor}
	}
	inputs := []core.InputSpec{ids("input_ids"), ids("attention_mask"), ids("token_type_ids")}
	tests := []struct {
		name   string
		out    core.OutputSpec
		text   config.Text
		answer string
		good   string
		bad    string
	}{
		{"classification", tensorOut("logits", -1, 3), config.Text{Task: config.TaskClassification, Labels: config.Labels{List: []string{"a", "b", "c"}}, TopK: 2},
			"labels", `{"labels": [[{"label": "a", "index": 0, "score": 0.75}, {"label": "b", "index": 1, "score": null}]]}`,
			`{"labels": [[{"label": "a", "index": 0, "score": 0.5}, {"label": "b", "index": 1, "score": 0.25}, {"label": "c", "index": 2, "score": 0.25}]]}`},
		{"token classification", tensorOut("logits", -1, -1, 3), config.Text{Task: config.TaskTokens, Labels: config.Labels{List: []string{"O", "B-PER", "I-PER"}}},
			"entities", `{"entities": [[{"entity": "PER", "start": 0, "end": 4, "text": "John", "score": 0.9}], []]}`,
			`{"entities": [[{"entity": "PER", "start": -1, "end": 4, "text": "John", "score": 0.9}]]}`},
		{"embedding", tensorOut("last_hidden_state", -1, -1, 4), config.Text{Task: config.TaskEmbedding},
			"embedding", `{"embedding": [[0.5, 0.5, 0.5, 0.5]]}`, `{"embedding": [[0.5, 0.5]]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := tt.text
			text.Tokenizer = tok
			r := newMediaRunner(inputs, []core.OutputSpec{tt.out})
			set, err := codec.New(config.Model{Text: &text}, config.Default().Limits).For(r)
			if err != nil || set.Text() == nil {
				t.Fatalf("codec: %v", err)
			}
			doc, err := openapi.BuildWith(r.Info(), set)
			if err != nil {
				t.Fatal(err)
			}
			req := requestSchema(t, doc)
			if req.Properties["text"] == nil || req.Properties["text_pair"] == nil || len(req.Required) != 0 {
				t.Fatalf("request: %v, required %v", req.Properties, req.Required)
			}
			ex := example(t, doc)
			body, ok := ex.(map[string]any)
			if s, isString := body["text"].(string); !ok || !isString || len(body) != 1 || s == "" {
				t.Fatalf("example %v, want a sentence", ex)
			}
			if err := req.VisitJSON(ex); err != nil {
				t.Fatalf("the example does not fit the request schema: %v", err)
			}
			resp := doc.Components.Schemas["PredictResponse"].Value
			if resp.Properties[tt.answer] == nil {
				t.Fatalf("response lacks %s: %v", tt.answer, resp.Properties)
			}
			if err := resp.VisitJSON(mustJSON(t, tt.good), openapi3.MultiErrors()); err != nil {
				t.Fatalf("%s refused: %v", tt.good, err)
			}
			if err := resp.VisitJSON(mustJSON(t, tt.bad)); err == nil {
				t.Fatalf("%s accepted", tt.bad)
			}
		})
	}
}
