package main_test

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// clientTexts are texts of different lengths for the clients, without
// newlines (LangChain's OpenAIEmbeddings replaces them by spaces).
var clientTexts = []string{
	"hello world",
	"Machine learning is fun, and the tokenizer splits words into pieces.",
	"a",
	strings.Repeat("the quick brown fox jumps over the lazy dog ", 8),
	"Zoë Müller flew to Zürich.",
}

// rerankQuery and rerankDocs are what the clients rerank.
var (
	rerankQuery = "Is it raining in the city?"
	rerankDocs  = []string{"It rains all day in the city.", "The sun is out.", "Rain, rain, go away.", "a", "Machine learning is fun, and the tokenizer splits words into pieces."}
)

// clientsDir is where build/node-tools.sh installs the clients (the
// openai SDK, @langchain/openai, cohere-ai).
func clientsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SVC_NODE_TOOLS")
	if dir == "" {
		dir = filepath.Join(repoRoot, "build", "node")
	}
	dir = filepath.Join(dir, "clients", "node_modules")
	if _, err := os.Stat(filepath.Join(dir, "cohere-ai", "package.json")); err != nil {
		t.Fatalf("the clients are not installed in %s: run build/node-tools.sh (make test does)", dir)
	}
	return dir
}

// clientAnswers is what testdata/clients/clients.cjs prints.
type clientAnswers struct {
	OpenAIBase64     [][]float64 `json:"openai_base64"`
	OpenAIFloat      [][]float64 `json:"openai_float"`
	OpenAISingle     [][]float64 `json:"openai_single"`
	OpenAIDimensions [][]float64 `json:"openai_dimensions"`
	OpenAIUsage      struct {
		Prompt int `json:"prompt_tokens"`
		Total  int `json:"total_tokens"`
	} `json:"openai_usage"`
	WrongModel struct {
		Status int    `json:"status"`
		Code   string `json:"code"`
		Type   string `json:"type"`
		Param  string `json:"param"`
	} `json:"openai_wrong_model"`
	LangChainDocuments [][]float64 `json:"langchain_documents"`
	LangChainQuery     []float64   `json:"langchain_query"`
	Cohere             []ranked    `json:"cohere"`
	CohereAll          []ranked    `json:"cohere_all"`
}

// ranked is one result of a rerank.
type ranked struct {
	Index int     `json:"index"`
	Score float64 `json:"relevance_score"`
	Text  string  `json:"text"`
}

// runClients runs the clients against the embedding server's and the
// reranking server's base URLs.
func runClients(t *testing.T, embedURL, rerankURL string, dims int) clientAnswers {
	t.Helper()
	spec, _ := json.Marshal(map[string]any{
		"embed":  map[string]any{"url": embedURL, "model": "text-embed", "texts": clientTexts, "dimensions": dims},
		"rerank": map[string]any{"url": rerankURL, "model": "text-rerank", "query": rerankQuery, "documents": rerankDocs, "top_n": 2},
	})
	cmd := exec.Command("node", filepath.Join(repoRoot, "cmd", "svc", "testdata", "clients", "clients.cjs"), string(spec))
	cmd.Env = append(os.Environ(), "NODE_PATH="+clientsDir(t))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("clients.cjs: %v\n%s", err, stderr.String())
	}
	var a clientAnswers
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatalf("clients.cjs: %v: %s", err, out)
	}
	return a
}

// sameFloat32 fails t unless every value of got is want's, as float32.
func sameFloat32(t *testing.T, what string, got, want [][]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d vectors, want %d", what, len(got), len(want))
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("%s: vector %d has %d values, want %d", what, i, len(got[i]), len(want[i]))
		}
		for j := range got[i] {
			if float32(got[i][j]) != float32(want[i][j]) {
				t.Fatalf("%s: vector %d, value %d: %v, /predict's %v", what, i, j, float32(got[i][j]), float32(want[i][j]))
			}
		}
	}
}

// cut is an embedding cut to d values and normalised again.
func cut(v []float64, d int) []float64 {
	out := append([]float64(nil), v[:d]...)
	var s float64
	for _, x := range out {
		s += x * x
	}
	for i := range out {
		out[i] /= math.Sqrt(s)
	}
	return out
}

// numpyRank orders the pairs by the cross-encoder's one logit in numpy,
// best first (a stable sort), with the logit's sigmoid.
const numpyRank = `
import json, sys
import numpy as np
d = json.load(sys.stdin)
l = np.array(d["logits"], dtype=np.float64)[:, 0]
order = np.argsort(-l, kind="stable")
json.dump([{"index": int(i), "relevance_score": float(1 / (1 + np.exp(-l[i])))} for i in order], sys.stdout)
`

// TestTextClients runs clients nobody here wrote against svc: the
// OpenAI SDK's embeddings.create (its default base64, float, one text,
// dimensions, another model's name), LangChain's OpenAIEmbeddings with
// configuration.baseURL and Cohere's SDK rerank. Every vector equals
// svc's own /predict embedding of the same texts (float32), the
// dimensions the embedding cut and normalised again, and every rerank
// order the order numpy gives the cross-encoder's raw logits; with one
// worker and with --workers 2.
func TestTextClients(t *testing.T) {
	t.Parallel()
	skipShort(t, "runs the OpenAI, LangChain and Cohere clients under Node (build/node-tools.sh) and numpy")
	for _, workers := range []string{"1", "2"} {
		t.Run("workers "+workers, func(t *testing.T) {
			t.Parallel()
			embed := startServer(t, filepath.Join(repoRoot, "examples", "text-embed"), "--workers", workers)
			rerank := startServer(t, filepath.Join(repoRoot, "examples", "text-rerank"), "--workers", workers)
			got := runClients(t, embed.URL, rerank.URL, 8)
			want := embeddings(t, embed, clientTexts...)
			sameFloat32(t, "openai base64", got.OpenAIBase64, want)
			sameFloat32(t, "openai float", got.OpenAIFloat, want)
			sameFloat32(t, "langchain embedDocuments", got.LangChainDocuments, want)
			one := embeddings(t, embed, clientTexts[0])
			sameFloat32(t, "openai one text", got.OpenAISingle, one)
			sameFloat32(t, "langchain embedQuery", [][]float64{got.LangChainQuery}, one)
			var dims [][]float64
			for _, v := range want {
				dims = append(dims, cut(v, 8))
			}
			closeTo(t, "openai dimensions", got.OpenAIDimensions, dims, 1e-6)
			if got.OpenAIUsage.Prompt <= len(clientTexts) || got.OpenAIUsage.Total != got.OpenAIUsage.Prompt {
				t.Errorf("usage %+v", got.OpenAIUsage)
			}
			if w := got.WrongModel; w.Status != 404 || w.Code != "model_not_found" || w.Type != "invalid_request_error" || w.Param != "model" {
				t.Errorf("another model's name: %+v", w)
			}
			checkRerank(t, rerank, got)
		})
	}
}

// checkRerank compares Cohere's rerank with numpy's order of the
// cross-encoder's raw logits for the ids of the pairs.
func checkRerank(t *testing.T, s *server, got clientAnswers) {
	t.Helper()
	queries := make([]string, len(rerankDocs))
	for i := range queries {
		queries[i] = rerankQuery
	}
	logits, _ := rawLogits(t, s, queries, rerankDocs)
	var want []ranked
	python(t, numpyRank, map[string]any{"logits": logits}, &want)
	sameRanking(t, "cohere, every document", got.CohereAll, want)
	for i := range want[:2] {
		want[i].Text = rerankDocs[want[i].Index]
	}
	sameRanking(t, "cohere, top 2 with their documents", got.Cohere, want[:2])
}

func sameRanking(t *testing.T, what string, got, want []ranked) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d results, want %d: %+v", what, len(got), len(want), got)
	}
	for i := range got {
		if got[i].Index != want[i].Index || got[i].Text != want[i].Text || math.Abs(got[i].Score-want[i].Score) > 1e-6 {
			t.Fatalf("%s: result %d is %+v, numpy's %+v (all: %+v)", what, i, got[i], want[i], got)
		}
	}
}
