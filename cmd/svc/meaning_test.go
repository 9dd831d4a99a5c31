package main_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// meaningConfig writes an svc.yml serving the generated classifier
// (testdata/models/classifier.onnx: probabilities [N, 3], metadata labels
// setosa, versicolor, virginica) as "iris" with outputs.probabilities as
// declared by classify, and returns its path.
func meaningConfig(t *testing.T, outputs string) string {
	t.Helper()
	cfg := fmt.Sprintf("models:\n  iris:\n    path: %s\n    outputs:\n%s", model("classifier.onnx"), outputs)
	p := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestClassifyExact: a classify output answers the model's own scores,
// best first, with the labels from the model's metadata or from svc.yml,
// top_k of them (capped at the classes); with softmax, the softmax of the
// scores. Checked against the raw tensor of the same request.
func TestClassifyExact(t *testing.T) {
	t.Parallel()
	sequential(t)
	body := `{"input": [[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3], [5.9, 3.0, 4.2, 1.5]]}`
	tests := []struct {
		name, outputs string
		k             int
		softmax       bool
		labels        []string
	}{
		{"metadata labels, top 2", "      probabilities:\n        classify: {top_k: 2}\n", 2, false, []string{"setosa", "versicolor", "virginica"}},
		{"own labels, top_k past the classes", "      probabilities:\n        classify: {top_k: 7, labels: [a, b, c]}\n", 3, false, []string{"a", "b", "c"}},
		{"softmax, one label short", "      probabilities:\n        classify: {top_k: 3, softmax: true, labels: [a, b]}\n", 3, true, []string{"a", "b", "2"}},
		{"default top 1", "      probabilities:\n        classify: {}\n", 1, false, []string{"setosa", "versicolor", "virginica"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, "iris", "--config", meaningConfig(t, tt.outputs))
			raw := s.do("POST", "/predict?raw=true", "application/json", strings.NewReader(body))
			var scores struct {
				Probabilities [][]float32 `json:"probabilities"`
				Label         []int64     `json:"label"`
			}
			if raw.Status != 200 || json.Unmarshal(raw.Body, &scores) != nil {
				t.Fatalf("raw: %d %s", raw.Status, raw.Body)
			}
			r := s.predict(body)
			var out struct {
				Probabilities [][]class `json:"probabilities"`
				Label         []int64   `json:"label"`
			}
			if r.Status != 200 || json.Unmarshal(r.Body, &out) != nil {
				t.Fatalf("decoded: %d %s", r.Status, r.Body)
			}
			if fmt.Sprint(out.Label) != fmt.Sprint(scores.Label) {
				t.Errorf("the undeclared output changed: %v, raw %v", out.Label, scores.Label)
			}
			for i, row := range scores.Probabilities {
				want := expectedTop(row, tt.k, tt.softmax, tt.labels)
				got := out.Probabilities[i]
				for j := range got {
					// The answer writes float32 scores in their shortest form.
					got[j].Score = float64(float32(got[j].Score))
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("item %d: got %v, want %v (scores %v)", i, got, want, row)
				}
			}
		})
	}
}

// expectedTop is the top k of scores (softmaxed when asked, in float64,
// written as float32), best first, ties by index.
func expectedTop(scores []float32, k int, softmax bool, labels []string) []class {
	vals := make([]float64, len(scores))
	for i, s := range scores {
		vals[i] = float64(s)
	}
	if softmax {
		maxv, sum := math.Inf(-1), 0.0
		for _, v := range vals {
			maxv = math.Max(maxv, v)
		}
		for i, v := range vals {
			vals[i] = math.Exp(v - maxv)
			sum += vals[i]
		}
		for i := range vals {
			vals[i] /= sum
		}
	}
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return vals[idx[a]] > vals[idx[b]] })
	out := make([]class, 0, k)
	for _, i := range idx[:k] {
		out = append(out, class{Label: labels[i], Index: i, Score: float64(float32(vals[i]))})
	}
	return out
}

// TestMeaningRefusedAtStart: declarations that do not fit the model stop
// svc serve at start-up with a message naming the key.
func TestMeaningRefusedAtStart(t *testing.T) {
	t.Parallel()
	sequential(t)
	tests := []struct {
		name, outputs, want string
	}{
		{"no such output", "      scores:\n        classify: {}\n", "outputs.scores: the model has no output 'scores'"},
		{"not scores", "      label:\n        classify: {}\n", "outputs.label: output 'label' holds int64, not scores"},
		{"too many labels", "      probabilities:\n        classify: {labels: [a, b, c, d]}\n", "outputs.probabilities.classify.labels: 4 labels"},
		{"missing label file", "      probabilities:\n        classify: {labels: nowhere.txt}\n", "nowhere.txt"},
		{"ctc on a classifier", "      probabilities:\n        ctc: {labels: [a, b]}\n", "ctc takes [N, steps, classes]"},
		{"both meanings", "      probabilities:\n        classify: {}\n        ctc: {labels: [a]}\n", "declares more than one of classify, ctc, detect, segment and pose"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runSvc(t, nil, "serve", "iris", "--config", meaningConfig(t, tt.outputs), "--host", "127.0.0.1", "--port", "0")
			if code == 0 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr does not say %q:\n%s", code, tt.want, stderr)
			}
		})
	}
	// An image input that does not fit: the classifier's input is [N, 4].
	p := filepath.Join(t.TempDir(), "svc.yml")
	cfg := fmt.Sprintf("models:\n  iris:\n    path: %s\n    inputs:\n      input:\n        image: {preset: imagenet}\n", model("classifier.onnx"))
	if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runSvc(t, nil, "serve", "iris", "--config", p, "--host", "127.0.0.1", "--port", "0")
	if code == 0 || !strings.Contains(stderr, "inputs.input.image") {
		t.Fatalf("image input on a [N, 4] input: exit %d\n%s", code, stderr)
	}
}
