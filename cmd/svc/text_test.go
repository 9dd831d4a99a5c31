package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
	"github.com/svc-dev/svc/transport/oip"
)

// bertTokenizer is the tokenizer tiny_bert.onnx was made for.
func bertTokenizer() string {
	return filepath.Join(repoRoot, "core", "codec", "tokenizer", "testdata", "fixtures", "bert-uncased.json")
}

// sentences are texts of different lengths, one past the tokenizer's
// 48 tokens.
var sentences = []string{
	"hello world",
	"Machine learning is fun, and the tokenizer splits words into pieces.",
	"a",
	strings.Repeat("the quick brown fox jumps over the lazy dog ", 8),
}

// textFolder assembles a model folder as the Hub has them: tiny_bert.onnx
// as model.onnx, the bert-uncased tokenizer as tokenizer.json and, with
// pooling set, the sentence-transformers files (modules.json with a
// Pooling module configured so and a Normalize module).
func textFolder(t *testing.T, pooling string) string {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, model("tiny_bert.onnx"), filepath.Join(dir, "model.onnx"))
	copyFile(t, bertTokenizer(), filepath.Join(dir, "tokenizer.json"))
	if pooling == "" {
		return dir
	}
	modules := `[{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
{"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},
{"idx":2,"name":"2","path":"2_Normalize","type":"sentence_transformers.models.Normalize"}]`
	writeFile(t, filepath.Join(dir, "modules.json"), modules)
	writeFile(t, filepath.Join(dir, "1_Pooling", "config.json"), `{"word_embedding_dimension": 32, `+pooling+`}`)
	return dir
}

const meanPooling = `"pooling_mode_cls_token": false, "pooling_mode_mean_tokens": true, "pooling_mode_max_tokens": false, "pooling_mode_mean_sqrt_len_tokens": false`

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// embeddings posts {"text": texts} and returns the embeddings.
func embeddings(t *testing.T, s *server, texts ...string) [][]float64 {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"text": texts})
	r := s.predict(string(body))
	var out struct {
		Embedding [][]float64 `json:"embedding"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &out) != nil || len(out.Embedding) != len(texts) {
		t.Fatalf("text %q: %d %s", texts, r.Status, r.Body)
	}
	return out.Embedding
}

// hiddenStates posts the ids the Go tokenizer gives texts and returns
// them with the model's raw last_hidden_state.
func hiddenStates(t *testing.T, s *server, texts []string) (map[string][][]int64, json.RawMessage) {
	t.Helper()
	hidden, ids, _ := modelOutput(t, s, "last_hidden_state", texts, nil)
	return ids, hidden
}

// numpyPool is mean pooling over the attention mask and L2
// normalisation, as sentence-transformers computes them, in numpy.
const numpyPool = `
import json, sys
import numpy as np
d = json.load(sys.stdin)
h = np.array(d["hidden"], dtype=np.float64)
m = np.array(d["mask"], dtype=np.float64)[:, :, None]
e = (h * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
e = e / np.clip(np.linalg.norm(e, axis=1, keepdims=True), 1e-12, None)
json.dump(e.tolist(), sys.stdout)
`

// TestTextEmbeddings serves a model folder with no svc.yml: the text
// embeddings of a batch of different lengths equal numpy's mean pooling
// and L2 normalisation of the model's own hidden states for the ids the
// tokenizer gives; each text alone gets the same answer as in the batch;
// the Open Inference Protocol's REST and gRPC answer the same.
func TestTextEmbeddings(t *testing.T) {
	t.Parallel()
	sequential(t)
	port := freePort(t)
	dir := textFolder(t, meanPooling)
	s := startServer(t, dir, "--grpc-port", port)
	got := embeddings(t, s, sentences...)
	t.Run("numpy", func(t *testing.T) {
		skipShort(t, "pools in numpy with Debian's python3-numpy")
		ids, hidden := hiddenStates(t, s, sentences)
		in, _ := json.Marshal(map[string]any{"hidden": hidden, "mask": ids["attention_mask"]})
		cmd := exec.Command("/usr/bin/python3", "-c", numpyPool)
		cmd.Stdin = strings.NewReader(string(in))
		outb, err := cmd.Output()
		if err != nil {
			t.Fatalf("numpy: %v", err)
		}
		var want [][]float64
		if err := json.Unmarshal(outb, &want); err != nil {
			t.Fatal(err)
		}
		closeTo(t, "numpy", got, want, 1e-5)
		if n := len(ids["input_ids"][3]); n != 48 {
			t.Errorf("the long text has %d tokens, want the tokenizer's 48", n)
		}
	})
	for i, text := range sentences {
		closeTo(t, fmt.Sprintf("alone %d", i), embeddings(t, s, text), got[i:i+1], 1e-5)
	}
	pair := s.predict(`{"text": "hello world", "text_pair": "machine learning"}`)
	if pair.Status != http.StatusOK || !strings.HasPrefix(string(pair.Body), `{"embedding":[[`) {
		t.Fatalf("pair: %d %s", pair.Status, pair.Body)
	}
	textOIP(t, s, port, filepath.Base(dir), got)
}

// textOIP checks the Open Inference Protocol: metadata, REST and gRPC
// embeddings equal to want (the v1 API's), invalid UTF-8 in binary BYTES.
func textOIP(t *testing.T, s *server, port, name string, want [][]float64) {
	ctx := context.Background()
	mm, err := s.oipClient().ModelMetadata(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if in := mm.Inputs[len(mm.Inputs)-2:]; !reflect.DeepEqual(in, []oip.TensorMetadata{{Name: "text", Datatype: "BYTES", Shape: []int64{-1}}, {Name: "text_pair", Datatype: "BYTES", Shape: []int64{-1}}}) ||
		!reflect.DeepEqual(mm.Outputs[len(mm.Outputs)-1], oip.TensorMetadata{Name: "embedding", Datatype: "FP32", Shape: []int64{-1, 32}}) {
		t.Fatalf("metadata: %+v", mm)
	}
	texts := &tensor.Tensor{DType: tensor.String, Shape: []int64{int64(len(sentences))}, Data: sentences}
	res, err := s.oipClient().Infer(ctx, name, &oip.InferRequest{Inputs: []oip.InferInput{{Name: "text", Tensor: texts}}})
	if err != nil {
		t.Fatal(err)
	}
	o := res.Output("embedding")
	if o == nil || !reflect.DeepEqual(o.Shape, []int64{int64(len(sentences)), 32}) {
		t.Fatalf("REST output %+v", res)
	}
	closeTo(t, "OIP REST", rows(o.Data.([]float32), 32), want, 0)

	c := grpcClient(t, "127.0.0.1:"+port)
	bytes := make([][]byte, len(sentences))
	for i, s := range sentences {
		bytes[i] = []byte(s)
	}
	req := &inference.ModelInferRequest{ModelName: name, Inputs: []*inference.ModelInferRequest_InferInputTensor{{
		Name: "text", Datatype: "BYTES", Shape: []int64{int64(len(sentences))},
		Contents: &inference.InferTensorContents{BytesContents: bytes},
	}}}
	resp, err := c.Infer(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	out := resp.GetOutputs()[0]
	if out.GetName() != "embedding" || out.GetDatatype() != "FP32" || !reflect.DeepEqual(out.GetShape(), []int64{int64(len(sentences)), 32}) {
		t.Fatalf("gRPC output %v", out)
	}
	closeTo(t, "gRPC", rows(grpcFloats(t, resp), 32), want, 0)
	bytes[1] = []byte{'a', 0xff}
	_, err = c.Infer(ctx, req)
	if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "'text', item 1: invalid UTF-8") {
		t.Fatalf("gRPC invalid UTF-8: %v", err)
	}
}

// grpcFloats is the first output's FP32 values, from contents or raw.
func grpcFloats(t *testing.T, resp *inference.ModelInferResponse) []float32 {
	if f := resp.GetOutputs()[0].GetContents().GetFp32Contents(); len(f) > 0 {
		return f
	}
	raw := resp.GetRawOutputContents()
	if len(raw) != 1 {
		t.Fatalf("gRPC: no values")
	}
	out := make([]float32, len(raw[0])/4)
	for i := range out {
		b := raw[0][4*i:]
		out[i] = math.Float32frombits(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
	}
	return out
}

func rows(data []float32, dim int) [][]float64 {
	out := make([][]float64, len(data)/dim)
	for i := range out {
		for _, v := range data[i*dim : (i+1)*dim] {
			out[i] = append(out[i], float64(v))
		}
	}
	return out
}

// closeTo fails unless got and want are equal within tol, element-wise
// (tol 0: equal as float32).
func closeTo(t *testing.T, what string, got, want [][]float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d vectors, want %d", what, len(got), len(want))
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("%s: vector %d has %d values, want %d", what, i, len(got[i]), len(want[i]))
		}
		for j := range got[i] {
			// tol 0: the same float32 (the v1 API writes its shortest form).
			if tol == 0 && float32(got[i][j]) != float32(want[i][j]) || math.Abs(got[i][j]-want[i][j]) > tol && tol > 0 {
				t.Fatalf("%s: vector %d [%d] = %v, want %v (±%g)", what, i, j, got[i][j], want[i][j], tol)
			}
		}
	}
}

// textConfig writes an svc.yml serving tiny_bert.onnx as "emb" with the
// given models.emb.text settings (YAML flow mapping), the tokenizer named.
func textConfig(t *testing.T, text string) string {
	t.Helper()
	dir := textFolder(t, "")
	p := filepath.Join(dir, "svc.yml")
	writeFile(t, p, fmt.Sprintf("models:\n  emb:\n    path: %s\n    text: %s\n", filepath.Join(dir, "model.onnx"), text))
	return p
}

// TestTextBadInput: text that is not a string, a list with an item that
// is not, invalid UTF-8 and a text too long with truncation off are 400s
// naming the input and the item; a request with the id inputs still runs.
func TestTextBadInput(t *testing.T) {
	t.Parallel()
	sequential(t)
	s := startServer(t, "emb", "--config", textConfig(t, "{truncation: false, max_length: 8, pooling: cls, normalize: false}"))
	tests := []struct {
		name, body, want string
	}{
		{"a number", `{"text": 3}`, "Input 'text': expected a string or a list of strings, got a number"},
		{"an object", `{"text": {"a": 1}}`, "Input 'text': expected a string or a list of strings, got an object"},
		{"a number in the list", `{"text": ["a", 3]}`, "'text' at [1]: expected a string, got a number"},
		{"a lone surrogate", `{"text": ["a", "b\ud800"]}`, "'text' at [1]: lone surrogate"},
		{"too long", `{"text": ["a", "one two three four five six seven"]}`, "Input 'text', item 1: 20 tokens, over the maximum length of 8 (truncation is off)"},
		{"too long, one text", `{"text": "one two three four five six seven"}`, "Input 'text': 20 tokens, over the maximum length of 8"},
		{"nested", `{"text": [["a"]]}`, "not a nested list"},
		{"pair count", `{"text": ["a", "b"], "text_pair": ["c"]}`, "Input 'text_pair' has 1 texts, 'text' 2"},
		{"empty list", `{"text": []}`, "send a text or a list of texts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.predict(tt.body)
			if r.Status != http.StatusBadRequest || !strings.Contains(r.Detail(t), tt.want) {
				t.Fatalf("%d %s, want a 400 saying %q", r.Status, r.Body, tt.want)
			}
		})
	}
	// The OpenAPI document takes text and answers embedding.
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if r := s.get("/openapi.json"); r.Status != http.StatusOK || json.Unmarshal(r.Body, &doc) != nil {
		t.Fatalf("openapi.json: %d", r.Status)
	}
	req, resp := doc.Components.Schemas["PredictRequest"], doc.Components.Schemas["PredictResponse"]
	if req.Properties["text"] == nil || req.Properties["text_pair"] == nil || len(req.Required) != 0 || resp.Properties["embedding"] == nil {
		t.Fatalf("openapi.json: request %v (required %v), response %v", req.Properties, req.Required, resp.Properties)
	}
	// cls pooling without normalisation: the first token's hidden state.
	got := embeddings(t, s, "hello")
	_, hidden := hiddenStates(t, s, []string{"hello"})
	var h [][][]float64
	if err := json.Unmarshal(hidden, &h); err != nil {
		t.Fatal(err)
	}
	closeTo(t, "cls", got, h[0][:1], 0)
}

// TestTextStartFailures: a text declaration or a model folder that does
// not fit fails at start, saying why.
func TestTextStartFailures(t *testing.T) {
	t.Parallel()
	sequential(t)
	tests := []struct {
		name string
		args func(t *testing.T) []string
		want string
	}{
		{"an unknown task", func(t *testing.T) []string {
			return []string{"emb", "--config", textConfig(t, "{task: summarization}")}
		}, "models.emb.text.task 'summarization' is not a text task: want embedding, classification or token-classification"},
		{"classification of hidden states", func(t *testing.T) []string {
			return []string{"emb", "--config", textConfig(t, "{task: classification}")}
		}, "text: output 'last_hidden_state' has shape [-1, -1, 32]: classification (task from svc.yml) reads logits [batch, labels]"},
		{"token classification of a classifier", func(t *testing.T) []string {
			dir := taskFolder(t, "tiny_bert_classifier", "")
			writeFile(t, filepath.Join(dir, "config.json"), `{"architectures": ["BertForTokenClassification"]}`)
			return []string{dir}
		}, "output 'logits' has shape [-1, 3]: token-classification (token classification from "},
		{"labels that do not fit the logits", func(t *testing.T) []string {
			return []string{taskFolder(t, "tiny_bert_classifier", `{"architectures": ["BertForSequenceClassification"], "id2label": {"0": "no", "1": "yes"}}`)}
		}, "text.labels: 2 labels (from "},
		{"svc.yml labels that do not fit", func(t *testing.T) []string {
			dir := taskFolder(t, "tiny_bert_ner", "")
			p := filepath.Join(dir, "svc.yml")
			writeFile(t, p, fmt.Sprintf("models:\n  ner:\n    path: %s\n    text: {labels: [O, B-PER]}\n", filepath.Join(dir, "model.onnx")))
			return []string{"ner", "--config", p}
		}, "text.labels: 2 labels (from svc.yml), but the model's logits have 9 classes"},
		{"a config.json that is not JSON", func(t *testing.T) []string {
			return []string{taskFolder(t, "tiny_bert_classifier", `{"architectures": [`)}
		}, "config.json: unexpected end of JSON input"},
		{"an activation svc does not know", func(t *testing.T) []string {
			return []string{"emb", "--config", textConfig(t, "{task: classification, activation: relu}")}
		}, "models.emb.text.activation 'relu' is not an activation"},
		{"top_k on embeddings", func(t *testing.T) []string {
			return []string{"emb", "--config", textConfig(t, "{task: embedding, top_k: 3}")}
		}, "embedding takes no labels, activation or top_k"},
		{"unknown pooling", func(t *testing.T) []string {
			return []string{"emb", "--config", textConfig(t, "{pooling: weighted}")}
		}, "models.emb.text.pooling 'weighted' is not a pooling"},
		{"a model without input_ids", func(t *testing.T) []string {
			p := filepath.Join(t.TempDir(), "svc.yml")
			writeFile(t, p, fmt.Sprintf("models:\n  iris:\n    path: %s\n    text: {tokenizer: %s}\n", model("classifier.onnx"), bertTokenizer()))
			return []string{"iris", "--config", p}
		}, "text: the model has no input 'input_ids'"},
		{"a pooling svc does not serve", func(t *testing.T) []string {
			return []string{textFolder(t, `"pooling_mode_mean_sqrt_len_tokens": true`)}
		}, "pooling modes [pooling_mode_mean_sqrt_len_tokens]"},
		{"a tokenizer larger than the embeddings", func(t *testing.T) []string {
			dir := textFolder(t, "")
			var tok map[string]any
			data, _ := os.ReadFile(bertTokenizer())
			if err := json.Unmarshal(data, &tok); err != nil {
				t.Fatal(err)
			}
			tok["added_tokens"] = append(tok["added_tokens"].([]any), map[string]any{"id": 600, "content": "[EXTRA]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true})
			data, _ = json.Marshal(tok)
			writeFile(t, filepath.Join(dir, "tokenizer.json"), string(data))
			return []string{dir}
		}, "gives ids up to 444, but the model's word embeddings have 444 rows"},
		{"a Dense module", func(t *testing.T) []string {
			dir := textFolder(t, `"pooling_mode_mean_tokens": true`)
			writeFile(t, filepath.Join(dir, "modules.json"), `[{"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}, {"path": "2_Dense", "type": "sentence_transformers.models.Dense"}]`)
			return []string{dir}
		}, "module '2_Dense' (sentence_transformers.models.Dense) is not one svc applies"},
		{"a tokenizer svc.yml names that is not there", func(t *testing.T) []string {
			return []string{"emb", "--config", textConfig(t, "{tokenizer: nowhere/tokenizer.json}")}
		}, "text.tokenizer: open "},
		{"a tokenizer svc.yml names that is not JSON", func(t *testing.T) []string {
			p := textConfig(t, "{tokenizer: broken.json}")
			writeFile(t, filepath.Join(filepath.Dir(p), "broken.json"), `{"model": `)
			return []string{"emb", "--config", p}
		}, "broken.json: tokenizer.json: unexpected end of JSON input"},
		{"a label file svc.yml names that is not there", func(t *testing.T) []string {
			dir := taskFolder(t, "tiny_bert_classifier", "")
			p := filepath.Join(dir, "svc.yml")
			writeFile(t, p, fmt.Sprintf("models:\n  cls:\n    path: %s\n    text: {labels: nowhere.txt}\n", filepath.Join(dir, "model.onnx")))
			return []string{"cls", "--config", p}
		}, "nowhere.txt: no such file or directory"},
		{"max_length past the positions", func(t *testing.T) []string {
			return []string{"emb", "--config", textConfig(t, "{max_length: 200}")}
		}, "text.max_length: 200 tokens, but the model has 128 positions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"serve"}, tt.args(t)...)
			code, _, stderr := runSvc(t, nil, append(args, "--host", "127.0.0.1", "--port", "0")...)
			if code == 0 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr does not say %q:\n%s", code, tt.want, stderr)
			}
		})
	}
}

// TestTextUnknownTokenizerPart: a model folder whose tokenizer.json has a
// part svc does not know (a model, normalizer, pre-tokenizer,
// post-processor or decoder type; or one it knows but cannot reproduce)
// fails svc serve and svc init, the error naming the file, the type and
// the types svc knows, and saying what to do; it was served by its ids
// alone, and a client sending text learnt of it from a missing input_ids.
func TestTextUnknownTokenizerPart(t *testing.T) {
	t.Parallel()
	sequential(t)
	tests := []struct {
		name string
		edit func(tok map[string]any)
		want string
	}{
		{"model", func(tok map[string]any) { tok["model"].(map[string]any)["type"] = "QuantumPiece" },
			`model.type "QuantumPiece" is not supported: svc knows BPE, Unigram, WordPiece`},
		{"WordLevel, known but not reproduced", func(tok map[string]any) {
			tok["model"] = map[string]any{"type": "WordLevel", "vocab": map[string]any{}}
		},
			`model.type "WordLevel" is not supported: svc knows BPE, Unigram, WordPiece`},
		{"normalizer", func(tok map[string]any) { tok["normalizer"] = map[string]any{"type": "QuantumNorm"} },
			`normalizer.type "QuantumNorm" is not supported: svc knows BertNormalizer, Lowercase, NFC, NFD, NFKC, NFKD, Nmt, Precompiled, Prepend, Replace, Sequence, Strip, StripAccents`},
		{"pre-tokenizer", func(tok map[string]any) { tok["pre_tokenizer"] = map[string]any{"type": "QuantumSplit"} },
			`pre_tokenizer.type "QuantumSplit" is not supported: svc knows BertPreTokenizer, ByteLevel, CharDelimiterSplit, Digits, Metaspace, Punctuation, Sequence, Split, Whitespace, WhitespaceSplit`},
		{"post-processor", func(tok map[string]any) { tok["post_processor"] = map[string]any{"type": "QuantumTemplate"} },
			`post_processor.type "QuantumTemplate" is not supported: svc knows BertProcessing, ByteLevel, RobertaProcessing, Sequence, TemplateProcessing`},
		{"decoder", func(tok map[string]any) { tok["decoder"] = map[string]any{"type": "QuantumDecoder"} },
			`decoder.type "QuantumDecoder" is not supported: svc knows BPEDecoder, ByteFallback, ByteLevel, CTC, Fuse, Metaspace, Replace, Sequence, Strip, WordPiece`},
		{"a decoder in a sequence", func(tok map[string]any) {
			tok["decoder"] = map[string]any{"type": "Sequence", "decoders": []any{map[string]any{"type": "Fuse"}, map[string]any{"type": "QuantumDecoder"}}}
		}, `decoder.decoders[1].type "QuantumDecoder" is not supported: svc knows BPEDecoder,`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := textFolder(t, "")
			var tok map[string]any
			data, err := os.ReadFile(bertTokenizer())
			if err != nil || json.Unmarshal(data, &tok) != nil {
				t.Fatalf("%s: %v", bertTokenizer(), err)
			}
			tt.edit(tok)
			data, _ = json.Marshal(tok)
			file := filepath.Join(dir, "tokenizer.json")
			writeFile(t, file, string(data))
			wants := []string{"text.tokenizer: " + file + ": " + tt.want, "mend the file, or move it out of the folder to serve the model by its token ids alone"}
			if _, err := tryLaunchServer(t, patience, svcCmd(t, nil, "serve", dir, "--host", "127.0.0.1", "--port", "0")); err == nil {
				t.Fatal("svc serve served the folder")
			} else {
				for _, want := range wants {
					if !strings.Contains(err.Error(), want) {
						t.Fatalf("serve: the error does not say %q:\n%v", want, err)
					}
				}
			}
			code, _, stderr := runSvc(t, nil, "init", "--model", dir, "--name", "m")
			for _, want := range wants {
				if code == 0 || !strings.Contains(stderr, want) {
					t.Fatalf("init: exit %d, stderr does not say %q:\n%s", code, want, stderr)
				}
			}
			// Named in svc.yml, the same file fails alike.
			p := filepath.Join(dir, "svc.yml")
			writeFile(t, p, fmt.Sprintf("models:\n  emb:\n    path: %s\n    text: {}\n", filepath.Join(dir, "model.onnx")))
			code, _, stderr = runSvc(t, nil, "serve", "emb", "--config", p, "--host", "127.0.0.1", "--port", "0")
			if code == 0 || !strings.Contains(stderr, "text.tokenizer: "+file+": "+tt.want) {
				t.Fatalf("declared: exit %d\n%s", code, stderr)
			}
		})
	}
}
