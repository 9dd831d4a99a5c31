package codec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/config"
)

// TestID2Label: config.json's id2label as a list by index; keys that are
// not the indices 0..n-1 give none.
func TestID2Label(t *testing.T) {
	tests := []struct {
		json string
		want []string
	}{
		{`{"id2label": {"1": "b", "0": "a"}}`, []string{"a", "b"}},
		{`{"id2label": {}}`, nil},
		{`{}`, nil},
		{`{"id2label": {"0": "a", "2": "c"}}`, nil},
		{`{"id2label": {"00": "a"}}`, nil},
		{`{"id2label": {"x": "a"}}`, nil},
	}
	for _, tt := range tests {
		c, err := unmarshalHF([]byte(tt.json))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.labels(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.json, got, tt.want)
		}
	}
	if (*hfConfig)(nil).labels() != nil {
		t.Error("no config.json: labels")
	}
}

// TestInferTask: config.json's architectures say the task; else
// modules.json, else embedding.
func TestInferTask(t *testing.T) {
	st := t.TempDir()
	if err := os.WriteFile(filepath.Join(st, "modules.json"), []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		arch     []string
		dir      string
		want     string
		fromHint string
	}{
		{[]string{"BertForSequenceClassification"}, st, config.TaskClassification, "BertForSequenceClassification"},
		{[]string{"XLMRobertaForTokenClassification"}, "", config.TaskTokens, "XLMRobertaForTokenClassification"},
		{[]string{"BertModel"}, st, config.TaskEmbedding, "modules.json"},
		{nil, t.TempDir(), config.TaskEmbedding, "by default"},
	}
	for _, tt := range tests {
		task, from := inferTask(&hfConfig{Architectures: tt.arch}, "config.json", tt.dir)
		if task != tt.want || !strings.Contains(from, tt.fromHint) {
			t.Errorf("%v: %s (%s), want %s (%s)", tt.arch, task, from, tt.want, tt.fromHint)
		}
	}
}

// TestBindClassifier: the activation (svc.yml's, else sigmoid for
// multi_label_classification or one class, else softmax; softmax for
// token classification), top_k (every label by default) and the labels'
// count against the logits'.
func TestBindClassifier(t *testing.T) {
	multi := &hfConfig{ProblemType: "multi_label_classification", ID2Label: map[string]string{"0": "a", "1": "b", "2": "c"}}
	single := &hfConfig{ID2Label: map[string]string{"0": "a", "1": "b", "2": "c"}}
	tests := []struct {
		name       string
		task       string
		classes    int64
		decl       config.Text
		hf         *hfConfig
		activation string
		topK       int
		err        string
	}{
		{"softmax by default", config.TaskClassification, 3, config.Text{}, single, config.ActivationSoftmax, 3, ""},
		{"multi-label", config.TaskClassification, 3, config.Text{}, multi, config.ActivationSigmoid, 3, ""},
		{"one class", config.TaskClassification, 1, config.Text{}, nil, config.ActivationSigmoid, 1, ""},
		{"svc.yml's activation and top_k", config.TaskClassification, 3, config.Text{Activation: "none", TopK: 2}, multi, config.ActivationNone, 2, ""},
		{"top_k past the classes", config.TaskClassification, 3, config.Text{TopK: 9}, single, config.ActivationSoftmax, 3, ""},
		{"classes unknown", config.TaskClassification, -1, config.Text{}, nil, config.ActivationSoftmax, -1, ""},
		{"token classification", config.TaskTokens, 3, config.Text{}, multi, config.ActivationSoftmax, 0, ""},
		{"labels that do not fit", config.TaskClassification, 4, config.Text{}, single, "", 0, "labels: 3 labels (from config.json), but the model's logits have 4 classes"},
		{"svc.yml's labels", config.TaskClassification, 2, config.Text{Labels: config.Labels{List: []string{"x", "y"}}}, single, config.ActivationSoftmax, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := &Text{Task: tt.task, Hidden: tt.classes}
			err := x.bindClassifier(&tt.decl, tt.hf, "config.json", "test")
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if x.Activation() != tt.activation || x.TopK() != tt.topK {
				t.Fatalf("%s top %d, want %s top %d", x.Activation(), x.TopK(), tt.activation, tt.topK)
			}
		})
	}
}
