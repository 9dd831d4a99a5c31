package rest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport"
)

// fakeRunner doubles its float32 input "x" [-1, 2] into output "y", or
// fails with err.
type fakeRunner struct {
	err   error
	calls int
}

func (f *fakeRunner) Info() core.ModelInfo {
	return core.ModelInfo{Name: "double", Version: "1", Format: "onnx",
		Inputs:  []core.InputSpec{{Name: "x", Type: "float32", Shape: []int64{-1, 2}, Required: true, Kind: core.KindTensor}},
		Outputs: []core.OutputSpec{{Name: "y", Type: "float32", Shape: []int64{-1, 2}, Kind: core.KindTensor}}}
}

func (f *fakeRunner) Specs() []tensor.Spec {
	return []tensor.Spec{{Name: "x", DType: tensor.Float32, Shape: []int64{-1, 2}, Required: true}}
}

func (f *fakeRunner) Predict(_ context.Context, in []*tensor.Tensor) (core.Result, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	x := in[0].Data.([]float32)
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = 2 * v
	}
	return core.NewResult([]*tensor.Tensor{{DType: tensor.Float32, Shape: in[0].Shape, Data: y}}), nil
}

// newTestHandler returns a handler over a model that loads r (or stays
// loading when r is nil).
func newTestHandler(t *testing.T, r core.Runner, o Options) (*Handler, *core.Model) {
	t.Helper()
	m := core.NewModel("double")
	o.Model = m
	h, err := NewHandler(o)
	if err != nil {
		t.Fatal(err)
	}
	if r != nil {
		m.Start(func() (core.Loaded, error) { return core.Loaded{Runner: r}, nil }, []core.Preparer{h.Prepare}, nil, nil)
		select {
		case <-m.Done():
		case <-time.After(time.Minute):
			t.Fatal("model did not load")
		}
		if err := m.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return h, m
}

func call(h http.Handler, method, path, contentType, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func detail(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || len(m) != 1 {
		t.Fatalf("body is not {\"detail\"}: %s", rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	return m["detail"]
}

func TestHandlerWhileLoading(t *testing.T) {
	h, _ := newTestHandler(t, nil, Options{})
	if rec := call(h, "GET", "/health", "", ""); rec.Code != 200 || rec.Body.String() != `{"status":"healthy","model":"double"}` {
		t.Errorf("health while loading: %d %s", rec.Code, rec.Body)
	}
	for _, tt := range []struct{ method, path, ct, body string }{
		{"POST", "/predict", "application/json", `{"x": [1, 2]}`},
		{"GET", "/info", "", ""},
		{"GET", "/metrics", "", ""},
	} {
		rec := call(h, tt.method, tt.path, tt.ct, tt.body)
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("%s %s while loading: %d %s", tt.method, tt.path, rec.Code, rec.Body)
			continue
		}
		if d := detail(t, rec); d != "Model 'double' is loading; try again shortly" {
			t.Errorf("%s: detail %q", tt.path, d)
		}
	}
}

func TestHandlerServes(t *testing.T) {
	r := &fakeRunner{}
	h, m := newTestHandler(t, r, Options{Platform: core.Platform{Available: []string{"CPUExecutionProvider"}, Runtime: []string{"CUDAExecutionProvider", "CPUExecutionProvider"}}, Limits: transport.Limits{MaxBodyBytes: 64}})
	tests := []struct {
		name, method, path, ct, body string
		status                       int
		want                         string // body, or detail for errors
	}{
		{"predict", "POST", "/predict", "application/json", `{"x": [[1, 2], [3, 4.5]]}`, 200, `{"y":[[2,4],[6,9]]}`},
		{"single item", "POST", "/predict", "application/json; charset=utf-8", `{"x": [1, 2]}`, 200, `{"y":[[2,4]]}`},
		{"missing input", "POST", "/predict", "application/json", `{}`, 400, "Missing required input: 'x'"},
		{"wrong type", "POST", "/predict", "application/json", `{"x": "a"}`, 400, "Invalid input type for 'x': expected array"},
		{"unknown input", "POST", "/predict", "application/json", `{"z": 1}`, 400, "Unknown input 'z'; the model's inputs are: 'x'"},
		{"malformed", "POST", "/predict", "application/json", `{"x": [1,`, 400, "Invalid JSON body: unexpected end of input at offset 9"},
		{"no content type", "POST", "/predict", "", `{}`, 415, "Missing Content-Type: send the body as application/json"},
		{"text", "POST", "/predict", "text/plain", `{}`, 415, "Unsupported Content-Type 'text/plain': send the body as application/json"},
		{"too large", "POST", "/predict", "application/json", `{"x": [` + strings.Repeat("1, ", 40) + `1]}`, 413, "Request body too large: the limit is 64 bytes"},
		{"info", "GET", "/info", "", "", 200, `{"name":"double","version":"1","format":"onnx","size_mb":0,"inputs":[{"name":"x","type":"float32","required":true,"shape":[-1,2]}],"outputs":[{"name":"y","type":"float32","shape":[-1,2]}],"metadata":{}}`},
		{"metrics", "GET", "/metrics", "", "", 200, `{"provider":{"name":"","available":true,"platform":""},"available_providers":["CPUExecutionProvider"],"compiled_providers":[],"runtime_providers":["CUDAExecutionProvider","CPUExecutionProvider"]}`},
		{"unknown path", "GET", "/nope", "", "", 404, "Not Found"},
		{"wrong method", "GET", "/predict", "", "", 405, "Method Not Allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := call(h, tt.method, tt.path, tt.ct, tt.body)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.status == 200 {
				if rec.Body.String() != tt.want {
					t.Errorf("body %s\nwant %s", rec.Body, tt.want)
				}
				return
			}
			if d := detail(t, rec); d != tt.want {
				t.Errorf("detail %q, want %q", d, tt.want)
			}
		})
	}
	if allow := call(h, "GET", "/predict", "", "").Header().Get("Allow"); allow != "POST" {
		t.Errorf("Allow %q", allow)
	}
	// A draining model still serves what arrives.
	m.Drain()
	if rec := call(h, "POST", "/predict", "application/json", `{"x": [1, 2]}`); rec.Code != 200 {
		t.Errorf("predict while draining: %d %s", rec.Code, rec.Body)
	}
}

func TestHandlerErrorKinds(t *testing.T) {
	tests := []struct {
		err    error
		status int
		detail string
	}{
		{&core.InferenceError{Err: errors.New("bad node")}, 500, "Inference failed: bad node"},
		{&core.TimeoutError{After: 2 * time.Second}, 504, "Inference timed out after 2s"},
		{core.ErrCanceled, 503, "Request canceled before inference finished"},
		{errors.New("surprise"), 500, "Inference failed: surprise"},
	}
	for _, tt := range tests {
		h, _ := newTestHandler(t, &fakeRunner{err: tt.err}, Options{})
		rec := call(h, "POST", "/predict", "application/json", `{"x": [1, 2]}`)
		if rec.Code != tt.status || detail(t, rec) != tt.detail {
			t.Errorf("%v: %d %s, want %d %q", tt.err, rec.Code, rec.Body, tt.status, tt.detail)
		}
	}
}

// rejectAll is a validator that refuses every body.
type rejectAll struct{}

func (rejectAll) ValidateBody(context.Context, *core.Generation, []byte) error {
	return errors.New("Invalid input type for 'x': expected array")
}

func TestHandlerValidatorRunsFirst(t *testing.T) {
	r := &fakeRunner{}
	h, _ := newTestHandler(t, r, Options{Validator: rejectAll{}})
	rec := call(h, "POST", "/predict", "application/json", `{"x": [1, 2]}`)
	if rec.Code != 400 || detail(t, rec) != "Invalid input type for 'x': expected array" || r.calls != 0 {
		t.Errorf("validator: %d %s, %d runs", rec.Code, rec.Body, r.calls)
	}
}

func TestClient(t *testing.T) {
	h, m := newTestHandler(t, nil, Options{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := NewClient(srv.URL+"/", srv.Client())
	ctx := context.Background()
	if hl, err := c.Health(ctx); err != nil || hl.Model != "double" || hl.Status != "healthy" {
		t.Fatalf("health: %+v %v", hl, err)
	}
	var se *StatusError
	if _, err := c.Info(ctx); !errors.As(err, &se) || se.Status != 503 || se.Detail != "Model 'double' is loading; try again shortly" {
		t.Fatalf("info while loading: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := c.WaitReady(short); err == nil {
		t.Fatal("WaitReady returned while loading")
	}
	r := &fakeRunner{}
	m.Start(func() (core.Loaded, error) { return core.Loaded{Runner: r}, nil }, []core.Preparer{h.Prepare}, nil, nil)
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(ctx)
	if err != nil || info.Model().Inputs[0].Name != "x" {
		t.Fatalf("info: %+v %v", info, err)
	}
	var out strings.Builder
	if status, err := c.Predict(ctx, []byte(`{"x": [1, 2]}`), &out); status != 200 || err != nil || out.String() != `{"y":[[2,4]]}` {
		t.Fatalf("predict: %d %v %s", status, err, out.String())
	}
	if status, err := c.Predict(ctx, []byte(`{}`), nil); status != 400 || !errors.As(err, &se) || se.Detail != "Missing required input: 'x'" {
		t.Fatalf("bad predict: %d %v", status, err)
	}
}
