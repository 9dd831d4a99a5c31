package main_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// image builds a [n, 3, h, w] JSON tensor whose pixels come from f.
func image(n, h, w int, f func(c, y, x int) float64) string {
	var sb strings.Builder
	sb.WriteByte('[')
	for b := 0; b < n; b++ {
		if b > 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte('[')
		for c := 0; c < 3; c++ {
			if c > 0 {
				sb.WriteByte(',')
			}
			sb.WriteByte('[')
			for y := 0; y < h; y++ {
				if y > 0 {
					sb.WriteByte(',')
				}
				sb.WriteByte('[')
				for x := 0; x < w; x++ {
					if x > 0 {
						sb.WriteByte(',')
					}
					sb.WriteString(jsonNum(f(c, y, x)))
				}
				sb.WriteByte(']')
			}
			sb.WriteByte(']')
		}
		sb.WriteByte(']')
	}
	sb.WriteByte(']')
	return sb.String()
}

func jsonNum(v float64) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// textLine draws dark horizontal strokes on a light background: a crude
// line of "text" in PaddleOCR's normalised input space ([-1, 1]).
func textLine(c, y, x int) float64 {
	if y > 16 && y < 32 && (x/6)%2 == 0 && x > 10 && x < 180 {
		return -0.9
	}
	return 0.9
}

func TestPaddleOCRClassifier(t *testing.T) {
	t.Parallel()
	s := startServer(t, thirdParty(t, "paddleocr-cls"))
	body := `{"x": ` + image(1, 48, 192, textLine) + `}`
	r := s.predict(body)
	if r.Status != 200 {
		t.Fatalf("predict = %d %s", r.Status, r.Body)
	}
	var out map[string][][]float64
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatal(err)
	}
	probs := out["softmax_0.tmp_0"]
	if len(probs) != 1 || len(probs[0]) != 2 {
		t.Fatalf("output shape: %s", r.Body)
	}
	if sum := probs[0][0] + probs[0][1]; math.Abs(sum-1) > 1e-4 {
		t.Fatalf("probabilities sum to %v", sum)
	}
	// Deterministic: the same input gives the same bytes; a batch of two
	// copies gives two identical rows equal to the single answer.
	if again := s.predict(body); string(again.Body) != string(r.Body) {
		t.Fatalf("second answer differs:\n%s\n%s", r.Body, again.Body)
	}
	r2 := s.predict(`{"x": ` + image(2, 48, 192, textLine) + `}`)
	var out2 map[string][][]float64
	if err := json.Unmarshal(r2.Body, &out2); err != nil {
		t.Fatal(err)
	}
	b := out2["softmax_0.tmp_0"]
	if len(b) != 2 || math.Abs(b[0][0]-probs[0][0]) > 1e-5 || math.Abs(b[1][0]-probs[0][0]) > 1e-5 {
		t.Fatalf("batch of two: %v, single: %v", b, probs)
	}
	t.Logf("cls probabilities (0°, 180°): %v", probs[0])
	// Upright text is classified as 0°.
	if probs[0][0] < 0.5 {
		t.Fatalf("upright text line classified as rotated: %v", probs[0])
	}
}

func TestPaddleOCRDetector(t *testing.T) {
	t.Parallel()
	s := startServer(t, thirdParty(t, "paddleocr-det"))
	const h, w = 64, 192
	blank := s.predict(`{"x": ` + image(1, h, w, func(int, int, int) float64 { return 0.9 }) + `}`)
	text := s.predict(`{"x": ` + image(1, h, w, textLine) + `}`)
	for _, r := range []response{blank, text} {
		if r.Status != 200 {
			t.Fatalf("predict = %d %s", r.Status, r.Body)
		}
	}
	maps := map[string]float64{}
	for name, r := range map[string]response{"blank": blank, "text": text} {
		var out map[string][][][][]float64
		if err := json.Unmarshal(r.Body, &out); err != nil {
			t.Fatal(err)
		}
		m := out["sigmoid_0.tmp_0"]
		if len(m) != 1 || len(m[0]) != 1 || len(m[0][0]) != h || len(m[0][0][0]) != w {
			t.Fatalf("%s: output is not [1,1,%d,%d]", name, h, w)
		}
		maxv := 0.0
		for _, row := range m[0][0] {
			for _, v := range row {
				if v < 0 || v > 1 {
					t.Fatalf("%s: probability %v out of [0,1]", name, v)
				}
				maxv = math.Max(maxv, v)
			}
		}
		maps[name] = maxv
	}
	t.Logf("max text probability: blank %.3f, text line %.3f", maps["blank"], maps["text"])
	if maps["blank"] > 0.3 {
		t.Errorf("blank image has text probability %.3f", maps["blank"])
	}
	if maps["text"] <= maps["blank"] {
		t.Errorf("text line (%.3f) scores no higher than a blank image (%.3f)", maps["text"], maps["blank"])
	}
}

func TestSileroVAD(t *testing.T) {
	t.Parallel()
	s := startServer(t, thirdParty(t, "silero-vad"))
	zeros := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("0,", n), ",") + "]" }
	state := "[[" + zeros(128) + "],[" + zeros(128) + "]]"
	body := `{"input": [` + zeros(512) + `], "state": ` + state + `, "sr": 16000}`
	r := s.predict(body)
	if r.Status != 200 {
		t.Fatalf("predict = %d %s", r.Status, r.Body)
	}
	var out struct {
		Output [][]float64   `json:"output"`
		StateN [][][]float64 `json:"stateN"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Output) != 1 || len(out.Output[0]) != 1 {
		t.Fatalf("output: %s", r.Body[:min(len(r.Body), 200)])
	}
	if len(out.StateN) != 2 || len(out.StateN[0]) != 1 || len(out.StateN[0][0]) != 128 {
		t.Fatalf("stateN is not [2,1,128]")
	}
	p := out.Output[0][0]
	t.Logf("speech probability of silence: %.4f", p)
	if p < 0 || p > 0.1 {
		t.Fatalf("silence has speech probability %v", p)
	}
	if again := s.predict(body); string(again.Body) != string(r.Body) {
		t.Fatalf("answers differ between identical requests")
	}
}
