package rest

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
)

// pictureRunner describes a model with a picture input x [N, 3, 48, 192]
// as paddleocr-cls takes it; it never runs.
type pictureRunner struct{}

func (pictureRunner) Info() core.ModelInfo {
	return core.ModelInfo{Name: "cls", Version: "1", Format: "onnx",
		Inputs:  []core.InputSpec{{Name: "x", Type: "float32", Shape: []int64{-1, 3, 48, 192}, Required: true, Kind: core.KindTensor}},
		Outputs: []core.OutputSpec{{Name: "p", Type: "float32", Shape: []int64{-1, 2}, Kind: core.KindTensor}}}
}

func (pictureRunner) Specs() []tensor.Spec {
	return []tensor.Spec{{Name: "x", DType: tensor.Float32, Shape: []int64{-1, 3, 48, 192}, Required: true}}
}

func (pictureRunner) Predict(context.Context, []*tensor.Tensor) (core.Result, error) {
	return nil, errors.New("not run")
}

// TestMultipartBoundary: a form whose Content-Type gives no boundary (none,
// an empty one, an empty quoted one, a parameter without a value) is a
// 400 saying so, not a 415: the model takes forms; a type it does not
// take is still a 415.
func TestMultipartBoundary(t *testing.T) {
	decl := config.Model{Inputs: map[string]config.ModelInput{"x": {Image: &config.ImageInput{Preset: "paddleocr-cls"}}}}
	h, _ := newTestHandler(t, pictureRunner{}, Options{Codec: codec.New(decl, config.Default().Limits)})
	const noBoundary = "multipart/form-data body without a boundary in its Content-Type: send one, as in multipart/form-data; boundary=x (an empty or malformed boundary= is none)"
	tests := []struct {
		contentType string
		status      int
		want        string
	}{
		{"multipart/form-data", http.StatusBadRequest, noBoundary},
		{"multipart/form-data; boundary=", http.StatusBadRequest, noBoundary},
		{`multipart/form-data; boundary=""`, http.StatusBadRequest, noBoundary},
		{"multipart/form-data; boundary", http.StatusBadRequest, noBoundary},
		{"multipart/form-data; boundary=zz", http.StatusBadRequest, "Missing required input: 'x'"},
		{"text/plain; charset=", http.StatusUnsupportedMediaType, "Unsupported Content-Type 'text/plain; charset=': send the body as application/json, multipart/form-data, or an image"},
	}
	for _, tt := range tests {
		t.Run(tt.contentType, func(t *testing.T) {
			rec := call(h, http.MethodPost, PathPredict, tt.contentType, "--zz--\r\n")
			if rec.Code != tt.status || !strings.HasPrefix(detail(t, rec), tt.want) {
				t.Fatalf("%d %s, want %d %q", rec.Code, rec.Body, tt.status, tt.want)
			}
		})
	}
}
