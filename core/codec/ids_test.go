package codec

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec/tokenizer"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
)

// idFolder is a model folder: bert-uncased as tokenizer.json, with
// tiny_bert.onnx as model.onnx when graph is set, and configJSON as
// config.json when not empty; it returns the model file ("" without
// one) and the tokenizer.
func idFolder(t *testing.T, graph bool, configJSON string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	tok := filepath.Join(dir, "tokenizer.json")
	copyTo(t, filepath.Join("tokenizer", "testdata", "fixtures", "bert-uncased.json"), tok)
	if configJSON != "" {
		write(t, filepath.Join(dir, "config.json"), configJSON)
	}
	if !graph {
		return "", tok
	}
	model := filepath.Join(dir, "model.onnx")
	copyTo(t, filepath.Join("..", "..", "testdata", "models", "tiny_bert.onnx"), model)
	return model, tok
}

func copyTo(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	write(t, to, string(data))
}

// idText builds the text of tiny_bert's inputs, in dt, from a folder.
func idText(t *testing.T, dt tensor.DType, model, tok string, decl *config.Text) (*Text, error) {
	t.Helper()
	specs := []tensor.Spec{
		{Name: "input_ids", DType: dt, Shape: []int64{-1, -1}, Required: true},
		{Name: "attention_mask", DType: dt, Shape: []int64{-1, -1}, Required: true},
		{Name: "token_type_ids", DType: dt, Shape: []int64{-1, -1}, Required: true},
	}
	info := core.ModelInfo{Outputs: []core.OutputSpec{{Name: "last_hidden_state", Type: "float32", Shape: []int64{-1, -1, 32}, Kind: core.KindTensor}}}
	if decl == nil {
		decl = &config.Text{}
	}
	decl.Tokenizer = tok
	return buildText(decl, model, specs, info)
}

// ids is a [rows, len(row)] id tensor of dt.
func ids(dt tensor.DType, rows ...[]int64) *tensor.Tensor {
	var flat []int64
	for _, r := range rows {
		flat = append(flat, r...)
	}
	return idTensor(dt, []int64{int64(len(rows)), int64(len(rows[0]))}, flat)
}

func ones(n int) []int64 {
	r := make([]int64, n)
	for i := range r {
		r[i] = 1
	}
	return r
}

// TestCheckIDs: the id inputs a client sends are checked against what
// the model can gather, the bounds read from its graph (the rows of its
// embedding tables), else config.json (vocab_size, type_vocab_size),
// else the tokenizer; a RoBERTa-style config.json takes pad_token_id + 1
// positions off the table. Each refusal names the input, the value, its
// place and the bound; ids at the bounds pass.
func TestCheckIDs(t *testing.T) {
	ref, err := tokenizer.Load(filepath.Join("tokenizer", "testdata", "fixtures", "bert-uncased.json"))
	if err != nil {
		t.Fatal(err)
	}
	vocab := int64(ref.VocabSize())
	roberta := `{"model_type": "roberta", "pad_token_id": 1, "vocab_size": 50265}`
	tests := []struct {
		name        string
		graph       bool
		config      string
		input       int // 0 input_ids, 2 token_type_ids
		rows        [][]int64
		want        string // "" for no error
		wantVocabAt int64  // the largest id that passes
	}{
		{"graph: out of the vocabulary", true, "", 0, [][]int64{{1, 2}, {3, 444}}, "Input 'input_ids' at [1, 1]: id 444 is out of the vocabulary: the model takes 0 to 443 (its word embeddings have 444 rows)", 443},
		{"graph: negative", true, "", 0, [][]int64{{1, -1}}, "Input 'input_ids' at [0, 1]: id -1 is out of the vocabulary: the model takes 0 to 443", 443},
		{"graph: token type", true, "", 2, [][]int64{{0, 0, 2}}, "Input 'token_type_ids' at [0, 2]: token type 2 is out of range: the model takes 0 to 1 (its token-type embeddings have 2 rows)", 443},
		{"graph: negative token type", true, "", 2, [][]int64{{0, -3}}, "Input 'token_type_ids' at [0, 1]: token type -3 is out of range", 443},
		{"graph: too long", true, "", 0, [][]int64{ones(129)}, "Input 'input_ids' has 129 tokens per text (shape [1, 129]): the model has 128 positions (its position embeddings have 128 rows)", 443},
		{"graph: at the bounds", true, "", 0, [][]int64{append(ones(127), 443)}, "", 443},
		{"graph wins over config.json", true, `{"vocab_size": 300, "type_vocab_size": 5}`, 0, [][]int64{{300}}, "", 443},
		{"config.json: vocab_size", false, `{"vocab_size": 300, "type_vocab_size": 3}`, 0, [][]int64{{1, 300}}, "Input 'input_ids' at [0, 1]: id 300 is out of the vocabulary: the model takes 0 to 299 (", 299},
		{"config.json: type_vocab_size", false, `{"vocab_size": 300, "type_vocab_size": 3}`, 2, [][]int64{{2, 3}}, "Input 'token_type_ids' at [0, 1]: token type 3 is out of range: the model takes 0 to 2 (", 299},
		{"config.json: no positions, any length", false, `{"vocab_size": 300}`, 0, [][]int64{ones(1000)}, "", 299},
		{"config.json not numbers: the tokenizer", false, `{"vocab_size": "many", "type_vocab_size": null}`, 0, [][]int64{{vocab}}, "the tokenizer has", vocab - 1},
		{"the tokenizer", false, "", 0, [][]int64{{vocab}}, "the model takes 0 to " + itoa(vocab-1) + " (the tokenizer has " + itoa(vocab) + " ids)", vocab - 1},
		{"no token types known: from 0", false, "", 2, [][]int64{{7, -1}}, "Input 'token_type_ids' at [0, 1]: token type -1 is out of range: token types are 0 or more", vocab - 1},
		{"roberta: positions after the padding id", true, roberta, 0, [][]int64{ones(127)}, "Input 'input_ids' has 127 tokens per text (shape [1, 127]): the model has 126 positions (its position embeddings have 128 rows, and roberta's position ids start at pad_token_id + 1 = 2)", 443},
		{"roberta: 126 tokens", true, roberta, 0, [][]int64{ones(126)}, "", 443},
	}
	for _, tt := range tests {
		for _, dt := range []tensor.DType{tensor.Int64, tensor.Int32} {
			t.Run(tt.name+" "+dt.String(), func(t *testing.T) {
				model, tok := idFolder(t, tt.graph, tt.config)
				x, err := idText(t, dt, model, tok, nil)
				if err != nil {
					t.Fatal(err)
				}
				in := make([]*tensor.Tensor, 3)
				in[tt.input] = ids(dt, tt.rows...)
				err = x.CheckIDs(in)
				var ie *core.InputError
				switch {
				case tt.want == "" && err != nil:
					t.Fatalf("CheckIDs: %v", err)
				case tt.want != "" && (!errors.As(err, &ie) || !strings.Contains(err.Error(), tt.want)):
					t.Fatalf("CheckIDs: %v, want an input error with %q", err, tt.want)
				case ie != nil && ie.Input != [...]string{"input_ids", "", "token_type_ids"}[tt.input]:
					t.Fatalf("the error names input %q", ie.Input)
				}
				// The largest id passes, the next does not.
				if err := x.CheckIDs([]*tensor.Tensor{ids(dt, []int64{0, tt.wantVocabAt})}); err != nil {
					t.Fatalf("id %d: %v", tt.wantVocabAt, err)
				}
				if err := x.CheckIDs([]*tensor.Tensor{ids(dt, []int64{0, tt.wantVocabAt + 1})}); err == nil {
					t.Fatalf("id %d passes", tt.wantVocabAt+1)
				}
			})
		}
	}
	// Nothing to check: a nil text, absent inputs.
	var none *Text
	if err := none.CheckIDs([]*tensor.Tensor{ids(tensor.Int64, []int64{-5})}); err != nil {
		t.Fatal(err)
	}
	model, tok := idFolder(t, true, "")
	x, err := idText(t, tensor.Int64, model, tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.CheckIDs(make([]*tensor.Tensor, 3)); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestRobertaMaxLength: the maximum length of a text counts the positions
// a RoBERTa-style model has for tokens: max_length past them fails at
// start, and with no truncation in the tokenizer, they are the cap.
func TestRobertaMaxLength(t *testing.T) {
	model, tok := idFolder(t, true, `{"model_type": "xlm-roberta", "pad_token_id": 1}`)
	if _, err := idText(t, tensor.Int64, model, tok, &config.Text{MaxLength: 127}); err == nil || !strings.Contains(err.Error(), "127 tokens, but the model has 126 positions") {
		t.Fatalf("max_length 127: %v", err)
	}
	x, err := idText(t, tensor.Int64, model, tok, &config.Text{MaxLength: 126})
	if err != nil || x.MaxLength != 126 {
		t.Fatalf("max_length 126: %v, %v", x, err)
	}
	// pad_token_id 0: one row before the first token.
	model, tok = idFolder(t, true, `{"model_type": "mpnet", "pad_token_id": 0}`)
	if _, err := idText(t, tensor.Int64, model, tok, &config.Text{MaxLength: 128}); err == nil || !strings.Contains(err.Error(), "but the model has 127 positions") {
		t.Fatalf("mpnet: %v", err)
	}
	// A BERT counts every row.
	model, tok = idFolder(t, true, `{"model_type": "bert", "pad_token_id": 0}`)
	if x, err := idText(t, tensor.Int64, model, tok, &config.Text{MaxLength: 128}); err != nil || x.MaxLength != 128 {
		t.Fatalf("bert: %v %v", x, err)
	}
}
