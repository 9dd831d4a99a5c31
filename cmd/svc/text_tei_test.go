package main_test

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// teiToken is one token of TEI's /tokenize answer.
type teiToken struct {
	ID      int64  `json:"id"`
	Text    string `json:"text"`
	Special bool   `json:"special"`
	Start   *int   `json:"start"`
	Stop    *int   `json:"stop"`
}

// longText has more tokens than examples/text-embed's maximum length, 48.
var longText = "word one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty" + strings.Repeat(" again and", 12) + " end"

// TestTextAPIAnswers checks what TEI's and OpenAI's routes answer against
// svc's own /predict, with one worker and with --workers 2: /tokenize's
// offsets are in characters of the input (the tokens cover it, with only
// spaces between them, "Zoë Müller" included); those ids sent to
// /v1/embeddings (with a user; a list of lists, or one list) give
// /predict's embeddings; /decode gives the texts back through a WordPiece
// decoder (text-rerank's tokenizer); /embed gives /predict's embeddings,
// normalize false the same before normalising, dimensions the first ones
// normalised again, truncation_direction Left the embedding of the ids
// cut from the start; TEI's /rerank orders the texts as numpy orders the
// cross-encoder's raw logits, with those logits as raw_scores and their
// sigmoid otherwise.
func TestTextAPIAnswers(t *testing.T) {
	t.Parallel()
	skipShort(t, "orders the cross-encoder's logits in numpy")
	texts := []string{clientTexts[0], clientTexts[1], clientTexts[2], clientTexts[4]}
	for _, workers := range []string{"1", "2"} {
		t.Run("workers "+workers, func(t *testing.T) {
			t.Parallel()
			embed := startServer(t, filepath.Join(repoRoot, "examples", "text-embed"), "--workers", workers)
			want := embeddings(t, embed, texts...)
			ids := checkTokenize(t, embed, texts)
			var got struct {
				Data []struct {
					Embedding []float64 `json:"embedding"`
				} `json:"data"`
			}
			body, _ := json.Marshal(map[string]any{"input": ids, "encoding_format": "float", "user": "someone"})
			postJSON(t, embed, "/v1/embeddings", string(body), &got)
			var vectors [][]float64
			for _, d := range got.Data {
				vectors = append(vectors, d.Embedding)
			}
			sameFloat32(t, "/v1/embeddings of /tokenize's ids", vectors, want)
			body, _ = json.Marshal(map[string]any{"input": ids[1], "encoding_format": "float"})
			postJSON(t, embed, "/v1/embeddings", string(body), &got)
			sameFloat32(t, "/v1/embeddings of one list of ids", [][]float64{got.Data[0].Embedding}, want[1:2])
			checkEmbed(t, embed, texts, want)
			rerank := startServer(t, filepath.Join(repoRoot, "examples", "text-rerank"), "--workers", workers)
			checkTEIRerank(t, rerank)
			checkDecode(t, rerank, texts[:3])
		})
	}
}

// checkTokenize checks /tokenize's answer for texts and returns each
// text's ids.
func checkTokenize(t *testing.T, s *server, texts []string) [][]int64 {
	t.Helper()
	var toks [][]teiToken
	body, _ := json.Marshal(map[string]any{"inputs": texts})
	postJSON(t, s, "/tokenize", string(body), &toks)
	if len(toks) != len(texts) {
		t.Fatalf("/tokenize: %d answers for %d texts", len(toks), len(texts))
	}
	ids := make([][]int64, len(toks))
	for i, tt := range toks {
		runes := []rune(texts[i])
		last := 0
		for j, tok := range tt {
			ids[i] = append(ids[i], tok.ID)
			special := j == 0 || j == len(tt)-1
			if tok.Special != special || special != (tok.Start == nil || tok.Stop == nil) {
				t.Fatalf("text %d, token %d: %+v, special: %v", i, j, tok, special)
			}
			if special {
				continue
			}
			if *tok.Start < last || *tok.Stop > len(runes) || *tok.Start >= *tok.Stop || string(runes[*tok.Start:*tok.Stop]) != tok.Text ||
				strings.TrimSpace(string(runes[last:*tok.Start])) != "" {
				t.Fatalf("text %d (%q), token %d: %q at %d to %d, not the input's characters after the last token's", i, texts[i], j, tok.Text, *tok.Start, *tok.Stop)
			}
			last = *tok.Stop
		}
		if rest := string(runes[last:]); strings.TrimSpace(rest) != "" {
			t.Fatalf("text %d (%q): the tokens' offsets end before %q", i, texts[i], rest)
		}
	}
	return ids
}

// checkEmbed checks TEI's /embed against /predict's embeddings want of
// texts.
func checkEmbed(t *testing.T, s *server, texts []string, want [][]float64) {
	t.Helper()
	embed := func(extra string, inputs any) [][]float64 {
		body, _ := json.Marshal(map[string]any{"inputs": inputs})
		var out [][]float64
		postJSON(t, s, "/embed", strings.TrimSuffix(string(body), "}")+extra+"}", &out)
		return out
	}
	closeTo(t, "/embed", embed("", texts), want, 1e-6)
	raw := embed(`, "normalize": false`, texts)
	var norms, dims [][]float64
	for i, v := range raw {
		norms = append(norms, cut(v, len(v)))
		if n := math.Sqrt(dot(v, v)); math.Abs(n-1) < 1e-3 {
			t.Fatalf("/embed normalize false: text %d has norm %v", i, n)
		}
		dims = append(dims, cut(want[i], 8))
	}
	closeTo(t, "/embed normalize false, normalised here", norms, want, 1e-5)
	closeTo(t, "/embed dimensions 8", embed(`, "dimensions": 8`, texts), dims, 1e-6)
	closeTo(t, "/embed of a long text, cut at the end", embed("", longText), embeddings(t, s, longText), 1e-6)
	var toks [][]teiToken
	postJSON(t, s, "/tokenize", fmt.Sprintf(`{"inputs": %q, "add_special_tokens": false}`, longText), &toks)
	left := []int64{440}
	for _, tok := range toks[0][len(toks[0])-46:] {
		left = append(left, tok.ID)
	}
	var got struct {
		Data []struct {
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
	}
	body, _ := json.Marshal(map[string]any{"input": [][]int64{append(left, 441)}, "encoding_format": "float"})
	postJSON(t, s, "/v1/embeddings", string(body), &got)
	closeTo(t, "/embed of a long text, cut at the start", embed(`, "truncation_direction": "Left"`, longText), [][]float64{got.Data[0].Embedding}, 1e-6)
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// checkTEIRerank compares TEI's /rerank with numpy's order of the
// cross-encoder's raw logits for the pairs.
func checkTEIRerank(t *testing.T, s *server) {
	t.Helper()
	queries := make([]string, len(rerankDocs))
	for i := range queries {
		queries[i] = rerankQuery
	}
	logits, _ := rawLogits(t, s, queries, rerankDocs)
	var want []ranked
	python(t, numpyRank, map[string]any{"logits": logits}, &want)
	var raw [][]float64
	if err := json.Unmarshal(logits, &raw); err != nil {
		t.Fatal(err)
	}
	type teiRanked struct {
		Index int     `json:"index"`
		Score float64 `json:"score"`
		Text  *string `json:"text"`
	}
	body, _ := json.Marshal(map[string]any{"query": rerankQuery, "texts": rerankDocs})
	for _, c := range []struct {
		name, extra string
		raw, text   bool
	}{{"scores", "", false, false}, {"raw scores with the texts", `, "raw_scores": true, "return_text": true`, true, true}} {
		var got []teiRanked
		postJSON(t, s, "/rerank", strings.TrimSuffix(string(body), "}")+c.extra+"}", &got)
		if len(got) != len(want) {
			t.Fatalf("/rerank %s: %d results, want %d", c.name, len(got), len(want))
		}
		for i, g := range got {
			score := want[i].Score
			if c.raw {
				score = raw[want[i].Index][0]
			}
			if g.Index != want[i].Index || math.Abs(g.Score-score) > 1e-6 || (g.Text != nil) != c.text || (c.text && *g.Text != rerankDocs[g.Index]) {
				t.Fatalf("/rerank %s: result %d is %+v, numpy's index %d, score %v", c.name, i, g, want[i].Index, score)
			}
		}
	}
}

// checkDecode checks that /decode gives texts back, lowercased (the
// tokenizer is uncased), from the ids /tokenize gives, and keeps the
// special tokens when asked.
func checkDecode(t *testing.T, s *server, texts []string) {
	t.Helper()
	ids := checkTokenize(t, s, texts)
	var decoded []string
	body, _ := json.Marshal(map[string]any{"ids": ids})
	postJSON(t, s, "/decode", string(body), &decoded)
	for i, got := range decoded {
		if want := strings.ToLower(texts[i]); got != want {
			t.Errorf("/decode of text %d: %q, want %q", i, got, want)
		}
	}
	postJSON(t, s, "/decode", `{"ids": [440, 378, 358, 441], "skip_special_tokens": false}`, &decoded)
	if len(decoded) != 1 || decoded[0] != "[CLS] hello world [SEP]" {
		t.Errorf("/decode keeping the special tokens: %q", decoded)
	}
}

// TestTextAutoTruncateOff serves text-embed with text.auto_truncate
// false: a text over the maximum length is refused on every route, in
// its API's shape, naming its index, its tokens and the limit, unless
// the request's own truncate (TEI's) cuts it; with one worker and with
// --workers 2.
func TestTextAutoTruncateOff(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, fmt.Sprintf("models:\n  text-embed:\n    path: %s\n    text: {auto_truncate: false}\n",
		filepath.Join(repoRoot, "examples", "text-embed", "model.onnx")))
	long := strings.Repeat("word ", 60)
	msg := "item 1: 122 tokens, over the maximum length of 48 (truncation is off)"
	cases := []apiCase{
		{"openai", "/v1/embeddings", fmt.Sprintf(`{"input": ["a", %q]}`, long), 400, "Input 'input', " + msg, "invalid_request_error/input/null", false},
		{"tei", "/embed", fmt.Sprintf(`{"inputs": ["a", %q]}`, long), 413, "Input 'inputs', " + msg, "Validation", false},
		{"tei, truncate false", "/embed", fmt.Sprintf(`{"inputs": ["a", %q], "truncate": false}`, long), 413, "Input 'inputs', " + msg, "Validation", false},
	}
	for _, workers := range []string{"1", "2"} {
		t.Run("workers "+workers, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, "text-embed", "--config", cfg, "--workers", workers)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { checkAPIError(t, s, c) })
			}
			if r := s.predict(fmt.Sprintf(`{"text": ["a", %q]}`, long)); r.Status != 400 || !strings.Contains(string(r.Body), "Input 'text', "+msg) {
				t.Fatalf("/predict: %d %s", r.Status, r.Body)
			}
			var cut [][]float64
			postJSON(t, s, "/embed", fmt.Sprintf(`{"inputs": ["a", %q], "truncate": true}`, long), &cut)
			if len(cut) != 2 || len(cut[1]) != 32 {
				t.Fatalf("/embed truncate true: %d embeddings", len(cut))
			}
		})
	}
}
