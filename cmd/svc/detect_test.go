package main_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	stdimage "image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
	"github.com/svc-dev/svc/transport/oip"
)

// The grid detectors (cmd/genmodels) find solid red, green and blue
// squares in a 160×160 letterbox of the picture; these tests draw squares
// on canvases of odd sizes and expect boxes where they drew them, in the
// picture's pixels.

// square is one solid square drawn on a canvas: its class (0 red, 1
// green, 2 blue) and its extent in pixels, [x1, x2) × [y1, y2).
type square struct {
	class          int
	x1, y1, x2, y2 int
}

var squareColours = []color.RGBA{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}}

// canvas is a picture of w×h grey pixels with the squares drawn on it.
func canvas(w, h int, squares []square) *stdimage.RGBA {
	img := stdimage.NewRGBA(stdimage.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 128
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	for _, s := range squares {
		for y := s.y1; y < s.y2; y++ {
			for x := s.x1; x < s.x2; x++ {
				img.SetRGBA(x, y, squareColours[s.class])
			}
		}
	}
	return img
}

// encodePicture is img as PNG or JPEG (quality 95).
func encodePicture(t *testing.T, img stdimage.Image, format string) []byte {
	t.Helper()
	var b bytes.Buffer
	var err error
	if format == "jpeg" {
		err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 95})
	} else {
		err = png.Encode(&b, img)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// detection is one box of a detection output's answer.
type detection struct {
	Label string  `json:"label"`
	Index int     `json:"index"`
	Score float64 `json:"score"`
	Box   struct {
		X1, Y1, X2, Y2 float64
	} `json:"box"`
	Polygon   [][2]float64          `json:"polygon"`
	Mask      *struct{ Size []int } `json:"mask"`
	Keypoints []struct {
		X, Y, Score float64
	} `json:"keypoints"`
}

// postPicture posts data to /predict as form says: "raw" (the body, its
// image/... type), "multipart" (a file field) or "json" (base64).
func (s *server) postPicture(t *testing.T, form, format string, data []byte, query string, headers ...string) response {
	t.Helper()
	switch form {
	case "raw":
		return s.do(http.MethodPost, "/predict"+query, "image/"+format, bytes.NewReader(data), headers...)
	case "multipart":
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		w, err := mw.CreateFormFile("images", "squares."+format)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(data)
		_ = mw.Close()
		return s.do(http.MethodPost, "/predict"+query, mw.FormDataContentType(), &body, headers...)
	}
	body, _ := json.Marshal(map[string]string{"images": base64.StdEncoding.EncodeToString(data)})
	return s.do(http.MethodPost, "/predict"+query, "application/json", bytes.NewReader(body), headers...)
}

// detections reads output0's detections of one picture from a /predict
// answer.
func detections(t *testing.T, r response) []detection {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("predict: %d %s", r.Status, r.Body)
	}
	var out map[string][][]detection
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatalf("answer: %v\n%s", err, r.Body)
	}
	if len(out["output0"]) != 1 {
		t.Fatalf("want one picture's list, got %s", r.Body)
	}
	return out["output0"][0]
}

// checkBoxes fails unless dets hold one box per square, of its class,
// within tol pixels of where it was drawn.
func checkBoxes(t *testing.T, what string, dets []detection, squares []square, tol float64) {
	t.Helper()
	if len(dets) != len(squares) {
		t.Fatalf("%s: want %d boxes, got %+v", what, len(squares), dets)
	}
	for _, s := range squares {
		found := false
		for _, d := range dets {
			if d.Index != s.class {
				continue
			}
			found = true
			if d.Label != []string{"red", "green", "blue"}[s.class] || d.Score <= 0.25 || d.Score > 1 {
				t.Errorf("%s: class %d answered %+v", what, s.class, d)
			}
			want := [4]float64{float64(s.x1), float64(s.y1), float64(s.x2), float64(s.y2)}
			got := [4]float64{d.Box.X1, d.Box.Y1, d.Box.X2, d.Box.Y2}
			for k := range want {
				if math.Abs(want[k]-got[k]) > tol {
					t.Errorf("%s: class %d box %v, drawn at %v (tolerance %.1f)", what, s.class, got, want, tol)
					break
				}
			}
		}
		if !found {
			t.Errorf("%s: no box of class %d in %+v", what, s.class, dets)
		}
	}
}

// squareScenes are canvases of odd sizes, wide and tall, with their
// squares.
var squareScenes = []struct {
	w, h    int
	squares []square
}{
	{331, 207, []square{{0, 24, 40, 104, 120}, {1, 180, 60, 260, 140}, {2, 276, 150, 320, 194}}},
	{181, 397, []square{{2, 20, 30, 100, 110}, {0, 60, 250, 160, 350}}},
}

// tolerance is how far a box may be from the square drawn: the letterbox
// maps a model pixel to 1/r picture pixels (r = 160 / the longer side);
// the model's box edges are whole model pixels, and a JPEG's blur moves
// an edge by a pixel or two more.
func tolerance(w, h int, format string) float64 {
	tol := 1.5 * float64(max(w, h)) / 160
	if format == "jpeg" {
		tol += 3
	}
	return tol
}

// TestDetectSquares serves each grid detector with no svc.yml (recognised
// from its Ultralytics metadata) and posts squares drawn on canvases of
// odd sizes as PNG and JPEG, raw, multipart and base64: one box per
// square, of its class, where it was drawn; segment answers a polygon
// inside the box (and COCO RLE with rle=true), pose the box's corners.
func TestDetectSquares(t *testing.T) {
	t.Parallel()
	sequential(t)
	for _, file := range []string{"detect_yolov8.onnx", "detect_yolov5.onnx", "detect_end2end.onnx", "detect_rtdetr.onnx", "segment_yolov8.onnx", "pose_yolov8.onnx"} {
		t.Run(strings.TrimSuffix(file, ".onnx"), func(t *testing.T) {
			t.Parallel()
			s := startServer(t, model(file))
			forms := []string{"raw", "multipart", "json"}
			n := 0
			for _, sc := range squareScenes {
				img := canvas(sc.w, sc.h, sc.squares)
				for _, format := range []string{"png", "jpeg"} {
					form := forms[n%len(forms)]
					n++
					what := fmt.Sprintf("%dx%d %s %s", sc.w, sc.h, format, form)
					query := ""
					if strings.HasPrefix(file, "segment") {
						query = "?rle=true"
					}
					dets := detections(t, s.postPicture(t, form, format, encodePicture(t, img, format), query))
					checkBoxes(t, what, dets, sc.squares, tolerance(sc.w, sc.h, format))
					checkExtras(t, what, file, dets, sc.w, sc.h, tolerance(sc.w, sc.h, format))
					for _, d := range dets {
						if (query != "") != (d.Mask != nil) {
							t.Errorf("%s: rle asked %v, mask %+v", what, query != "", d.Mask)
						}
					}
				}
			}
		})
	}
}

// checkExtras checks segment's polygons and masks and pose's keypoints.
func checkExtras(t *testing.T, what, file string, dets []detection, w, h int, tol float64) {
	t.Helper()
	for _, d := range dets {
		switch {
		case strings.HasPrefix(file, "segment"):
			if len(d.Polygon) < 4 || d.Mask != nil && (len(d.Mask.Size) != 2 || d.Mask.Size[0] != h || d.Mask.Size[1] != w) {
				t.Fatalf("%s: segment answer %+v", what, d)
			}
			for _, p := range d.Polygon {
				if p[0] < d.Box.X1-tol || p[0] > d.Box.X2+tol || p[1] < d.Box.Y1-tol || p[1] > d.Box.Y2+tol {
					t.Errorf("%s: polygon point %v outside box %+v", what, p, d.Box)
				}
			}
		case strings.HasPrefix(file, "pose"):
			b := d.Box
			corners := [][2]float64{{b.X1, b.Y1}, {b.X2, b.Y1}, {b.X2, b.Y2}, {b.X1, b.Y2}}
			if len(d.Keypoints) != 4 {
				t.Fatalf("%s: keypoints %+v", what, d.Keypoints)
			}
			for i, k := range d.Keypoints {
				if math.Abs(k.X-corners[i][0]) > 0.5 || math.Abs(k.Y-corners[i][1]) > 0.5 || k.Score != 1 {
					t.Errorf("%s: keypoint %d %+v, want corner %v", what, i, k, corners[i])
				}
			}
		case d.Polygon != nil || d.Keypoints != nil || d.Mask != nil:
			t.Errorf("%s: a detect output answered %+v", what, d)
		}
	}
}

// oipDetections reads one picture's detections from a BYTES element.
func oipDetections(t *testing.T, what string, element string) []detection {
	t.Helper()
	var dets []detection
	if err := json.Unmarshal([]byte(element), &dets); err != nil {
		t.Fatalf("%s: element %q: %v", what, element, err)
	}
	return dets
}

// TestDetectOIP sends squares to a grid detector over the Open Inference
// Protocol, REST JSON (base64), REST binary and gRPC: output0 answers
// BYTES [N], each element a picture's detections as JSON, boxes where the
// squares were drawn; the request's parameters override the settings
// (classes, max_det), a bad one is a 400 or InvalidArgument naming it;
// parameters.raw answers the tensor; the metadata says BYTES [-1].
func TestDetectOIP(t *testing.T) {
	t.Parallel()
	sequential(t)
	port := freePort(t)
	s := startServer(t, model("detect_yolov8.onnx"), "--grpc-port", port)
	ctx := context.Background()
	sc := squareScenes[0]
	img := canvas(sc.w, sc.h, sc.squares)
	pngData, jpegData := encodePicture(t, img, "png"), encodePicture(t, img, "jpeg")
	blank := encodePicture(t, canvas(sc.w, sc.h, nil), "png")

	mm, err := s.oipClient().ModelMetadata(ctx, "detect_yolov8")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(mm.Outputs, []oip.TensorMetadata{{Name: "output0", Datatype: "BYTES", Shape: []int64{-1}}}) {
		t.Fatalf("metadata outputs: %+v", mm.Outputs)
	}

	// REST: JSON carries base64, binary data the files; two pictures, the
	// second blank (an empty list).
	for _, binary := range []bool{false, true} {
		in := oip.InferInput{Name: "images", Tensor: &tensor.Tensor{DType: tensor.String, Shape: []int64{2}, Data: []string{b64(jpegData), b64(blank)}}}
		if binary {
			in = oip.InferInput{Name: "images", Binary: true, Tensor: &tensor.Tensor{DType: tensor.String, Shape: []int64{2}, Data: []string{string(pngData), string(blank)}}}
		}
		res, err := s.oipClient().Infer(ctx, "detect_yolov8", &oip.InferRequest{Inputs: []oip.InferInput{in}, BinaryOutput: binary})
		if err != nil {
			t.Fatalf("binary %v: %v", binary, err)
		}
		o := res.Output("output0")
		if o == nil || o.DType != tensor.String || !reflect.DeepEqual(o.Shape, []int64{2}) {
			t.Fatalf("binary %v: output %+v", binary, o)
		}
		got := o.Data.([]string)
		what := fmt.Sprintf("v2 REST binary %v", binary)
		checkBoxes(t, what, oipDetections(t, what, got[0]), sc.squares, tolerance(sc.w, sc.h, "jpeg"))
		if got[1] != "[]" {
			t.Errorf("%s: a blank picture answered %q", what, got[1])
		}
	}

	// Parameters override the settings; a bad one names itself.
	one := func(params string) response {
		return s.do(http.MethodPost, "/v2/models/detect_yolov8/infer", "application/json", strings.NewReader(
			`{"parameters": {`+params+`}, "inputs": [{"name": "images", "datatype": "BYTES", "shape": [1], "data": ["`+b64(pngData)+`"]}]}`))
	}
	r := one(`"classes": [1, 2], "max_det": 1`)
	var answer struct {
		Outputs []struct {
			Name  string
			Shape []int64
			Data  []string
		}
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &answer) != nil || len(answer.Outputs) != 1 {
		t.Fatalf("classes and max_det: %d %s", r.Status, r.Body)
	}
	if dets := oipDetections(t, "classes", answer.Outputs[0].Data[0]); len(dets) != 1 || dets[0].Index == 0 {
		t.Errorf("classes [1, 2], max_det 1 answered %+v", dets)
	}
	for _, tt := range []struct{ params, want string }{
		{`"confidence": 2`, "parameters.confidence"},
		{`"iou": -1`, "parameters.iou"},
		{`"max_det": 0`, "parameters.max_det"},
		{`"classes": "cat"`, "parameters.classes"},
	} {
		r := one(tt.params)
		if r.Status != http.StatusBadRequest || !strings.Contains(oipError(t, r), tt.want) {
			t.Errorf("%s: %d %s", tt.params, r.Status, r.Body)
		}
	}
	r = one(`"raw": true`)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"datatype":"FP32","shape":[1,7,400]`) {
		t.Fatalf("raw: %d %.300s", r.Status, r.Body)
	}

	// gRPC: bytes_contents; a parameter as a double.
	c := grpcClient(t, "127.0.0.1:"+port)
	req := &inference.ModelInferRequest{ModelName: "detect_yolov8", Inputs: []*inference.ModelInferRequest_InferInputTensor{{
		Name: "images", Datatype: "BYTES", Shape: []int64{1},
		Contents: &inference.InferTensorContents{BytesContents: [][]byte{jpegData}},
	}}}
	resp, err := c.Infer(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	out := resp.GetOutputs()[0]
	if out.GetDatatype() != "BYTES" || !reflect.DeepEqual(out.GetShape(), []int64{1}) || len(out.GetContents().GetBytesContents()) != 1 {
		t.Fatalf("gRPC output %v", out)
	}
	checkBoxes(t, "gRPC", oipDetections(t, "gRPC", string(out.GetContents().GetBytesContents()[0])), sc.squares, tolerance(sc.w, sc.h, "jpeg"))
	req.Parameters = map[string]*inference.InferParameter{"confidence": {ParameterChoice: &inference.InferParameter_DoubleParam{DoubleParam: 2}}}
	_, err = c.Infer(ctx, req)
	if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "confidence") {
		t.Fatalf("gRPC confidence 2: %v", err)
	}
}

// TestDetectRequests asks a grid detector through /predict what a request
// may ask: overrides in the query (classes, max_det, confidence), each bad
// one a 400 naming the parameter and what it takes; a picture with
// nothing in it answers an empty list; draw=true and an Accept header
// answer the picture drawn (PNG, JPEG) at its own size, the box's outline
// in the class's colour where the box is; draw with a batch or with raw
// is a 400; /info and /openapi.json say what the output answers.
func TestDetectRequests(t *testing.T) {
	t.Parallel()
	sequential(t)
	s := startServer(t, model("detect_yolov8.onnx"))
	sc := squareScenes[0]
	pic := encodePicture(t, canvas(sc.w, sc.h, sc.squares), "png")

	dets := detections(t, s.postPicture(t, "raw", "png", pic, "?classes=1,2&max_det=1"))
	if len(dets) != 1 || dets[0].Index == 0 {
		t.Errorf("classes=1,2&max_det=1 answered %+v", dets)
	}
	if dets := detections(t, s.postPicture(t, "multipart", "png", pic, "?confidence=0.999")); len(dets) != 0 {
		t.Errorf("confidence=0.999 answered %+v", dets)
	}
	blank := encodePicture(t, canvas(sc.w, sc.h, nil), "jpeg")
	if r := s.postPicture(t, "json", "jpeg", blank, ""); r.Status != http.StatusOK || string(r.Body) != `{"output0":[[]]}` {
		t.Errorf("a blank picture: %d %s", r.Status, r.Body)
	}
	for _, tt := range []struct{ query, want string }{
		{"?confidence=2", "confidence takes a number from 0 to 1"},
		{"?iou=-1", "iou takes a number from 0 to 1"},
		{"?max_det=0", "max_det takes a whole number from 1"},
		{"?classes=cat", "classes takes class indices separated by commas (0 to 2)"},
		{"?classes=3", "classes takes class indices"},
		{"?draw=maybe", "draw must be true or false"},
		{"?draw=true&raw=true", "ask for one"},
	} {
		r := s.postPicture(t, "raw", "png", pic, tt.query)
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Detail(t), tt.want) {
			t.Errorf("%s: %d %s, want 400 saying %q", tt.query, r.Status, r.Body, tt.want)
		}
	}
	batch, _ := json.Marshal(map[string][]string{"images": {b64(pic), b64(pic)}})
	r := s.do(http.MethodPost, "/predict?draw=true", "application/json", bytes.NewReader(batch))
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Detail(t), "send one picture") {
		t.Errorf("a batch with draw: %d %s", r.Status, r.Body)
	}

	checkDrawing(t, s, sc.w, sc.h, pic)
	// draw=true alone answers in the format sent; Accept overrides it.
	photo := encodePicture(t, canvas(sc.w, sc.h, sc.squares), "jpeg")
	for _, tt := range []struct{ accept, want string }{{"", "image/jpeg"}, {"image/png", "image/png"}} {
		var headers []string
		if tt.accept != "" {
			headers = []string{"Accept", tt.accept}
		}
		r := s.postPicture(t, "raw", "jpeg", photo, "?draw=true", headers...)
		if _, format, err := stdimage.Decode(bytes.NewReader(r.Body)); r.Status != http.StatusOK || r.Header.Get("Content-Type") != tt.want || err != nil || "image/"+format != tt.want {
			t.Errorf("a JPEG with draw=true, Accept %q: %d %s (%s, %v)", tt.accept, r.Status, r.Header.Get("Content-Type"), format, err)
		}
	}

	var info struct {
		Outputs []struct {
			Name   string
			Decode *struct{ Kind, Description string }
		}
	}
	if err := json.Unmarshal(s.get("/info").Body, &info); err != nil || len(info.Outputs) != 1 || info.Outputs[0].Decode == nil ||
		info.Outputs[0].Decode.Kind != "detect" || !strings.Contains(info.Outputs[0].Decode.Description, "labels from the model's metadata") {
		t.Errorf("/info outputs: %+v (%v)", info.Outputs, err)
	}
	doc := string(s.get("/openapi.json").Body)
	for _, want := range []string{`"image/png"`, `"image/jpeg"`, `"max_det"`, `"x2"`, `"draw"`} {
		if !strings.Contains(doc, want) {
			t.Errorf("/openapi.json lacks %s", want)
		}
	}
}

// checkDrawing asks for the picture drawn, by draw=true (PNG) and by
// Accept (JPEG): the picture at its own size, each box's bottom edge
// in its class's colour (Ultralytics' palette).
func checkDrawing(t *testing.T, s *server, w, h int, pic []byte) {
	t.Helper()
	dets := detections(t, s.postPicture(t, "raw", "png", pic, ""))
	palette := []color.RGBA{{0xFF, 0x38, 0x38, 255}, {0xFF, 0x9D, 0x97, 255}, {0xFF, 0x70, 0x1F, 255}}
	for _, tt := range []struct{ query, accept, want string }{
		{"?draw=true", "", "image/png"},
		{"?draw", "image/jpeg", "image/jpeg"},
		{"", "image/png, application/json;q=0.5", "image/png"},
	} {
		var headers []string
		if tt.accept != "" {
			headers = []string{"Accept", tt.accept}
		}
		r := s.postPicture(t, "multipart", "png", pic, tt.query, headers...)
		if r.Status != http.StatusOK || r.Header.Get("Content-Type") != tt.want {
			t.Fatalf("%s %s: %d %s %.200s", tt.query, tt.accept, r.Status, r.Header.Get("Content-Type"), r.Body)
		}
		img, format, err := stdimage.Decode(bytes.NewReader(r.Body))
		if err != nil || "image/"+format != tt.want || img.Bounds().Dx() != w || img.Bounds().Dy() != h {
			t.Fatalf("%s %s: a %s picture of %v (%v)", tt.query, tt.accept, format, img.Bounds(), err)
		}
		for _, d := range dets {
			x, y := int((d.Box.X1+d.Box.X2)/2), int(math.Round(d.Box.Y2))-1
			got := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			want := palette[d.Index]
			if tt.want == "image/jpeg" {
				if dist := math.Abs(float64(got.R)-float64(want.R)) + math.Abs(float64(got.G)-float64(want.G)) + math.Abs(float64(got.B)-float64(want.B)); dist > 90 {
					t.Errorf("%s: pixel (%d, %d) of box %d is %v, want about %v", tt.want, x, y, d.Index, got, want)
				}
			} else if got != want {
				t.Errorf("%s: pixel (%d, %d) of box %d is %v, want %v", tt.want, x, y, d.Index, got, want)
			}
		}
	}
}

// TestDetectWrongShape declares detect on outputs it cannot read: svc
// refuses to start, naming the output, its shape and the layouts it
// takes.
func TestDetectWrongShape(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ path, output, decl string }{
		{model("classifier.onnx"), "probabilities", "detect: {}"},
		{model("detect_yolov8.onnx"), "output0", "detect: {layout: end2end}"},
	} {
		cfg := writeConfig(t, fmt.Sprintf("models:\n  m:\n    path: %s\n    outputs:\n      %s:\n        %s\n", tt.path, tt.output, tt.decl))
		code, _, stderr := runSvc(t, nil, "serve", "m", "-c", cfg, "--port", "0")
		for _, want := range []string{"outputs." + tt.output + ".detect", "output '" + tt.output + "' has shape [", "yolov8 [N, 4+classes, anchors], yolov5 [N, anchors, 5+classes], end2end [N, boxes, 6], rtdetr [N, queries, 4+classes]"} {
			if code != 1 || !strings.Contains(stderr, want) {
				t.Errorf("%s: exit %d, stderr lacks %q:\n%s", tt.decl, code, want, stderr)
			}
		}
	}
}

// TestDetectInit runs 'svc init --model' on the grid segmenter and serves
// it from the file written: its output declared segment, its input the
// yolo preset at its size, squares in, boxes and polygons out.
func TestDetectInit(t *testing.T) {
	t.Parallel()
	cmd := svcCmd(t, nil, "init", "--model", model("segment_yolov8.onnx"), "--name", "seg")
	code, stdout, stderr := runCmd(t, cmd)
	if code != 0 {
		t.Fatalf("init: %d %s %s", code, stdout, stderr)
	}
	cfg := filepath.Join(cmd.Dir, "svc.yml")
	body, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"image: {preset: yolo, size: [160, 160]}", "\n      output0:\n        segment: {}"} {
		if !strings.Contains(string(body), want) {
			t.Fatalf("svc.yml lacks %q:\n%s", want, body)
		}
	}
	s := startServer(t, "seg", "--config", cfg)
	sc := squareScenes[1]
	dets := detections(t, s.postPicture(t, "raw", "png", encodePicture(t, canvas(sc.w, sc.h, sc.squares), "png"), ""))
	checkBoxes(t, "svc init", dets, sc.squares, tolerance(sc.w, sc.h, "png"))
	checkExtras(t, "svc init", "segment", dets, sc.w, sc.h, tolerance(sc.w, sc.h, "png"))
}

// TestDetectSegmentOutputs: a segment model's prototype masks are read by
// its decoded output, so /predict and the Open Inference Protocol answer
// them only raw; the metadata lists the decoded output alone.
func TestDetectSegmentOutputs(t *testing.T) {
	t.Parallel()
	s := startServer(t, model("segment_yolov8.onnx"))
	sc := squareScenes[0]
	pic := encodePicture(t, canvas(sc.w, sc.h, sc.squares), "png")
	keys := func(body []byte) []string {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("%v: %.200s", err, body)
		}
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	for _, tt := range []struct {
		query string
		want  []string
	}{{"", []string{"output0"}}, {"?raw=true", []string{"output0", "output1"}}} {
		r := s.postPicture(t, "raw", "png", pic, tt.query)
		if got := keys(r.Body); r.Status != http.StatusOK || !slices.Equal(got, tt.want) {
			t.Errorf("/predict%s: %d, outputs %v, want %v", tt.query, r.Status, got, tt.want)
		}
	}
	for _, tt := range []struct {
		params string
		want   []string
	}{{"{}", []string{"output0"}}, {`{"raw": true}`, []string{"output0", "output1"}}} {
		r := s.do(http.MethodPost, "/v2/models/segment_yolov8/infer", "application/json", strings.NewReader(
			`{"parameters": `+tt.params+`, "inputs": [{"name": "images", "datatype": "BYTES", "shape": [1], "data": ["`+b64(pic)+`"]}]}`))
		var answer struct{ Outputs []struct{ Name string } }
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &answer) != nil {
			t.Fatalf("v2 %s: %d %.300s", tt.params, r.Status, r.Body)
		}
		var got []string
		for _, o := range answer.Outputs {
			got = append(got, o.Name)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("v2 %s: outputs %v, want %v", tt.params, got, tt.want)
		}
	}
}

// TestDrawAcceptElsewhere: a model that cannot draw (no image input, no
// decoded output) answers JSON to a client whose Accept prefers pictures,
// and draw=true gets a 400 saying why.
func TestDrawAcceptElsewhere(t *testing.T) {
	t.Parallel()
	s := startServer(t, model("classifier.onnx"))
	body := `{"input": [[6.7, 3.0, 5.2, 2.3]]}`
	r := s.do(http.MethodPost, "/predict", "application/json", strings.NewReader(body), "Accept", "image/png, */*;q=0.5")
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || !strings.Contains(string(r.Body), `"label":[2]`) {
		t.Errorf("Accept image/png: %d %s %s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	r = s.do(http.MethodPost, "/predict?draw=true", "application/json", strings.NewReader(body))
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Detail(t), "no single image input") {
		t.Errorf("draw=true: %d %s", r.Status, r.Body)
	}
}
