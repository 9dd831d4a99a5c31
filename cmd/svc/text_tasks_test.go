package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/codec/tokenizer"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
	"github.com/svc-dev/svc/transport/oip"
)

// taskFolder assembles a Hub-like folder of a generated head model
// (testdata/models/NAME: model.onnx and config.json) with the
// bert-uncased tokenizer; config, when set, replaces config.json.
func taskFolder(t *testing.T, name, config string) string {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, model(filepath.Join(name, "model.onnx")), filepath.Join(dir, "model.onnx"))
	copyFile(t, bertTokenizer(), filepath.Join(dir, "tokenizer.json"))
	if config != "" {
		writeFile(t, filepath.Join(dir, "config.json"), config)
	} else {
		copyFile(t, model(filepath.Join(name, "config.json")), filepath.Join(dir, "config.json"))
	}
	return dir
}

// label is an item of the labels answer.
type label struct {
	Label string  `json:"label"`
	Index int     `json:"index"`
	Score float64 `json:"score"`
}

// entity is an item of the entities answer.
type entity struct {
	Entity string  `json:"entity"`
	Start  int     `json:"start"`
	End    int     `json:"end"`
	Text   string  `json:"text"`
	Score  float64 `json:"score"`
}

// postText posts {"text": texts} (and text_pair, when pairs is set) and
// decodes the answer under key into out.
func postText(t *testing.T, s *server, key string, out any, texts, pairs []string) {
	t.Helper()
	req := map[string]any{"text": texts}
	if pairs != nil {
		req["text_pair"] = pairs
	}
	body, _ := json.Marshal(req)
	r := s.predict(string(body))
	var ans map[string]json.RawMessage
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &ans) != nil || ans[key] == nil || json.Unmarshal(ans[key], out) != nil {
		t.Fatalf("text %q: %d %s", texts, r.Status, r.Body)
	}
}

// modelOutput posts the ids the Go tokenizer gives texts (pairs with
// pairs; the tokenizer equals the reference library's, make tokref),
// padded as its tokenizer.json says, and returns the model's raw output
// (last_hidden_state, logits) with the ids and the encodings.
func modelOutput(t *testing.T, s *server, output string, texts, pairs []string) (json.RawMessage, map[string][][]int64, []tokenizer.Encoding) {
	t.Helper()
	tok, err := tokenizer.Load(bertTokenizer())
	if err != nil {
		t.Fatal(err)
	}
	var encs []tokenizer.Encoding
	if pairs == nil {
		if encs, err = tok.EncodeBatch(texts, true); err != nil {
			t.Fatal(err)
		}
	} else {
		for i := range texts {
			e, err := tok.EncodePair(texts[i], pairs[i], true)
			if err != nil {
				t.Fatal(err)
			}
			encs = append(encs, e)
		}
		encs = padded(encs)
	}
	ids := map[string][][]int64{}
	for _, e := range encs {
		ids["input_ids"] = append(ids["input_ids"], e.IDs)
		ids["attention_mask"] = append(ids["attention_mask"], e.AttentionMask)
		ids["token_type_ids"] = append(ids["token_type_ids"], e.TypeIDs)
	}
	body, _ := json.Marshal(ids)
	r := s.predict(string(body))
	var out map[string]json.RawMessage
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &out) != nil || out[output] == nil {
		t.Fatalf("ids: %d %s", r.Status, r.Body)
	}
	return out[output], ids, encs
}

// rawLogits is the model's raw logits for texts (and pairs), with the
// encodings.
func rawLogits(t *testing.T, s *server, texts, pairs []string) (json.RawMessage, []tokenizer.Encoding) {
	t.Helper()
	logits, _, encs := modelOutput(t, s, "logits", texts, pairs)
	return logits, encs
}

// padded pads encodings to the longest with [PAD] (438), mask 0.
func padded(encs []tokenizer.Encoding) []tokenizer.Encoding {
	n := 0
	for _, e := range encs {
		n = max(n, len(e.IDs))
	}
	for i := range encs {
		for len(encs[i].IDs) < n {
			encs[i].IDs = append(encs[i].IDs, 438)
			encs[i].AttentionMask = append(encs[i].AttentionMask, 0)
			encs[i].TypeIDs = append(encs[i].TypeIDs, 0)
		}
	}
	return encs
}

// python runs a numpy program with in as its JSON stdin and decodes its
// JSON stdout into out.
func python(t *testing.T, program string, in, out any) {
	t.Helper()
	data, _ := json.Marshal(in)
	cmd := exec.Command("/usr/bin/python3", "-c", program)
	cmd.Stdin = strings.NewReader(string(data))
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 (Debian's python3-numpy): %v", err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("python3: %v: %s", err, b)
	}
}

// numpyLabels scores each row of logits with softmax or sigmoid in numpy
// and lists every label, best first (a stable sort: ties by index).
const numpyLabels = `
import json, sys
import numpy as np
d = json.load(sys.stdin)
z = np.array(d["logits"], dtype=np.float64)
if d["activation"] == "softmax":
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
else:
    p = 1 / (1 + np.exp(-z))
out = []
for row in p:
    order = np.argsort(-row, kind="stable")[:d["k"]]
    out.append([{"label": d["labels"][i], "index": int(i), "score": float(row[i])} for i in order])
json.dump(out, sys.stdout)
`

// sameLabels fails unless got and want list the same labels in the same
// order with scores within 1e-6.
func sameLabels(t *testing.T, what string, got, want [][]label) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d texts, want %d", what, len(got), len(want))
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("%s: text %d: %v, want %v", what, i, got[i], want[i])
		}
		for j := range got[i] {
			g, w := got[i][j], want[i][j]
			if g.Label != w.Label || g.Index != w.Index || math.Abs(g.Score-w.Score) > 1e-6 {
				t.Fatalf("%s: text %d: %v, want %v", what, i, got[i], want[i])
			}
		}
	}
}

var sentiment = []string{"negative", "neutral", "positive"}

// TestTextClassification serves the generated classifier's folder with no
// svc.yml (config.json says BertForSequenceClassification): the labels of
// a batch of texts of different lengths, and of pairs, equal numpy's
// softmax of the model's own logits for the tokenizer's ids, best first;
// each text alone answers the same; the Open Inference Protocol's REST and
// gRPC answer the same scores as Triton's classification strings.
func TestTextClassification(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	dir := taskFolder(t, "tiny_bert_classifier", "")
	s := startServer(t, dir, "--grpc-port", port)
	var got [][]label
	postText(t, s, "labels", &got, sentences, nil)
	if len(got) != len(sentences) || len(got[0]) != 3 {
		t.Fatalf("labels: %v", got)
	}
	t.Run("numpy", func(t *testing.T) {
		skipShort(t, "scores in numpy with Debian's python3-numpy")
		logits, _ := rawLogits(t, s, sentences, nil)
		var want [][]label
		python(t, numpyLabels, map[string]any{"logits": logits, "activation": "softmax", "k": 3, "labels": sentiment}, &want)
		sameLabels(t, "softmax", got, want)
	})
	for i, text := range sentences {
		var alone [][]label
		postText(t, s, "labels", &alone, []string{text}, nil)
		if !reflect.DeepEqual(alone[0], got[i]) {
			t.Fatalf("text %d alone %v, in the batch %v", i, alone[0], got[i])
		}
	}
	t.Run("pairs", func(t *testing.T) {
		skipShort(t, "scores in numpy with Debian's python3-numpy")
		texts, pairs := []string{"is it raining?", "who wrote this"}, []string{"it rains all day in the city", "a"}
		var gotPairs [][]label
		postText(t, s, "labels", &gotPairs, texts, pairs)
		logits, _ := rawLogits(t, s, texts, pairs)
		var want [][]label
		python(t, numpyLabels, map[string]any{"logits": logits, "activation": "softmax", "k": 3, "labels": sentiment}, &want)
		sameLabels(t, "pairs", gotPairs, want)
		// gRPC takes the pairs as a BYTES input text_pair beside text.
		resp, err := grpcClient(t, "127.0.0.1:"+port).Infer(context.Background(), &inference.ModelInferRequest{ModelName: filepath.Base(dir), Inputs: []*inference.ModelInferRequest_InferInputTensor{
			{Name: "text", Datatype: "BYTES", Shape: []int64{2}, Contents: &inference.InferTensorContents{BytesContents: [][]byte{[]byte(texts[0]), []byte(texts[1])}}},
			{Name: "text_pair", Datatype: "BYTES", Shape: []int64{2}, Contents: &inference.InferTensorContents{BytesContents: [][]byte{[]byte(pairs[0]), []byte(pairs[1])}}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, b := range resp.GetOutputs()[0].GetContents().GetBytesContents() {
			got = append(got, string(b))
		}
		if len(got) == 0 {
			got = rawStrings(resp.GetRawOutputContents())
		}
		var wantStrings []string
		for _, item := range gotPairs {
			for _, c := range item {
				wantStrings = append(wantStrings, fmt.Sprintf("%f:%d:%s", c.Score, c.Index, c.Label))
			}
		}
		sameStrings(t, "gRPC pairs", got, wantStrings)
	})

	name := filepath.Base(dir)
	mm, err := s.oipClient().ModelMetadata(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if last := mm.Outputs[len(mm.Outputs)-1]; !reflect.DeepEqual(last, oip.TensorMetadata{Name: "labels", Datatype: "BYTES", Shape: []int64{-1, 3}}) {
		t.Fatalf("metadata: %+v", mm.Outputs)
	}
	want := make([]string, 0, 3*len(got))
	for _, item := range got {
		for _, c := range item {
			want = append(want, fmt.Sprintf("%f:%d:%s", c.Score, c.Index, c.Label))
		}
	}
	oipStrings(t, s, port, name, sentences, "labels", []int64{int64(len(sentences)), 3}, want)
}

// oipStrings checks that the Open Inference Protocol's REST and gRPC
// answer output to sentences as BYTES of shape with the strings want
// (scores within the last of Triton's six decimals).
func oipStrings(t *testing.T, s *server, port, name string, sentences []string, output string, shape []int64, want []string) {
	t.Helper()
	texts := &tensor.Tensor{DType: tensor.String, Shape: []int64{int64(len(sentences))}, Data: sentences}
	res, err := s.oipClient().Infer(context.Background(), name, &oip.InferRequest{Inputs: []oip.InferInput{{Name: "text", Tensor: texts}}})
	if err != nil {
		t.Fatal(err)
	}
	o := res.Output(output)
	if o == nil || !reflect.DeepEqual(o.Shape, shape) {
		t.Fatalf("REST: %+v", res)
	}
	sameStrings(t, "REST", o.Data.([]string), want)
	bytes := make([][]byte, len(sentences))
	for i, s := range sentences {
		bytes[i] = []byte(s)
	}
	resp, err := grpcClient(t, "127.0.0.1:"+port).Infer(context.Background(), &inference.ModelInferRequest{ModelName: name, Inputs: []*inference.ModelInferRequest_InferInputTensor{{
		Name: "text", Datatype: "BYTES", Shape: []int64{int64(len(sentences))},
		Contents: &inference.InferTensorContents{BytesContents: bytes},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	out := resp.GetOutputs()[0]
	if out.GetName() != output || out.GetDatatype() != "BYTES" || !reflect.DeepEqual(out.GetShape(), shape) {
		t.Fatalf("gRPC output %v", out)
	}
	var got []string
	for _, b := range out.GetContents().GetBytesContents() {
		got = append(got, string(b))
	}
	if len(got) == 0 {
		got = rawStrings(resp.GetRawOutputContents())
	}
	sameStrings(t, "gRPC", got, want)
}

// rawStrings reads BYTES elements from raw contents: a 4-byte
// little-endian length before each.
func rawStrings(raw [][]byte) []string {
	var out []string
	for len(raw) > 0 && len(raw[0]) >= 4 {
		b := raw[0]
		n := int(b[0]) | int(b[1])<<8 | int(b[2])<<16 | int(b[3])<<24
		out = append(out, string(b[4:4+n]))
		raw[0] = b[4+n:]
	}
	return out
}

// sameStrings compares strings; a Triton classification string's score
// may differ from the v1 answer's float32 rounding in its last decimal.
func sameStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %q, want %q", what, got, want)
	}
	for i := range got {
		if got[i] == want[i] {
			continue
		}
		gs, grest, _ := strings.Cut(got[i], ":")
		ws, wrest, _ := strings.Cut(want[i], ":")
		var g, w float64
		fmt.Sscan(gs, &g)
		fmt.Sscan(ws, &w)
		if grest != wrest || math.Abs(g-w) > 1.5e-6 {
			t.Fatalf("%s: [%d] %q, want %q", what, i, got[i], want[i])
		}
	}
}

// TestTextClassificationSigmoid: a config.json whose problem_type is
// multi_label_classification scores with sigmoid; svc.yml's top_k and
// labels change the answer; activation: none answers the logits.
func TestTextClassificationSigmoid(t *testing.T) {
	t.Parallel()
	skipShort(t, "scores in numpy with Debian's python3-numpy")
	cfg := `{"architectures": ["BertForSequenceClassification"], "problem_type": "multi_label_classification", "id2label": {"0": "toxic", "1": "insult", "2": "threat"}}`
	dir := taskFolder(t, "tiny_bert_classifier", cfg)
	s := startServer(t, dir)
	var got [][]label
	postText(t, s, "labels", &got, sentences, nil)
	logits, _ := rawLogits(t, s, sentences, nil)
	var want [][]label
	python(t, numpyLabels, map[string]any{"logits": logits, "activation": "sigmoid", "k": 3, "labels": []string{"toxic", "insult", "threat"}}, &want)
	sameLabels(t, "sigmoid", got, want)

	p := filepath.Join(dir, "svc.yml")
	writeFile(t, p, fmt.Sprintf("models:\n  cls:\n    path: %s\n    text: {top_k: 2, labels: [a, b, c], activation: softmax}\n", filepath.Join(dir, "model.onnx")))
	s2 := startServer(t, "cls", "--config", p)
	postText(t, s2, "labels", &got, sentences, nil)
	python(t, numpyLabels, map[string]any{"logits": logits, "activation": "softmax", "k": 2, "labels": []string{"a", "b", "c"}}, &want)
	sameLabels(t, "svc.yml", got, want)
}

// TestTextClassificationByIndex: a config.json without id2label (and no
// svc.yml labels) labels each class by its index, with the scores the
// labelled folder answers; /info lists no labels.
func TestTextClassificationByIndex(t *testing.T) {
	t.Parallel()
	s := startServer(t, taskFolder(t, "tiny_bert_classifier", `{"architectures": ["BertForSequenceClassification"]}`))
	labelled := startServer(t, taskFolder(t, "tiny_bert_classifier", ""))
	var got, want [][]label
	postText(t, s, "labels", &got, sentences, nil)
	postText(t, labelled, "labels", &want, sentences, nil)
	for _, item := range want {
		for j := range item {
			item[j].Label = strconv.Itoa(item[j].Index)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("labels %v, want %v", got, want)
	}
	var info struct {
		Outputs []struct {
			Name   string   `json:"name"`
			Labels []string `json:"labels"`
		} `json:"outputs"`
	}
	if r := s.get("/info"); r.Status != http.StatusOK || json.Unmarshal(r.Body, &info) != nil {
		t.Fatalf("/info: %d %s", r.Status, r.Body)
	}
	if out := info.Outputs[len(info.Outputs)-1]; out.Name != "labels" || out.Labels != nil {
		t.Fatalf("/info: %+v", info.Outputs)
	}
}

// numpyEntities is the simple aggregation of token classification, in
// numpy and plain Python over str (whose indices are code points): each
// token's softmax and best label; B-X starts an entity, I-X or X
// continues one of X; "O" dropped; the score is the mean.
const numpyEntities = `
import json, sys
import numpy as np
d = json.load(sys.stdin)
z = np.array(d["logits"], dtype=np.float64)
e = np.exp(z - z.max(axis=2, keepdims=True))
p = e / e.sum(axis=2, keepdims=True)
out = []
for i, text in enumerate(d["texts"]):
    groups = []
    for j, (s, t) in enumerate(d["offsets"][i]):
        if d["special"][i][j]:
            continue
        k = int(np.argmax(p[i, j]))
        name = d["labels"][k]
        bi, tag = ("B", name[2:]) if name.startswith("B-") else (("I", name[2:]) if name.startswith("I-") else ("I", name))
        if groups and bi != "B" and groups[-1]["entity"] == tag:
            groups[-1]["end"] = t
            groups[-1]["scores"].append(float(p[i, j, k]))
        else:
            groups.append({"entity": tag, "start": s, "end": t, "scores": [float(p[i, j, k])]})
    out.append([{"entity": g["entity"], "start": g["start"], "end": g["end"], "text": text[g["start"]:g["end"]], "score": float(np.mean(g["scores"]))} for g in groups if g["entity"] != "O"])
json.dump(out, sys.stdout)
`

// nerTexts have characters of more than one byte before entities, so that
// byte and character offsets differ.
var nerTexts = []string{
	"John Smith lives in New York.",
	"Zoë Müller flew from Zürich to São Paulo",
	"hello",
	strings.Repeat("Ann met Bob in Paris. ", 6),
}

// TestTextTokenClassification serves the generated token classifier's
// folder with no svc.yml: the entities of a batch of texts equal the
// simple aggregation, in numpy and Python, of the model's own logits for
// the tokenizer's ids, with offsets in characters of the text; each text
// alone answers the same; OIP REST and gRPC answer each text's entities
// as a JSON string; text_pair is refused.
func TestTextTokenClassification(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	dir := taskFolder(t, "tiny_bert_ner", "")
	s := startServer(t, dir, "--grpc-port", port)
	var got [][]entity
	postText(t, s, "entities", &got, nerTexts, nil)
	n := 0
	for i, item := range got {
		n += len(item)
		for _, e := range item {
			if r := []rune(nerTexts[i]); e.End > len(r) || string(r[e.Start:e.End]) != e.Text {
				t.Fatalf("text %d: entity %+v is not at its characters", i, e)
			}
		}
	}
	if n == 0 {
		t.Fatalf("no entities in %v", got)
	}
	t.Run("numpy", func(t *testing.T) {
		skipShort(t, "aggregates in numpy with Debian's python3-numpy")
		logits, encs := rawLogits(t, s, nerTexts, nil)
		in := map[string]any{"logits": logits, "texts": nerTexts, "labels": []string{"O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"}}
		var offsets [][][2]int
		var special [][]int64
		for _, e := range encs {
			offsets, special = append(offsets, e.Offsets), append(special, e.SpecialTokensMask)
		}
		in["offsets"], in["special"] = offsets, special
		var want [][]entity
		python(t, numpyEntities, in, &want)
		if len(want) != len(got) {
			t.Fatalf("%d texts, numpy %d", len(got), len(want))
		}
		for i := range want {
			if len(got[i]) != len(want[i]) {
				t.Fatalf("text %d: %+v, numpy %+v", i, got[i], want[i])
			}
			for j, w := range want[i] {
				g := got[i][j]
				if g.Entity != w.Entity || g.Start != w.Start || g.End != w.End || g.Text != w.Text || math.Abs(g.Score-w.Score) > 1e-6 {
					t.Fatalf("text %d entity %d: %+v, numpy %+v", i, j, g, w)
				}
			}
		}
	})
	for i, text := range nerTexts {
		var alone [][]entity
		postText(t, s, "entities", &alone, []string{text}, nil)
		if !reflect.DeepEqual(alone[0], got[i]) {
			t.Fatalf("text %d alone %+v, in the batch %+v", i, alone[0], got[i])
		}
	}
	r := s.predict(`{"text": ["a"], "text_pair": ["b"]}`)
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Detail(t), "Input 'text_pair': token classification finds the entities of one text") {
		t.Fatalf("pair: %d %s", r.Status, r.Body)
	}

	name := filepath.Base(dir)
	mm, err := s.oipClient().ModelMetadata(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if last := mm.Outputs[len(mm.Outputs)-1]; !reflect.DeepEqual(last, oip.TensorMetadata{Name: "entities", Datatype: "BYTES", Shape: []int64{-1}}) {
		t.Fatalf("metadata: %+v", mm.Outputs)
	}
	want := make([]string, len(nerTexts))
	for i := range nerTexts {
		var one struct {
			Entities []json.RawMessage `json:"entities"`
		}
		body, _ := json.Marshal(map[string]any{"text": nerTexts[i]})
		if r := s.predict(string(body)); json.Unmarshal(r.Body, &one) != nil || len(one.Entities) != 1 {
			t.Fatalf("text %d: %s", i, r.Body)
		}
		want[i] = string(one.Entities[0])
	}
	oipStrings(t, s, port, name, nerTexts, "entities", []int64{int64(len(nerTexts))}, want)
}

// TestTextTaskBadInput: over /predict and the Open Inference Protocol's
// REST, a text that is not a string, invalid UTF-8, text_pair without
// text or with a token classifier, and text beside the id inputs are 400s
// that name the input (and the item).
func TestTextTaskBadInput(t *testing.T) {
	t.Parallel()
	s := startServer(t, taskFolder(t, "tiny_bert_ner", ""), "--name", "ner")
	oipBody := func(inputs string) string { return `{"inputs": [` + inputs + `]}` }
	tests := []struct {
		name, path, body, want string
	}{
		{"v1: not a string", "/predict", `{"text": ["a", {}]}`, "'text' at [1]: expected a string, got an object"},
		{"v1: invalid UTF-8", "/predict", "{\"text\": [\"a\", \"b\xff\"]}", "'text' at [1]: invalid UTF-8"},
		{"v1: a pair for a token classifier", "/predict", `{"text": "a", "text_pair": "b"}`, "Input 'text_pair': token classification finds the entities of one text"},
		{"OIP: not a string", "/v2/models/ner/infer", oipBody(`{"name": "text", "datatype": "BYTES", "shape": [2], "data": ["a", 3]}`), "'text' at [1]: expected a string, got a number"},
		{"OIP: invalid UTF-8", "/v2/models/ner/infer", oipBody("{\"name\": \"text\", \"datatype\": \"BYTES\", \"shape\": [1], \"data\": [\"b\xff\"]}"), "'text' at [0]: invalid UTF-8"},
		{"OIP: text_pair alone", "/v2/models/ner/infer", oipBody(`{"name": "text_pair", "datatype": "BYTES", "shape": [1], "data": ["b"]}`), "Input 'text_pair' goes with 'text': send both"},
		{"OIP: a pair for a token classifier", "/v2/models/ner/infer", oipBody(`{"name": "text", "datatype": "BYTES", "shape": [1], "data": ["a"]}, {"name": "text_pair", "datatype": "BYTES", "shape": [1], "data": ["b"]}`), "Input 'text_pair': token classification finds the entities of one text"},
		{"OIP: text and ids", "/v2/models/ner/infer", oipBody(`{"name": "text", "datatype": "BYTES", "shape": [1], "data": ["a"]}, {"name": "input_ids", "datatype": "INT64", "shape": [1, 1], "data": [440]}`), "send text or the model's inputs, not both"},
		{"OIP: text of another type", "/v2/models/ner/infer", oipBody(`{"name": "text", "datatype": "INT64", "shape": [1], "data": [1]}`), "Invalid datatype for input 'text': the model takes BYTES, got INT64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(http.MethodPost, tt.path, "application/json", strings.NewReader(tt.body))
			if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), tt.want) {
				t.Fatalf("%d %s, want a 400 saying %q", r.Status, r.Body, tt.want)
			}
		})
	}
}

// TestTextTaskDescribed: /info lists text and text_pair and the answer
// with its labels; /openapi.json's /predict example is a sentence, and its
// response schema has the answer (labels or entities).
func TestTextTaskDescribed(t *testing.T) {
	t.Parallel()
	sequential(t)
	for _, tt := range []struct {
		folder, answer string
		labels         []string
	}{
		{"tiny_bert_classifier", "labels", sentiment},
		{"tiny_bert_ner", "entities", []string{"O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"}},
	} {
		t.Run(tt.answer, func(t *testing.T) {
			s := startServer(t, taskFolder(t, tt.folder, ""))
			var info struct {
				Inputs []struct {
					Name     string `json:"name"`
					Type     string `json:"type"`
					Required bool   `json:"required"`
				} `json:"inputs"`
				Outputs []struct {
					Name   string   `json:"name"`
					Type   string   `json:"type"`
					Labels []string `json:"labels"`
				} `json:"outputs"`
			}
			if r := s.get("/info"); r.Status != http.StatusOK || json.Unmarshal(r.Body, &info) != nil {
				t.Fatalf("/info: %d %s", r.Status, r.Body)
			}
			in, out := info.Inputs[len(info.Inputs)-2:], info.Outputs[len(info.Outputs)-1]
			if in[0].Name != "text" || in[1].Name != "text_pair" || in[0].Type != "string" || in[0].Required || out.Name != tt.answer || out.Type != "string" || !reflect.DeepEqual(out.Labels, tt.labels) {
				t.Fatalf("/info: %+v", info)
			}
			var doc struct {
				Paths      map[string]map[string]json.RawMessage `json:"paths"`
				Components struct {
					Schemas map[string]struct {
						Properties map[string]json.RawMessage `json:"properties"`
					} `json:"schemas"`
				} `json:"components"`
			}
			if r := s.get("/openapi.json"); r.Status != http.StatusOK || json.Unmarshal(r.Body, &doc) != nil {
				t.Fatalf("openapi.json: %d", r.Status)
			}
			var post struct {
				RequestBody struct {
					Content map[string]struct {
						Example map[string]any `json:"example"`
					} `json:"content"`
				} `json:"requestBody"`
			}
			if err := json.Unmarshal(doc.Paths["/predict"]["post"], &post); err != nil {
				t.Fatal(err)
			}
			ex := post.RequestBody.Content["application/json"].Example
			if text, ok := ex["text"].(string); !ok || len(ex) != 1 || !strings.Contains(text, " ") {
				t.Fatalf("the /predict example is %v, want a sentence", ex)
			}
			if doc.Components.Schemas["PredictResponse"].Properties[tt.answer] == nil {
				t.Fatalf("PredictResponse lacks %s: %v", tt.answer, doc.Components.Schemas["PredictResponse"].Properties)
			}
			// The example runs.
			body, _ := json.Marshal(ex)
			if r := s.predict(string(body)); r.Status != http.StatusOK || !strings.HasPrefix(string(r.Body), `{"`+tt.answer+`":`) {
				t.Fatalf("the example: %d %s", r.Status, r.Body)
			}
		})
	}
}
