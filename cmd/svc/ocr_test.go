package main_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"google.golang.org/grpc/codes"

	"github.com/svc-dev/svc/core/pipeline"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/grpcapi"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
)

// ocrPage is a page rendered by core/pipeline's render_ocr.py: its file
// and the lines drawn on it.
type ocrPage struct {
	file  string
	lines []string
}

// renderPages renders core/pipeline's test pages with Pillow (Debian's
// python3-pil, fonts-dejavu-core) into a temporary directory.
func renderPages(t *testing.T) map[string]ocrPage {
	t.Helper()
	skipShort(t, "renders pages with Debian's python3-pil and fonts-dejavu")
	dir := t.TempDir()
	out, err := exec.Command("/usr/bin/python3", filepath.Join(repoRoot, "core", "pipeline", "testdata", "render_ocr.py"), dir).Output()
	if err != nil {
		t.Fatalf("render_ocr.py (make test installs python3-pil and fonts-dejavu-core): %v", err)
	}
	var pages []struct {
		Name  string
		Lines []struct{ Text string }
	}
	if err := json.Unmarshal(out, &pages); err != nil {
		t.Fatal(err)
	}
	m := map[string]ocrPage{}
	for _, p := range pages {
		pg := ocrPage{file: filepath.Join(dir, p.Name+".png")}
		for _, l := range p.Lines {
			pg.lines = append(pg.lines, l.Text)
		}
		m[p.Name] = pg
	}
	return m
}

// pageRead is one page's answer.
type pageRead struct {
	Lines []struct {
		Box   [4][2]int `json:"box"`
		Text  string    `json:"text"`
		Score float64   `json:"score"`
	} `json:"lines"`
	Text string `json:"text"`
}

// graded is the share of the page's characters (spaces aside, as PP-OCRv4
// drops many between English words) read right.
func graded(pg ocrPage, got pageRead) float64 {
	want := strings.ReplaceAll(strings.Join(pg.lines, ""), " ", "")
	read := strings.ReplaceAll(strings.ReplaceAll(got.Text, "\n", ""), " ", "")
	return 1 - float64(editDistance(want, read))/float64(max(len([]rune(want)), 1))
}

// readV1 posts the page to /predict as form says (json, raw, multipart)
// and returns its status and the pages answered.
func readV1(t *testing.T, s *server, form, file, query string) (response, []pageRead) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var r response
	switch form {
	case "multipart":
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		w, _ := mw.CreateFormFile("image", filepath.Base(file))
		_, _ = w.Write(data)
		_ = mw.Close()
		r = s.do(http.MethodPost, "/predict"+query, mw.FormDataContentType(), &body)
	case "raw":
		r = s.do(http.MethodPost, "/predict"+query, "image/png", bytes.NewReader(data))
	default:
		body, _ := json.Marshal(map[string]string{"image": base64.StdEncoding.EncodeToString(data)})
		r = s.do(http.MethodPost, "/predict"+query, "application/json", bytes.NewReader(body))
	}
	if r.Status != http.StatusOK {
		return r, nil
	}
	var out struct{ Pages []pageRead }
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatalf("%v\n%s", err, r.Body)
	}
	return r, out.Pages
}

// readV2 posts the page to /v2/models/ocr/infer as BYTES (base64 text)
// with params as parameters.
func readV2(t *testing.T, s *server, file, params string) (response, []pageRead) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"inputs":[{"name":"image","datatype":"BYTES","shape":[1],"data":[%q]}],"parameters":{%s}}`,
		base64.StdEncoding.EncodeToString(data), params)
	r := s.do(http.MethodPost, "/v2/models/ocr/infer", "application/json", strings.NewReader(body))
	if r.Status != http.StatusOK {
		return r, nil
	}
	var out struct {
		Outputs []struct {
			Name string
			Data []string
		}
	}
	if err := json.Unmarshal(r.Body, &out); err != nil || len(out.Outputs) != 1 || out.Outputs[0].Name != "pages" {
		t.Fatalf("v2 answer %s: %v", r.Body, err)
	}
	return r, decodePages(t, out.Outputs[0].Data)
}

func decodePages(t *testing.T, docs []string) []pageRead {
	t.Helper()
	pages := make([]pageRead, len(docs))
	for i, d := range docs {
		if err := json.Unmarshal([]byte(d), &pages[i]); err != nil {
			t.Fatalf("page %d: %v\n%s", i, err, d)
		}
	}
	return pages
}

// readGRPC sends the page's bytes to ModelInfer with params.
func readGRPC(t *testing.T, c *grpcapi.Client, file string, params map[string]*inference.InferParameter) ([]pageRead, error) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	req := &inference.ModelInferRequest{ModelName: "ocr", Parameters: params, Inputs: []*inference.ModelInferRequest_InferInputTensor{{
		Name: "image", Datatype: "BYTES", Shape: []int64{1}, Contents: &inference.InferTensorContents{BytesContents: [][]byte{data}},
	}}}
	resp, err := c.Infer(context.Background(), req)
	if err != nil {
		return nil, err
	}
	outs, err := grpcapi.Outputs(resp)
	if err != nil || len(outs) != 1 || outs[0].DType != tensor.String {
		t.Fatalf("gRPC answer %v: %v", outs, err)
	}
	return decodePages(t, outs[0].Data.([]string)), nil
}

// TestOCRPipelineServes serves examples/ocr's page reader (det, cls and
// rec as one model, alone and with --workers 2) and reads a rendered page
// through v1 (JSON base64, a raw body, multipart), v2 REST and gRPC: at
// least 95 % of its characters each time; a blank page answers no lines.
func TestOCRPipelineServes(t *testing.T) {
	t.Parallel()
	pages := renderPages(t)
	for _, tc := range []struct {
		name  string
		extra []string
	}{{"one process", nil}, {"workers 2", []string{"--workers", "2"}}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			port := freePort(t)
			s := startServer(t, append([]string{"ocr", "-c", filepath.Join(repoRoot, "examples", "ocr", "svc.yml"), "--grpc-port", port}, tc.extra...)...)
			c := grpcClient(t, "127.0.0.1:"+port)
			wide := pages["wide"]
			reads := []struct {
				name string
				read func() ([]pageRead, error)
			}{
				{"v1 json", func() ([]pageRead, error) { return v1OK(t, s, "json", wide.file) }},
				{"v1 raw", func() ([]pageRead, error) { return v1OK(t, s, "raw", wide.file) }},
				{"v1 multipart", func() ([]pageRead, error) { return v1OK(t, s, "multipart", wide.file) }},
				{"v2 rest", func() ([]pageRead, error) {
					r, p := readV2(t, s, wide.file, "")
					if r.Status != http.StatusOK {
						return nil, fmt.Errorf("%d %s", r.Status, r.Body)
					}
					return p, nil
				}},
				{"grpc", func() ([]pageRead, error) { return readGRPC(t, c, wide.file, nil) }},
			}
			for _, rd := range reads {
				got, err := rd.read()
				if err != nil || len(got) != 1 {
					t.Fatalf("%s: %v, %d pages", rd.name, err, len(got))
				}
				if acc := graded(wide, got[0]); acc < 0.95 {
					t.Errorf("%s: %.1f %% of the characters read, want at least 95 %%:\n%s", rd.name, 100*acc, got[0].Text)
				}
				if len(got[0].Lines) != len(wide.lines) {
					t.Errorf("%s: %d lines read, %d drawn", rd.name, len(got[0].Lines), len(wide.lines))
				}
			}
			for _, name := range []string{"blank", "tiny"} {
				got, err := v1OK(t, s, "raw", pages[name].file)
				if err != nil || len(got) != 1 || len(got[0].Lines) != 0 || got[0].Text != "" {
					t.Errorf("%s page: %v %+v, want no lines", name, err, got)
				}
			}
			if code := s.stop(syscall.SIGTERM); code != 0 {
				t.Fatalf("exit code %d\n%s", code, s.stderr)
			}
		})
	}
}

// v1OK reads a page through /predict and fails on any status but 200.
func v1OK(t *testing.T, s *server, form, file string) ([]pageRead, error) {
	t.Helper()
	r, p := readV1(t, s, form, file, "")
	if r.Status != http.StatusOK {
		return nil, fmt.Errorf("%d %s", r.Status, r.Body)
	}
	return p, nil
}

// TestOCRPipelineRefuses: a bad override gets a 400 (InvalidArgument on
// gRPC) naming the parameter, in the query string and in v2 parameters;
// what is not a picture gets the image inputs' 400; a good override
// changes the answer; /openapi.json describes the page as a picture
// upload, and kin-openapi validates real requests against it.
func TestOCRPipelineRefuses(t *testing.T) {
	t.Parallel()
	sequential(t)
	pages := renderPages(t)
	port := freePort(t)
	s := startServer(t, "ocr", "-c", filepath.Join(repoRoot, "examples", "ocr", "svc.yml"), "--grpc-port", port)
	c := grpcClient(t, "127.0.0.1:"+port)
	file := pages["wide"].file
	for _, tc := range []struct{ name, value, v2 string }{
		{"box_thresh", "2", "2"},
		{"unclip_ratio", "0", "0"},
		{"text_score", "high", `"high"`},
		{"classify", "maybe", `"maybe"`},
	} {
		r, _ := readV1(t, s, "raw", file, "?"+tc.name+"="+tc.value)
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Detail(t), "parameter "+tc.name) {
			t.Errorf("v1 %s=%s: %d %s, want a 400 naming it", tc.name, tc.value, r.Status, r.Body)
		}
		r, _ = readV2(t, s, file, fmt.Sprintf("%q:%s", tc.name, tc.v2))
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "parameter "+tc.name) {
			t.Errorf("v2 %s=%s: %d %s, want a 400 naming it", tc.name, tc.v2, r.Status, r.Body)
		}
		p := &inference.InferParameter{ParameterChoice: &inference.InferParameter_StringParam{StringParam: tc.value}}
		_, err := readGRPC(t, c, file, map[string]*inference.InferParameter{tc.name: p})
		wantGRPCCode(t, err, codes.InvalidArgument, "parameter "+tc.name)
	}
	// text_score 1 drops every line: the override reaches the reader.
	for _, q := range []string{"?text_score=1", "?text_score=1&classify=false&box_thresh=0.5&unclip_ratio=1.6"} {
		r, got := readV1(t, s, "raw", file, q)
		if r.Status != http.StatusOK || len(got) != 1 || len(got[0].Lines) != 0 {
			t.Errorf("%s: %d %s, want no lines", q, r.Status, r.Body)
		}
	}
	notPicture := filepath.Join(t.TempDir(), "note.png")
	if err := os.WriteFile(notPicture, []byte("hello, not a picture"), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "Input 'image': not an image (accepted formats: jpeg, png, webp, gif, bmp)"
	for _, form := range []string{"json", "raw", "multipart"} {
		r, _ := readV1(t, s, form, notPicture, "")
		if r.Status != http.StatusBadRequest || r.Detail(t) != want {
			t.Errorf("v1 %s, not a picture: %d %s, want 400 %q", form, r.Status, r.Body, want)
		}
	}
	r, _ := readV2(t, s, notPicture, "")
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), want) {
		t.Errorf("v2, not a picture: %d %s", r.Status, r.Body)
	}
	_, err := readGRPC(t, c, notPicture, nil)
	wantGRPCCode(t, err, codes.InvalidArgument, want)

	checkPipelineOpenAPI(t, s, file)
}

// checkPipelineOpenAPI loads the served /openapi.json with kin-openapi
// and validates real /predict requests for a page against it: the page
// as base64 in JSON, as a multipart file, as the whole body (with
// ?draw=true); the document says the picture is a binary upload in the
// last two, and refuses a number where the picture goes.
func checkPipelineOpenAPI(t *testing.T, s *server, file string) {
	t.Helper()
	r := s.get("/openapi.json")
	doc, err := openapi3.NewLoader().LoadFromData(r.Body)
	if r.Status != http.StatusOK || err != nil {
		t.Fatalf("GET /openapi.json: %d %v", r.Status, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("kin-openapi: %v", err)
	}
	item := doc.Paths.Find("/predict")
	if item == nil || item.Post == nil || item.Post.RequestBody == nil {
		t.Fatal("/openapi.json has no POST /predict with a body")
	}
	content := item.Post.RequestBody.Value.Content
	form, raw := content.Get("multipart/form-data"), content.Get("image/png")
	if form == nil || form.Schema.Value.Properties["image"] == nil || form.Schema.Value.Properties["image"].Value.Format != "binary" {
		t.Errorf("multipart/form-data: %+v, want the field image a binary file", form)
	}
	if raw == nil || raw.Schema.Value.Format != "binary" {
		t.Errorf("image/png: %+v, want a binary body", raw)
	}
	for _, name := range append([]string{"draw"}, pipeline.Overrides...) {
		if item.Post.Parameters.GetByInAndName("query", name) == nil {
			t.Errorf("/predict has no %s parameter", name)
		}
	}
	openapi3filter.RegisterBodyDecoder("image/png", openapi3filter.FileBodyDecoder)
	t.Cleanup(func() { openapi3filter.UnregisterBodyDecoder("image/png") })
	route := &routers.Route{Spec: doc, Path: "/predict", PathItem: item, Method: http.MethodPost, Operation: item.Post}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var form1 bytes.Buffer
	mw := multipart.NewWriter(&form1)
	part := textproto.MIMEHeader{}
	part.Set("Content-Disposition", `form-data; name="image"; filename="page.png"`)
	part.Set("Content-Type", "image/png")
	w, _ := mw.CreatePart(part)
	_, _ = w.Write(data)
	_ = mw.Close()
	for _, tt := range []struct {
		name, query, ct string
		body            []byte
		valid           bool
	}{
		{"json base64", "", "application/json", []byte(`{"image": "` + base64.StdEncoding.EncodeToString(data) + `"}`), true},
		{"json batch", "", "application/json", []byte(`{"image": ["` + base64.StdEncoding.EncodeToString(data) + `"]}`), true},
		{"multipart file", "", mw.FormDataContentType(), form1.Bytes(), true},
		{"the page as the body, drawn", "?draw=true", "image/png", data, true},
		{"the page with settings", "?box_thresh=0.5&unclip_ratio=2&text_score=0.3&classify=false", "image/png", data, true},
		{"box_thresh over 1", "?box_thresh=2", "image/png", data, false},
		{"unclip_ratio 0", "?unclip_ratio=0", "image/png", data, false},
		{"classify not a boolean", "?classify=maybe", "image/png", data, false},
		{"a number for the picture", "", "application/json", []byte(`{"image": 5}`), false},
		{"no picture", "", "application/json", []byte(`{"page": "x"}`), false},
	} {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/predict"+tt.query, bytes.NewReader(tt.body))
		req.Header.Set("Content-Type", tt.ct)
		err := openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
			Request: req, Route: route, QueryParams: req.URL.Query(), Options: &openapi3filter.Options{MultiError: true}})
		if (err == nil) != tt.valid {
			t.Errorf("%s: kin-openapi says %v, want valid %v", tt.name, err, tt.valid)
		}
	}
}

// TestOCRPipelineStartup: a pipeline entry missing a stage, or whose stage
// is a model of the wrong shape, fails start-up naming the stage's key.
func TestOCRPipelineStartup(t *testing.T) {
	t.Parallel()
	models := filepath.Join(repoRoot, "build", "models")
	stages := fmt.Sprintf(`models:
  det: {path: %s}
  cls:
    path: %s
    inputs: {x: {image: {preset: paddleocr-cls}}}
  rec:
    path: %s
    outputs: {softmax_11.tmp_0: {ctc: {labels: %s}}}
`, filepath.Join(models, "paddleocr-det"), filepath.Join(models, "paddleocr-cls"), filepath.Join(models, "paddleocr-rec"),
		filepath.Join(models, "paddleocr-rec", "ppocr_keys_v1.txt"))
	for _, tc := range []struct{ name, pipeline, want string }{
		{"no recogniser", "{kind: ocr, detect: {model: det}}", "models.ocr.pipeline.recognize is required"},
		{"no detector model", "{kind: ocr, detect: {model: nodet}, recognize: {model: rec}}", `models.ocr.pipeline.detect.model names "nodet"`},
		{"detector of the wrong shape", "{kind: ocr, detect: {model: cls}, recognize: {model: rec}}", "models.ocr.pipeline.detect.model: detect: model"},
		{"classifier of the wrong shape", "{kind: ocr, detect: {model: det}, classify: {model: det}, recognize: {model: rec}}", "models.ocr.pipeline.classify.model: classify: model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := filepath.Join(t.TempDir(), "svc.yml")
			if err := os.WriteFile(cfg, []byte(stages+"  ocr:\n    pipeline: "+tc.pipeline+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := runSvc(t, nil, "serve", "ocr", "-c", cfg, "--port", "0")
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant it to fail naming %q", code, stderr, tc.want)
			}
		})
	}
}
