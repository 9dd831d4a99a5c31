package main_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitText runs 'svc init --model' on model folders with a
// tokenizer.json and serves each from the file it wrote, with no edit:
// the text section says the task the folder says, and /predict takes a
// sentence; a config.json svc cannot read is refused (a tokenizer svc
// cannot reproduce too: TestTextUnknownTokenizerPart), and a model
// without token ids gets no text section.
func TestInitText(t *testing.T) {
	t.Parallel()
	sequential(t)
	hub := t.TempDir() // a Hub repository's layout: onnx/model.onnx, the rest at the root
	if err := os.MkdirAll(filepath.Join(hub, "onnx"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, model("tiny_bert_ner/model.onnx"), filepath.Join(hub, "onnx", "model.onnx"))
	copyFile(t, model("tiny_bert_ner/config.json"), filepath.Join(hub, "config.json"))
	copyFile(t, bertTokenizer(), filepath.Join(hub, "tokenizer.json"))
	tests := []struct {
		name, model string
		wants       []string
		answer      string // the key of a text's answer
	}{
		{"classification", taskFolder(t, "tiny_bert_classifier", ""), []string{"\n    text:\n      tokenizer: ", "\n      task: classification ", "BertForSequenceClassification", "# top_k: 1"}, "labels"},
		{"token classification, Hub layout", filepath.Join(hub, "onnx", "model.onnx"), []string{"\n    text:\n      tokenizer: ", "\n      task: token-classification ", "BertForTokenClassification"}, "entities"},
		{"embedding", textFolder(t, meanPooling), []string{"\n      task: embedding ", "embedding from modules.json", "# pooling: mean"}, "embedding"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := svcCmd(t, nil, "init", "--model", tt.model, "--name", "m")
			code, stdout, stderr := runCmd(t, cmd)
			if code != 0 || !strings.Contains(stdout, "wrote svc.yml") {
				t.Fatalf("init: %d %s %s", code, stdout, stderr)
			}
			body, err := os.ReadFile(filepath.Join(cmd.Dir, "svc.yml"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.wants {
				if !strings.Contains(string(body), want) {
					t.Errorf("svc.yml lacks %q:\n%s", want, body)
				}
			}
			s := startServer(t, "m", "--config", filepath.Join(cmd.Dir, "svc.yml"))
			r := s.predict(`{"text": ["John lives in Paris.", "hello"]}`)
			if r.Status != http.StatusOK || !strings.HasPrefix(string(r.Body), `{"`+tt.answer+`":[[`) {
				t.Fatalf("predict: %d %s", r.Status, r.Body)
			}
		})
	}
	// A config.json svc cannot read fails svc serve, so init refuses the
	// folder too instead of writing an entry that would not start.
	cmd := svcCmd(t, nil, "init", "--model", taskFolder(t, "tiny_bert_classifier", `{"architectures": [`), "--name", "m")
	if code, _, stderr := runCmd(t, cmd); code == 0 || !strings.Contains(stderr, "config.json: unexpected end of JSON input (svc serve refuses the model until it is mended or removed)") {
		t.Fatalf("init of a folder whose config.json is not JSON: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(cmd.Dir, "svc.yml")); err == nil {
		t.Fatal("init wrote svc.yml for a folder svc serve refuses")
	}
	cmd = svcCmd(t, nil, "init", "--model", model("classifier.onnx"))
	if code, _, stderr := runCmd(t, cmd); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	if body, _ := os.ReadFile(filepath.Join(cmd.Dir, "svc.yml")); strings.Contains(string(body), "text:") {
		t.Fatalf("a model without token ids got a text section:\n%s", body)
	}
}
