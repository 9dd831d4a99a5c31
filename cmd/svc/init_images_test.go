package main_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	stdimage "image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitRecognisesPaddleOCR runs 'svc init --model' on the real PaddleOCR
// models and serves the classifier from the file it wrote: pictures in,
// labels out, with no edit.
func TestInitRecognisesPaddleOCR(t *testing.T) {
	t.Parallel()
	sequential(t)
	cls := filepath.Dir(thirdParty(t, "paddleocr-cls"))
	rec := filepath.Dir(thirdParty(t, "paddleocr-rec"))
	for _, tt := range []struct {
		model string
		wants []string
	}{
		{cls, []string{"\n  paddleocr-cls:\n    path: ", "\n    inputs:\n      x:\n        image: {preset: paddleocr-cls}\n",
			"\n    outputs:\n      softmax_0.tmp_0:\n        classify: {labels: [\"0\", \"180\"], top_k: 1}"}},
		{rec, []string{"\n  paddleocr-rec:\n    path: ", "\n        image: {preset: paddleocr-rec}\n", "6623 characters for the 6625 classes",
			"\n    # outputs:\n    #   softmax_11.tmp_0:\n    #     ctc: {labels: ppocr_keys_v1.txt}\n"}},
	} {
		cmd := svcCmd(t, nil, "init", "--model", tt.model)
		code, stdout, stderr := runCmd(t, cmd)
		if code != 0 || !strings.Contains(stdout, "wrote svc.yml") {
			t.Fatalf("init --model %s: %d %s %s", tt.model, code, stdout, stderr)
		}
		body, err := os.ReadFile(filepath.Join(cmd.Dir, "svc.yml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range tt.wants {
			if !strings.Contains(string(body), want) {
				t.Errorf("svc.yml for %s lacks %q:\n%s", tt.model, want, body)
			}
		}
		if tt.model != cls {
			continue
		}
		s := startServer(t, "paddleocr-cls", "--config", filepath.Join(cmd.Dir, "svc.yml"))
		req, _ := json.Marshal(map[string]string{"x": linePicture(t)})
		resp := s.do(http.MethodPost, "/predict", "application/json", bytes.NewReader(req))
		var out map[string][][]struct {
			Label string  `json:"label"`
			Index int     `json:"index"`
			Score float64 `json:"score"`
		}
		if err := json.Unmarshal(resp.Body, &out); resp.Status != http.StatusOK || err != nil {
			t.Fatalf("predict: %d %s (%v)", resp.Status, resp.Body, err)
		}
		if got := out["softmax_0.tmp_0"]; len(got) != 1 || len(got[0]) != 1 || (got[0][0].Label != "0" && got[0][0].Label != "180") {
			t.Fatalf("predict answered %s", resp.Body)
		}
	}
}

// TestInitUnrecognisedModel checks that a model svc init does not know
// gets its path and nothing more.
func TestInitUnrecognisedModel(t *testing.T) {
	t.Parallel()
	cmd := svcCmd(t, nil, "init", "--model", filepath.Join(repoRoot, "examples", "demo"), "--name", "iris")
	code, stdout, stderr := runCmd(t, cmd)
	if code != 0 {
		t.Fatalf("init: %d %s %s", code, stdout, stderr)
	}
	body, _ := os.ReadFile(filepath.Join(cmd.Dir, "svc.yml"))
	entry := string(body)[strings.Index(string(body), "\nmodels:\n"):]
	entry = entry[:strings.Index(entry, "\n  # iris:")]
	if !strings.HasPrefix(entry, "\nmodels:\n  iris:\n    path: ") || strings.Count(entry, "\n") != 3 {
		t.Fatalf("entry:\n%s", entry)
	}
}

// linePicture is a grey picture of a dark bar, as base64 PNG.
func linePicture(t *testing.T) string {
	img := stdimage.NewGray(stdimage.Rect(0, 0, 160, 40))
	for y := range 40 {
		for x := range 160 {
			c := uint8(230)
			if y > 15 && y < 25 && x > 10 && x < 150 {
				c = 20
			}
			img.SetGray(x, y, color.Gray{Y: c})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}
