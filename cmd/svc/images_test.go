package main_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// dejaVu is the Debian font the text lines are rendered with.
const dejaVu = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

// renderLines renders testdata/images/lines.txt with Pillow (Debian's
// python3-pil) into a temporary directory: i.jpg, i.png, i.webp upright
// and i-180.* turned over, for each line i. It returns the directory and
// the lines.
func renderLines(t *testing.T) (string, []string) {
	t.Helper()
	skipShort(t, "renders text lines with Debian's python3-pil and fonts-dejavu")
	text, err := os.ReadFile(filepath.Join("testdata", "images", "lines.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command("/usr/bin/python3", filepath.Join("testdata", "images", "render_lines.py"), dir, dejaVu)
	cmd.Stdin = bytes.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("render the text lines (make test installs python3-pil and fonts-dejavu-core): %v\n%s", err, out)
	}
	return dir, strings.Split(strings.TrimSpace(string(text)), "\n")
}

// ocrConfig writes an svc.yml serving PaddleOCR rec as "rec" and cls as
// "cls", with image inputs and decoded outputs, and returns its path.
func ocrConfig(t *testing.T) string {
	t.Helper()
	rec := thirdParty(t, "paddleocr-rec")
	cls := thirdParty(t, "paddleocr-cls")
	keys := filepath.Join(filepath.Dir(rec), "ppocr_keys_v1.txt")
	cfg := fmt.Sprintf(`models:
  rec:
    path: %s
    inputs:
      x:
        image: {preset: paddleocr-rec}
    outputs:
      softmax_11.tmp_0:
        ctc: {labels: %s}
  cls:
    path: %s
    inputs:
      x:
        image: {preset: paddleocr-cls}
    outputs:
      softmax_0.tmp_0:
        classify: {labels: ["0", "180"], top_k: 1}
`, rec, keys, cls)
	p := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// postImage posts a picture the way form says: "multipart" (curl -F),
// "raw" (the file as the body) or "json" (base64 in a JSON string).
func (s *server) postImage(t *testing.T, form, input, file, query string) response {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	switch form {
	case "multipart":
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		w, err := mw.CreateFormFile(input, filepath.Base(file))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(data)
		_ = mw.Close()
		return s.do(http.MethodPost, "/predict"+query, mw.FormDataContentType(), &body)
	case "raw":
		return s.do(http.MethodPost, "/predict"+query, "image/"+strings.TrimPrefix(filepath.Ext(file), "."), bytes.NewReader(data))
	default:
		body, _ := json.Marshal(map[string]string{input: base64.StdEncoding.EncodeToString(data)})
		return s.do(http.MethodPost, "/predict"+query, "application/json", bytes.NewReader(body))
	}
}

type recognised struct {
	Text  string  `json:"text"`
	Score float64 `json:"score"`
}

type class struct {
	Label string  `json:"label"`
	Index int     `json:"index"`
	Score float64 `json:"score"`
}

// TestImagesPaddleOCRRec reads rendered text lines back with PaddleOCR
// rec: every line in JPEG, PNG and WebP, posted as a file, a raw body and
// base64 JSON in turn; at least 95 % of the characters are read right in
// each format.
func TestImagesPaddleOCRRec(t *testing.T) {
	t.Parallel()
	sequential(t)
	dir, lines := renderLines(t)
	s := startServer(t, "rec", "--config", ocrConfig(t))
	forms := []string{"multipart", "raw", "json"}
	for fi, format := range []string{"jpg", "png", "webp"} {
		var chars, errs int
		for i, want := range lines {
			form := forms[(i+fi)%len(forms)]
			r := s.postImage(t, form, "x", filepath.Join(dir, fmt.Sprintf("%d.%s", i, format)), "")
			if r.Status != http.StatusOK {
				t.Fatalf("line %d (%s, %s): %d %s", i, format, form, r.Status, r.Body)
			}
			var out map[string][]recognised
			if err := json.Unmarshal(r.Body, &out); err != nil {
				t.Fatalf("line %d: %v\n%s", i, err, r.Body)
			}
			got := out["softmax_11.tmp_0"]
			if len(got) != 1 {
				t.Fatalf("line %d: want one text, got %s", i, r.Body)
			}
			if got[0].Score <= 0 || got[0].Score > 1 {
				t.Errorf("line %d: score %v out of (0, 1]", i, got[0].Score)
			}
			d := editDistance(want, got[0].Text)
			if d > 0 {
				t.Logf("%s line %d: want %q, read %q", format, i, want, got[0].Text)
			}
			chars += len([]rune(want))
			errs += d
		}
		acc := 1 - float64(errs)/float64(chars)
		t.Logf("%s: %.2f %% of %d characters read right", format, 100*acc, chars)
		if acc < 0.95 {
			t.Errorf("%s: %.2f %% of the characters read right, want at least 95 %%", format, 100*acc)
		}
	}
}

// TestImagesPaddleOCRCls tells upright lines from lines turned by 180°
// with PaddleOCR's direction classifier, on at least 95 % of them in each
// format, and answers a batch of two as two top-1 lists.
func TestImagesPaddleOCRCls(t *testing.T) {
	t.Parallel()
	sequential(t)
	dir, lines := renderLines(t)
	s := startServer(t, "cls", "--config", ocrConfig(t))
	forms := []string{"json", "multipart", "raw"}
	for fi, format := range []string{"jpg", "png", "webp"} {
		right, total := 0, 0
		for i := range lines {
			for _, turn := range []string{"", "-180"} {
				form := forms[(i+fi)%len(forms)]
				r := s.postImage(t, form, "x", filepath.Join(dir, fmt.Sprintf("%d%s.%s", i, turn, format)), "")
				if r.Status != http.StatusOK {
					t.Fatalf("line %d%s (%s, %s): %d %s", i, turn, format, form, r.Status, r.Body)
				}
				var out map[string][][]class
				if err := json.Unmarshal(r.Body, &out); err != nil {
					t.Fatalf("line %d: %v\n%s", i, err, r.Body)
				}
				got := out["softmax_0.tmp_0"]
				if len(got) != 1 || len(got[0]) != 1 {
					t.Fatalf("line %d: want one top-1 list, got %s", i, r.Body)
				}
				want := map[string]string{"": "0", "-180": "180"}[turn]
				total++
				if got[0][0].Label == want && got[0][0].Index == map[string]int{"0": 0, "180": 1}[want] {
					right++
				}
			}
		}
		acc := float64(right) / float64(total)
		t.Logf("%s: orientation right on %d of %d", format, right, total)
		if acc < 0.95 {
			t.Errorf("%s: orientation right on %.1f %%, want at least 95 %%", format, 100*acc)
		}
	}

	// A batch of two in JSON, one upright and one turned: two lists.
	up, _ := os.ReadFile(filepath.Join(dir, "0.png"))
	down, _ := os.ReadFile(filepath.Join(dir, "0-180.jpg"))
	body, _ := json.Marshal(map[string][]string{"x": {
		base64.StdEncoding.EncodeToString(up),
		"data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(down),
	}})
	r := s.predict(string(body))
	var out map[string][][]class
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &out) != nil {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	if b := out["softmax_0.tmp_0"]; len(b) != 2 || b[0][0].Label != "0" || b[1][0].Label != "180" {
		t.Fatalf("batch of upright and turned: %s", r.Body)
	}

	// The raw tensor is one switch away: ?raw=true answers the scores.
	r = s.postImage(t, "raw", "x", filepath.Join(dir, "1.png"), "?raw=true")
	var raw map[string][][]float64
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &raw) != nil {
		t.Fatalf("raw: %d %s", r.Status, r.Body)
	}
	if p := raw["softmax_0.tmp_0"]; len(p) != 1 || len(p[0]) != 2 || p[0][0] < p[0][1] {
		t.Fatalf("raw scores of an upright line: %s", r.Body)
	}
}

// TestImagesBadInput sends every kind of bad picture: each gets a 400 (or
// a 415 for a content type the model does not take) whose detail names
// the input, and the server answers the next good request.
func TestImagesBadInput(t *testing.T) {
	t.Parallel()
	sequential(t)
	dir, _ := renderLines(t)
	s := startServer(t, "cls", "--config", ocrConfig(t))
	good, err := os.ReadFile(filepath.Join(dir, "2.png"))
	if err != nil {
		t.Fatal(err)
	}
	jpeg, _ := os.ReadFile(filepath.Join(dir, "2.jpg"))
	b64 := base64.StdEncoding.EncodeToString
	tests := []struct {
		name, contentType, body string
		status                  int
		detail                  []string
	}{
		{"not an image", "image/png", "hello, world", 400, []string{"'x'", "jpeg", "png"}},
		{"truncated png", "image/png", string(good[:len(good)/2]), 400, []string{"'x'"}},
		{"truncated jpeg", "image/jpeg", string(jpeg[:200]), 400, []string{"'x'"}},
		{"huge dimensions", "image/png", string(pngHeader(100000, 100000)), 400, []string{"'x'", "100000"}},
		{"empty body", "image/png", "", 400, []string{"'x'"}},
		{"text content type", "text/plain", "hello", 415, []string{"image/jpeg", "multipart/form-data"}},
		{"json not base64", "application/json", `{"x": "not base64!"}`, 400, []string{"'x'", "base64"}},
		{"json base64 of text", "application/json", `{"x": "` + b64([]byte("just some text")) + `"}`, 400, []string{"'x'", "jpeg"}},
		{"json numbers for an image", "application/json", `{"x": [[1, 2], [3, 4]]}`, 400, []string{"'x'"}},
		{"json bad item in a batch", "application/json", `{"x": ["` + b64(good) + `", "` + b64([]byte("nope")) + `"]}`, 400, []string{"'x'", "item 1"}},
		{"json data url without base64", "application/json", `{"x": "data:image/png,abc"}`, 400, []string{"'x'", "base64"}},
		{"bad raw switch", "image/png", string(good), 400, []string{"raw"}},
		{"multipart without a boundary", "multipart/form-data", "--zz\r\n", 400, []string{"boundary"}},
		{"multipart cut short", "multipart/form-data; boundary=zz", "--zz\r\nContent-Disposition: form-data; name=\"x\"; filename=\"a.png\"\r\n\r\n" + string(good[:100]), 400, []string{"Malformed multipart/form-data"}},
		{"not a form at all", "multipart/form-data; boundary=zz", "not a form at all", 400, []string{"Missing required input: 'x'"}},
		{"multipart without the picture", "multipart/form-data; boundary=zz", "--zz\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\n1\r\n--zz--\r\n", 400, []string{"'other'"}},
		{"multipart, no fields", "multipart/form-data; boundary=zz", "--zz--\r\n", 400, []string{"Missing required input: 'x'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := "/predict"
			if tt.name == "bad raw switch" {
				path += "?raw=maybe"
			}
			r := s.do(http.MethodPost, path, tt.contentType, strings.NewReader(tt.body))
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			d := r.Detail(t)
			for _, want := range tt.detail {
				if !strings.Contains(d, want) {
					t.Errorf("detail %q does not mention %q", d, want)
				}
			}
			// The server serves the next request.
			if ok := s.do(http.MethodPost, "/predict", "image/png", bytes.NewReader(good)); ok.Status != http.StatusOK {
				t.Fatalf("next request: %d %s", ok.Status, ok.Body)
			}
		})
	}
}

// pngHeader is the start of a PNG whose header claims w×h pixels: no
// picture follows.
func pngHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 2 // 8-bit RGB
	_ = binary.Write(&b, binary.BigEndian, uint32(len(ihdr)))
	chunk := append([]byte("IHDR"), ihdr...)
	b.Write(chunk)
	_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	return b.Bytes()
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
