package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	stdimage "image"
	"image/color"
	_ "image/jpeg" // the drawings answered as JPEG
	"image/png"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/codec/draw"
)

// lineColour is the colour svc outlines line i of a page in: the
// palette's colour of its place in reading order.
func lineColour(i int) color.RGBA { return draw.Color(i) }

// outlinePoints are pixels on a line box's outline: the middles of its
// left, right and bottom edges (its top edge may lie under the label of
// the line below's neighbour, which the outlines are drawn over anyway).
func outlinePoints(box [4][2]int) []stdimage.Point {
	mid := func(a, b [2]int) stdimage.Point { return stdimage.Pt((a[0]+b[0])/2, (a[1]+b[1])/2) }
	return []stdimage.Point{mid(box[0], box[3]), mid(box[1], box[2]), mid(box[3], box[2])}
}

// colourNear says whether got is want, exactly for a PNG, within a
// distance of 150 (the three channels' differences summed) for a JPEG,
// whose 4:2:0 chroma blurs a 2-pixel outline's colour into the page's
// (which lies over 300 from every colour of the palette but the lightest).
func colourNear(got, want color.RGBA, jpeg bool) bool {
	if !jpeg {
		return got == want
	}
	d := math.Abs(float64(got.R)-float64(want.R)) + math.Abs(float64(got.G)-float64(want.G)) + math.Abs(float64(got.B)-float64(want.B))
	return d <= 150
}

// TestOCRPipelineDraws reads a rendered page with draw=true and with
// Accept headers: the answer is the page (PNG or JPEG) at its own size,
// each line's box outlined in its colour where the JSON answer puts it;
// a batch with draw is the detection models' 400, and so are a bad draw
// value and draw with raw; v2 answers its JSON whatever the parameters
// say. /metrics then counts each stage's runs and items as the pages
// read needed them: one detector run a page, one recogniser item a line.
func TestOCRPipelineDraws(t *testing.T) {
	t.Parallel()
	sequential(t)
	pages := renderPages(t)
	s := startServer(t, "ocr", "-c", filepath.Join(repoRoot, "examples", "ocr", "svc.yml"))
	wide := pages["wide"]
	data, err := os.ReadFile(wide.file)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	read, answered := 0, 0 // pages read, lines answered
	_, got := readV1(t, s, "raw", wide.file, "")
	if len(got) != 1 || len(got[0].Lines) != len(wide.lines) {
		t.Fatalf("the page answered %+v, want %d lines", got, len(wide.lines))
	}
	lines := got[0].Lines
	read, answered = read+1, answered+len(lines)
	for _, tt := range []struct{ query, accept, want string }{
		{"?draw=true", "", "image/png"},
		{"?draw", "image/jpeg", "image/jpeg"},
		{"", "image/png, application/json;q=0.5", "image/png"},
	} {
		var headers []string
		if tt.accept != "" {
			headers = []string{"Accept", tt.accept}
		}
		r := s.do(http.MethodPost, "/predict"+tt.query, "image/png", bytes.NewReader(data), headers...)
		if r.Status != http.StatusOK || r.Header.Get("Content-Type") != tt.want {
			t.Fatalf("%s %s: %d %s %.200s", tt.query, tt.accept, r.Status, r.Header.Get("Content-Type"), r.Body)
		}
		read, answered = read+1, answered+len(lines)
		img, format, err := stdimage.Decode(bytes.NewReader(r.Body))
		if err != nil || "image/"+format != tt.want || img.Bounds().Dx() != cfg.Width || img.Bounds().Dy() != cfg.Height {
			t.Fatalf("%s %s: a %s picture of %v, want %d×%d (%v)", tt.query, tt.accept, format, img.Bounds(), cfg.Width, cfg.Height, err)
		}
		for i, l := range lines {
			for _, p := range outlinePoints(l.Box) {
				c := color.RGBAModel.Convert(img.At(p.X, p.Y)).(color.RGBA)
				if !colourNear(c, lineColour(i), tt.want == "image/jpeg") {
					t.Errorf("%s: pixel %v on line %d's box %v is %v, want %v", tt.want, p, i, l.Box, c, lineColour(i))
				}
			}
		}
	}
	batch, _ := json.Marshal(map[string][]string{"image": {b64(data), b64(data)}})
	for _, tt := range []struct {
		query, ct string
		body      []byte
		want      string
	}{
		{"?draw=true", "application/json", batch, "draw answers one picture drawn on, and the request sends 2: send one picture"},
		{"?draw=maybe", "image/png", data, "draw must be true or false"},
		{"?draw=true&raw=true", "image/png", data, "ask for one"},
	} {
		r := s.do(http.MethodPost, "/predict"+tt.query, tt.ct, bytes.NewReader(tt.body))
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Detail(t), tt.want) {
			t.Errorf("%s: %d %s, want 400 saying %q", tt.query, r.Status, r.Body, tt.want)
		}
	}
	r, v2 := readV2(t, s, wide.file, `"draw": true`)
	if r.Status != http.StatusOK || len(v2) != 1 || len(v2[0].Lines) != len(lines) {
		t.Errorf("v2 with draw: %d %.300s", r.Status, r.Body)
	}
	read, answered = read+1, answered+len(lines)
	checkStageMetrics(t, s, read, answered)
}

// checkStageMetrics checks the page reader's series after pages pages
// read that answered lines lines, every line read kept (none under
// text_score): a detector run of one page per page, a classifier and a
// recogniser item per line, lines per page as answered.
func checkStageMetrics(t *testing.T, s *server, pages, lines int) {
	t.Helper()
	sc, _ := scrapeMetrics(t, s, textAccept)
	for _, tt := range []struct {
		name, stage string
		want        float64
	}{
		{"svc_pipeline_stage_runs_total", "detector", float64(pages)},
		{"svc_pipeline_stage_duration_seconds", "detector", float64(pages)},
		{"svc_pipeline_stage_batch_size", "detector", float64(pages)},
		{"svc_pipeline_page_lines", "", float64(pages)},
	} {
		labels := map[string]string{"model": "ocr"}
		if tt.stage != "" {
			labels["stage"] = tt.stage
		}
		if got := sc.value(t, tt.name, labels); got != tt.want {
			t.Errorf("%s%v = %v, want %v", tt.name, labels, got, tt.want)
		}
	}
	for _, tt := range []struct {
		name, stage string
		want        float64
	}{
		{"svc_pipeline_stage_batch_size", "detector", float64(pages)},
		{"svc_pipeline_stage_batch_size", "classifier", float64(lines)},
		{"svc_pipeline_stage_batch_size", "recognizer", float64(lines)},
		{"svc_pipeline_page_lines", "", float64(lines)},
	} {
		labels := map[string]string{"model": "ocr"}
		if tt.stage != "" {
			labels["stage"] = tt.stage
		}
		if got := sc.histogramSum(t, tt.name, labels); got != tt.want {
			t.Errorf("%s%v sums %v, want %v", tt.name, labels, got, tt.want)
		}
	}
	for _, stage := range []string{"classifier", "recognizer"} {
		runs := sc.value(t, "svc_pipeline_stage_runs_total", map[string]string{"model": "ocr", "stage": stage})
		if runs < float64(pages) || runs > float64(lines) {
			t.Errorf("%s ran %v times for %d pages of %d lines", stage, runs, pages, lines)
		}
	}
}

// histogramSum is the sum of the histogram series of family name whose
// labels include want.
func (sc scrape) histogramSum(t *testing.T, name string, want map[string]string) float64 {
	t.Helper()
	mf, ok := sc[name]
	if !ok {
		t.Fatalf("the scrape has no %s", name)
	}
	for _, m := range mf.GetMetric() {
		match := 0
		for _, lp := range m.GetLabel() {
			if v, ok := want[lp.GetName()]; ok && v == lp.GetValue() {
				match++
			}
		}
		if match == len(want) && m.Histogram != nil {
			return m.GetHistogram().GetSampleSum()
		}
	}
	return 0
}

// noisyPage is the page of file with faint noise over every pixel, so
// that its PNG hardly compresses: a picture whose base64 is longer than
// limits.max_string_length.
func noisyPage(t *testing.T, file string) []byte {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := src.Bounds()
	img := stdimage.NewRGBA(b)
	r := rand.New(rand.NewPCG(1, 2))
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(src.At(x, y)).(color.RGBA)
			n := uint8(r.IntN(40))
			sub := func(v uint8) uint8 { return v - min(v, n) }
			img.SetRGBA(x, y, color.RGBA{sub(c.R), sub(c.G), sub(c.B), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestOCRPipelinePictureLimit: a page sent as base64 in JSON (v1 and v2)
// obeys the limits of image inputs, not limits.max_string_length: a page
// whose base64 is over 1 MiB is read, one over limits.max_image_pixels
// gets the image inputs' 400 naming that key; a batch of more pages than
// limits.max_images, or of more pixels than limits.max_request_pixels,
// the image inputs' 413 naming the key, before any page is decoded.
func TestOCRPipelinePictureLimit(t *testing.T) {
	t.Parallel()
	sequential(t)
	pages := renderPages(t)
	models := filepath.Join(repoRoot, "build", "models")
	cfg := writeConfig(t, fmt.Sprintf(`limits: {max_image_pixels: 1000000, max_images: 2, max_request_pixels: 1500000}
models:
  det: {path: %s}
  rec:
    path: %s
    outputs: {softmax_11.tmp_0: {ctc: {labels: %s}}}
  ocr:
    pipeline: {kind: ocr, detect: {model: det}, recognize: {model: rec}}
`, filepath.Join(models, "paddleocr-det"), filepath.Join(models, "paddleocr-rec"), filepath.Join(models, "paddleocr-rec", "ppocr_keys_v1.txt")))
	s := startServer(t, "ocr", "-c", cfg)
	wide := pages["wide"]
	big := noisyPage(t, wide.file)
	if n := len(b64(big)); n <= 1<<20 {
		t.Fatalf("the noisy page's base64 is %d bytes, want over limits.max_string_length (1 MiB)", n)
	}
	var large bytes.Buffer
	if err := png.Encode(&large, stdimage.NewGray(stdimage.Rect(0, 0, 1100, 1000))); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bigFile, largeFile := filepath.Join(dir, "big.png"), filepath.Join(dir, "large.png")
	if err := os.WriteFile(bigFile, big, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(largeFile, large.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, got := readV1(t, s, "json", bigFile, "")
	if r.Status != http.StatusOK || len(got) != 1 || graded(wide, got[0]) < 0.95 {
		t.Errorf("v1, a page of %d bytes of base64: %d %.300s", len(b64(big)), r.Status, r.Body)
	}
	r, got = readV2(t, s, bigFile, "")
	if r.Status != http.StatusOK || len(got) != 1 || graded(wide, got[0]) < 0.95 {
		t.Errorf("v2, a page of %d bytes of base64: %d %.300s", len(b64(big)), r.Status, r.Body)
	}
	const want = "Input 'image': png of 1100×1000 pixels: more than the 1000000 pixels allowed (limits.max_image_pixels)"
	r, _ = readV1(t, s, "json", largeFile, "")
	if r.Status != http.StatusBadRequest || r.Detail(t) != want {
		t.Errorf("v1, a page over limits.max_image_pixels: %d %s, want 400 %q", r.Status, r.Body, want)
	}
	r, _ = readV2(t, s, largeFile, "")
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), want) {
		t.Errorf("v2, a page over limits.max_image_pixels: %d %s, want 400 %q", r.Status, r.Body, want)
	}
	var tall bytes.Buffer // 800,000 pixels
	if err := png.Encode(&tall, stdimage.NewGray(stdimage.Rect(0, 0, 800, 1000))); err != nil {
		t.Fatal(err)
	}
	small, _ := os.ReadFile(pages["tiny"].file)
	for _, tt := range []struct {
		name  string
		pages [][]byte
		want  string
	}{
		{"three pages", [][]byte{small, small, small}, "Input 'image': 3 pictures, more than the 2 one request may send (limits.max_images)"},
		{"two pages of 800,000 pixels", [][]byte{tall.Bytes(), tall.Bytes()}, "Input 'image': pictures of 1600000 pixels together, more than the 1500000 one request may send (limits.max_request_pixels)"},
	} {
		var encoded []string
		for _, p := range tt.pages {
			encoded = append(encoded, b64(p))
		}
		v1, _ := json.Marshal(map[string][]string{"image": encoded})
		r := s.do(http.MethodPost, "/predict", "application/json", bytes.NewReader(v1))
		if r.Status != http.StatusRequestEntityTooLarge || r.Detail(t) != tt.want {
			t.Errorf("v1, %s: %d %s, want 413 %q", tt.name, r.Status, r.Body, tt.want)
		}
		v2, _ := json.Marshal(map[string]any{"inputs": []any{map[string]any{"name": "image", "datatype": "BYTES", "shape": []int{len(encoded)}, "data": encoded}}})
		r = s.do(http.MethodPost, "/v2/models/ocr/infer", "application/json", bytes.NewReader(v2))
		if r.Status != http.StatusRequestEntityTooLarge || !strings.Contains(string(r.Body), tt.want) {
			t.Errorf("v2, %s: %d %s, want 413 %q", tt.name, r.Status, r.Body, tt.want)
		}
	}
}
