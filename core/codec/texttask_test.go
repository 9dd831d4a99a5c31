package codec

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
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

// TestTextEntities: the codec reads each token's row of a padded batch's
// logits, leaves the special tokens out and answers character offsets
// into each text; a text_pair is refused.
func TestTextEntities(t *testing.T) {
	tok := filepath.Join("tokenizer", "testdata", "fixtures", "bert-uncased.json")
	specs := []tensor.Spec{{Name: "input_ids", DType: tensor.Int64, Shape: []int64{-1, -1}, Required: true}}
	info := core.ModelInfo{Outputs: []core.OutputSpec{{Name: "logits", Type: "float32", Shape: []int64{-1, -1, 3}, Kind: core.KindTensor}}}
	x, err := buildText(&config.Text{Task: config.TaskTokens, Tokenizer: tok, Labels: config.Labels{List: []string{"O", "B-PER", "I-PER"}}}, "", specs, info)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"Zoë hello", "a"}
	b, err := x.Encode(context.Background(), texts, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	// Every token of the first text but the last is PER, B then I; the
	// special tokens' rows say B-PER too, and must be ignored.
	logits := make([]float32, b.n*b.seq*3)
	for i := range b.n {
		for j := range b.seq {
			row := logits[(i*b.seq+j)*3:]
			switch {
			case b.special[i] != nil && j < len(b.special[i]) && b.special[i][j] == 1:
				row[1] = 9
			case i == 0 && j == 1:
				row[1] = 5
			case i == 0 && j < len(b.offsets[0])-2:
				row[2] = 5
			default:
				row[0] = 5
			}
		}
	}
	got, err := x.Entities(b, &tensor.Tensor{DType: tensor.Float32, Shape: []int64{int64(b.n), int64(b.seq), 3}, Data: logits})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[0]) != 1 || len(got[1]) != 0 {
		t.Fatalf("entities %+v", got)
	}
	// [CLS] z ##o ##e hello [SEP]: z B-PER, ##o and ##e I-PER, hello O.
	if e := got[0][0]; e.Entity != "PER" || e.Start != 0 || e.End != 3 || e.Text != "Zoë" {
		t.Fatalf("entity %+v, want PER [0, 3) Zoë (tokens at %v)", e, b.offsets[0])
	}
	if _, err := x.Encode(context.Background(), texts, texts, false); err == nil || !strings.Contains(err.Error(), "Input 'text_pair': token classification") {
		t.Fatalf("a pair: %v", err)
	}
}

// TestTextAnswerClash: a model with an output named as svc's answer to
// text fails at start.
func TestTextAnswerClash(t *testing.T) {
	tok := filepath.Join("tokenizer", "testdata", "fixtures", "bert-uncased.json")
	specs := []tensor.Spec{{Name: "input_ids", DType: tensor.Int64, Shape: []int64{-1, -1}, Required: true}}
	info := core.ModelInfo{Outputs: []core.OutputSpec{
		{Name: "logits", Type: "float32", Shape: []int64{-1, 2}, Kind: core.KindTensor},
		{Name: "labels", Type: "int64", Shape: []int64{-1}, Kind: core.KindTensor},
	}}
	_, err := buildText(&config.Text{Task: config.TaskClassification, Tokenizer: tok}, "", specs, info)
	if err == nil || !strings.Contains(err.Error(), "the model has an output named 'labels'") {
		t.Fatalf("got %v", err)
	}
}

// TestTextPadding: a batch pads its shorter texts with the
// tokenizer.json's padding token ([PAD], 438, type 0), masked out, in
// int64 or int32 as the model's inputs are.
func TestTextPadding(t *testing.T) {
	tok := filepath.Join("tokenizer", "testdata", "fixtures", "bert-uncased.json")
	info := core.ModelInfo{Outputs: []core.OutputSpec{{Name: "last_hidden_state", Type: "float32", Shape: []int64{-1, -1, 32}, Kind: core.KindTensor}}}
	for _, dt := range []tensor.DType{tensor.Int64, tensor.Int32} {
		t.Run(dt.String(), func(t *testing.T) {
			specs := []tensor.Spec{
				{Name: "input_ids", DType: dt, Shape: []int64{-1, -1}, Required: true},
				{Name: "attention_mask", DType: dt, Shape: []int64{-1, -1}, Required: true},
				{Name: "token_type_ids", DType: dt, Shape: []int64{-1, -1}, Required: true},
			}
			x, err := buildText(&config.Text{Tokenizer: tok}, "", specs, info)
			if err != nil {
				t.Fatal(err)
			}
			b, err := x.Encode(context.Background(), []string{"hello world", "a"}, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			// [CLS] hello world [SEP] and [CLS] a [SEP] [PAD].
			want := [][]int64{{440, 378, 358, 441, 440, 17, 441, 438}, {1, 1, 1, 1, 1, 1, 1, 0}, {0, 0, 0, 0, 0, 0, 0, 0}}
			for k, in := range b.Inputs {
				if !reflect.DeepEqual(in.Shape, []int64{2, 4}) || !reflect.DeepEqual(int64s(in.Data), want[k]) {
					t.Errorf("%s: %v %v, want [2 4] %v", specs[k].Name, in.Shape, in.Data, want[k])
				}
			}
		})
	}
}

// int64s is an id tensor's data as int64s.
func int64s(data any) []int64 {
	switch d := data.(type) {
	case []int64:
		return d
	case []int32:
		out := make([]int64, len(d))
		for i, v := range d {
			out[i] = int64(v)
		}
		return out
	}
	return nil
}
