package codec

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
)

// fakeRunner describes a model with a picture input x [N, 3, 48, 192]
// (float32), a class output p [N, 2] (float32), a step output s [N, T, 5]
// (float32) and an id output [N] (int64).
type fakeRunner struct{}

func (fakeRunner) Info() core.ModelInfo {
	return core.ModelInfo{
		Name: "m",
		Inputs: []core.InputSpec{
			{Name: "x", Type: "float32", Shape: []int64{-1, 3, 48, 192}, Required: true, Kind: core.KindTensor},
		},
		Outputs: []core.OutputSpec{
			{Name: "p", Type: "float32", Shape: []int64{-1, 2}, Kind: core.KindTensor},
			{Name: "s", Type: "float32", Shape: []int64{-1, -1, 5}, Kind: core.KindTensor},
			{Name: "id", Type: "int64", Shape: []int64{-1}, Kind: core.KindTensor},
		},
		Metadata: map[string]string{"labels": `["up", "down"]`},
	}
}

func (fakeRunner) Specs() []tensor.Spec {
	return []tensor.Spec{{Name: "x", DType: tensor.Float32, Shape: []int64{-1, 3, 48, 192}, Required: true}}
}

func (fakeRunner) Predict(context.Context, []*tensor.Tensor) (core.Result, error) {
	return nil, errors.New("not run")
}

func ptr[T any](v T) *T { return &v }

func TestPicture(t *testing.T) {
	data := []byte("\x89PNG\r\n\x1a\n\xff\xfe\xfd binary ~~~ ???")
	std := base64.StdEncoding.EncodeToString(data)
	tests := []struct {
		name, in string
		want     []byte
		err      string
	}{
		{"standard, padded", std, data, ""},
		{"standard, unpadded", strings.TrimRight(std, "="), data, ""},
		{"URL-safe", base64.RawURLEncoding.EncodeToString(data), data, ""},
		{"with line breaks", std[:8] + "\r\n" + std[8:16] + "\n " + std[16:], data, ""},
		{"data: URL", "data:image/png;base64," + std, data, ""},
		{"data: URL without base64", "data:image/png," + std, nil, "must carry base64"},
		{"data: URL without comma", "data:image/png;base64", nil, "must carry base64"},
		{"not base64", "not base64!", nil, "not an image"},
		{"empty", "", nil, "not an image"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Picture(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, tt.want) {
				t.Fatalf("Picture = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestPictureBytes(t *testing.T) {
	pic := tinyPNG(t, 2, 2)
	tests := []struct {
		name string
		in   []byte
		want []byte
	}{
		{"the file itself", pic, pic},
		{"its base64", []byte(base64.StdEncoding.EncodeToString(pic)), pic},
		{"a data: URL", []byte("data:image/png;base64," + base64.StdEncoding.EncodeToString(pic)), pic},
		{"neither, as it is", []byte("hello"), []byte("hello")},
	}
	for _, tt := range tests {
		if got := PictureBytes(tt.in); !bytes.Equal(got, tt.want) {
			t.Errorf("%s: PictureBytes = %q", tt.name, got)
		}
	}
}

func tinyPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 37)
	}
	img.Set(0, 0, color.NRGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestBuild(t *testing.T) {
	labels := filepath.Join(t.TempDir(), "chars.txt")
	if err := os.WriteFile(labels, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	image := map[string]config.ModelInput{"x": {Image: &config.ImageInput{Preset: "paddleocr-cls"}}}
	tests := []struct {
		name string
		decl config.Model
		err  string
	}{
		{"nothing declared", config.Model{}, ""},
		{"image and both meanings", config.Model{Inputs: image, Outputs: map[string]config.ModelOutput{
			"p": {Classify: &config.Classify{TopK: 5}},
			"s": {CTC: &config.CTC{Labels: config.Labels{File: labels}}},
		}}, ""},
		{"no such input", config.Model{Inputs: map[string]config.ModelInput{"y": image["x"]}}, "inputs.y.image: the model has no input 'y'; its inputs are 'x'"},
		{"a preset the shape contradicts", config.Model{Inputs: map[string]config.ModelInput{"x": {Image: &config.ImageInput{Preset: "imagenet"}}}}, "inputs.x.image:"},
		{"no such output", config.Model{Outputs: map[string]config.ModelOutput{"q": {Classify: &config.Classify{}}}}, "outputs.q: the model has no output 'q'; its outputs are 'p', 's', 'id'"},
		{"not scores", config.Model{Outputs: map[string]config.ModelOutput{"id": {Classify: &config.Classify{}}}}, "outputs.id: output 'id' holds int64, not scores"},
		{"more labels than classes", config.Model{Outputs: map[string]config.ModelOutput{"p": {Classify: &config.Classify{Labels: config.Labels{List: []string{"a", "b", "c"}}}}}}, "3 labels (from svc.yml) for 2 classes"},
		{"ctc on [N, classes]", config.Model{Outputs: map[string]config.ModelOutput{"p": {CTC: &config.CTC{Labels: config.Labels{List: []string{"a"}}}}}}, "ctc takes [N, steps, classes]"},
		{"ctc labels that do not fit", config.Model{Outputs: map[string]config.ModelOutput{"s": {CTC: &config.CTC{Labels: config.Labels{List: []string{"a"}}}}}}, "1 labels (from svc.yml) do not fit 5 classes"},
		{"ctc space forced off", config.Model{Outputs: map[string]config.ModelOutput{"s": {CTC: &config.CTC{Labels: config.Labels{File: labels}, Space: ptr(false)}}}}, "do not fit 5 classes"},
		{"ctc blank past the classes", config.Model{Outputs: map[string]config.ModelOutput{"s": {CTC: &config.CTC{Labels: config.Labels{File: labels}, Blank: 5}}}}, "blank: 5 is past the 5 classes"},
		{"missing label file", config.Model{Outputs: map[string]config.ModelOutput{"s": {CTC: &config.CTC{Labels: config.Labels{File: "/nowhere/chars.txt"}}}}}, "/nowhere/chars.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := New(tt.decl, config.Limits{MaxImagePixels: 1 << 20}).For(fakeRunner{})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(tt.decl.Inputs) == 0 && len(tt.decl.Outputs) == 0 {
				if !set.Empty() || set.Image("x") != nil || set.OutputAt(0) != nil {
					t.Fatalf("nothing declared, got %+v", set)
				}
				return
			}
			if im := set.Image("x"); im == nil || im.Index != 0 || set.ImageAt(0) != im || set.ImageAt(1) != nil {
				t.Fatalf("image input x: %+v", im)
			}
			p, s := set.Output("p"), set.OutputAt(1)
			if p == nil || p.Kind != KindClassify || p.TopK() != 2 || s == nil || s.Name != "s" || s.Kind != KindCTC {
				t.Fatalf("outputs: %+v %+v", p, s)
			}
			if !strings.Contains(p.Describe(), "labels from the model's metadata (labels): up, down") {
				t.Errorf("classify describes itself as %q", p.Describe())
			}
		})
	}
}

// TestOutputs decodes the outputs for the v1 API and the Open Inference
// Protocol.
func TestOutputs(t *testing.T) {
	set, err := New(config.Model{Outputs: map[string]config.ModelOutput{
		"p": {Classify: &config.Classify{Labels: config.Labels{List: []string{"up", "down"}}}},
		"s": {CTC: &config.CTC{Labels: config.Labels{List: []string{"a", "b", "c"}}}},
	}}, config.Limits{}).For(fakeRunner{})
	if err != nil {
		t.Fatal(err)
	}
	scores := &tensor.Tensor{DType: tensor.Float32, Shape: []int64{2, 2}, Data: []float32{0.25, 0.75, 0.5, 0.25}}
	js, err := set.Output("p").AppendJSON(nil, scores)
	if want := `[[{"label":"down","index":1,"score":0.75}],[{"label":"up","index":0,"score":0.5}]]`; err != nil || string(js) != want {
		t.Errorf("classify JSON = %s, %v; want %s", js, err, want)
	}
	strs, shape, err := set.Output("p").Strings(scores)
	if err != nil || strings.Join(strs, "|") != "0.750000:1:down|0.500000:0:up" || len(shape) != 2 || shape[0] != 2 || shape[1] != 1 {
		t.Errorf("classify strings = %q %v, %v", strs, shape, err)
	}
	// Steps space, a, a, blank, b, space: the repeated a collapses, the
	// blank goes, " ab " is read and its end spaces dropped.
	onehot := func(classes ...int) []float32 {
		out := make([]float32, 0, len(classes)*5)
		for _, c := range classes {
			row := make([]float32, 5)
			row[c] = 1
			out = append(out, row...)
		}
		return out
	}
	steps := &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, 6, 5}, Data: onehot(4, 1, 1, 0, 2, 4)}
	js, err = set.Output("s").AppendJSON(nil, steps)
	if want := `[{"text":"ab","score":1}]`; err != nil || string(js) != want {
		t.Errorf("ctc JSON = %s, %v; want %s", js, err, want)
	}
	strs, shape, err = set.Output("s").Strings(steps)
	if err != nil || len(strs) != 1 || strs[0] != "ab" || len(shape) != 1 || shape[0] != 1 {
		t.Errorf("ctc strings = %q %v, %v", strs, shape, err)
	}
	if _, err := set.Output("p").AppendJSON(nil, steps); err == nil || !strings.Contains(err.Error(), "decode output 'p' (classify)") {
		t.Errorf("classify of a [1, 6, 5] tensor: %v", err)
	}
}

// TestImageTensor: pictures become the input's tensor; a bad one is an
// InputError naming the input, and the item when the client sent a list.
func TestImageTensor(t *testing.T) {
	set, err := New(config.Model{Inputs: map[string]config.ModelInput{"x": {Image: &config.ImageInput{Preset: "paddleocr-cls"}}}}, config.Limits{MaxImagePixels: 1000}).For(fakeRunner{})
	if err != nil {
		t.Fatal(err)
	}
	im := set.Image("x")
	pic := tinyPNG(t, 20, 10)
	got, err := set.Tensor(context.Background(), im, [][]byte{pic, pic}, false)
	if err != nil || len(got.Shape) != 4 || got.Shape[0] != 2 || got.Shape[2] != 48 || got.Shape[3] != 192 {
		t.Fatalf("tensor %v, %v", got, err)
	}
	tests := []struct {
		name     string
		pictures [][]byte
		single   bool
		want     string
	}{
		{"none", nil, false, "Input 'x' is an image input: send at least one image"},
		{"one bad", [][]byte{[]byte("nope")}, true, "Input 'x': not an image"},
		{"second of a list bad", [][]byte{pic, []byte("nope")}, false, "Input 'x', item 1: not an image"},
		{"over the pixel cap", [][]byte{tinyPNG(t, 100, 20)}, true, "Input 'x': "},
	}
	for _, tt := range tests {
		_, err := set.Tensor(context.Background(), im, tt.pictures, tt.single)
		var ie *core.InputError
		if !errors.As(err, &ie) || ie.Input != "x" || !strings.HasPrefix(ie.Message, tt.want) {
			t.Errorf("%s: %v, want an InputError starting %q", tt.name, err, tt.want)
		}
	}
}

// TestFor builds the set once per runner, and a nil Codec declares
// nothing.
func TestFor(t *testing.T) {
	c := New(config.Model{Outputs: map[string]config.ModelOutput{"p": {Classify: &config.Classify{}}}}, config.Limits{})
	a, err := c.For(fakeRunner{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := c.For(fakeRunner{}); a != b {
		t.Error("the same runner built a second set")
	}
	var none *Codec
	if s, err := none.For(fakeRunner{}); s != nil || err != nil || !s.Empty() || s.Images() != nil || s.Outputs() != nil || s.MaxPixels() != 0 {
		t.Errorf("nil codec: %v %v", s, err)
	}
}
