package session_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/session"
)

func newPredictor(t *testing.T, file string, rt config.Runtime) *session.Predictor {
	t.Helper()
	p, err := session.New(session.Options{Name: "m", File: file, Runtime: rt}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// predictJSON decodes body, runs it and returns the response JSON.
func predictJSON(t *testing.T, p *session.Predictor, body string) string {
	t.Helper()
	in, err := decodeRequest([]byte(body), p.Specs())
	if err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	res, err := p.Predict(context.Background(), in)
	if err != nil {
		t.Fatalf("predict %s: %v", body, err)
	}
	defer res.Close()
	out, err := resultJSON(p, res)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestPredictOutputs(t *testing.T) {
	tests := []struct {
		model string
		body  string
		want  string
	}{
		{"multi_input.onnx",
			`{"features": [[1, 2.5, -3]], "ids": [[4, 5]], "mask": [[true, false]], "text": ["héllo \"w\""]}`,
			`{"weighted":[[2,5,-6]],"id_sum":[9],"mask_not":[[false,true]],"text_upper":["HÉLLO \"W\""]}`},
		{"fixed_shape.onnx",
			`{"image": [[` + strings.TrimSuffix(strings.Repeat(`[[1,1,1,1],[1,1,1,1],[3,3,3,3],[3,3,3,3]],`, 3), ",") + `]]}`,
			""},
		{"float16.onnx", `{"x": [[1, 0.5, -2, 65504]]}`, `{"y":[[2,1,-4,null]],"y32":[[2,1,-4,null]]}`},
		{"float16.onnx", `{"x": [[1, 2, 3, 4], [0.25, 0.125, 0, -0]]}`, `{"y":[[2,4,6,8],[0.5,0.25,0,-0]],"y32":[[2,4,6,8],[0.5,0.25,0,-0]]}`},
		{"alltypes.onnx",
			`{"f64":[0,-1,1e300],"i8":[-128,127,0],"i16":[-32768,32767,1],"i32":[-2147483648,2147483647,2],"u8":[0,255,3],"u16":[0,65535,4],"u32":[0,4294967295,5],"u64":[0,18446744073709551615,9007199254740993]}`,
			`{"f64_out":[0,-1,1e+300],"i8_out":[-128,127,0],"i16_out":[-32768,32767,1],"i32_out":[-2147483648,2147483647,2],"u8_out":[0,255,3],"u16_out":[0,65535,4],"u32_out":[0,4294967295,5],"u64_out":[0,18446744073709551615,9007199254740993],"f64_log":[null,null,690.7755278982137]}`},
		{"zipmap.onnx", `{"input": [[0, 0, 0]]}`,
			`{"label":[0],"probabilities":[{"bird":0.33333334,"cat":0.33333334,"dog":0.33333334}],"scores_by_id":[{"10":0.33333334,"20":0.33333334,"30":0.33333334}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			got := predictJSON(t, newPredictor(t, model(tt.model), config.Runtime{}), tt.body)
			if tt.want == "" {
				tt.want = `{"mean":[[2,2,2]]}`
			}
			if got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestPredictConcurrent(t *testing.T) {
	p := newPredictor(t, model("classifier.onnx"), config.Runtime{})
	want := map[int]string{}
	for i := 0; i < 8; i++ {
		want[i] = predictJSON(t, p, fmt.Sprintf(`{"input": [[%d, 3.0, %d.5, 1.0]]}`, i, i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 25; n++ {
				i := (g + n) % 8
				body := fmt.Sprintf(`{"input": [[%d, 3.0, %d.5, 1.0]]}`, i, i)
				in, err := decodeRequest([]byte(body), p.Specs())
				if err != nil {
					errs <- err
					return
				}
				res, err := p.Predict(context.Background(), in)
				if err != nil {
					errs <- err
					return
				}
				out, err := resultJSON(p, res)
				res.Close()
				if err != nil {
					errs <- err
					return
				}
				if string(out) != want[i] {
					errs <- fmt.Errorf("input %d: got %s want %s", i, out, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestPredictTimeout(t *testing.T) {
	p := newPredictor(t, model("slow.onnx"), config.Runtime{Timeout: config.Duration(100 * time.Millisecond)})
	row := "[" + strings.TrimSuffix(strings.Repeat("0.5,", 256), ",") + "]"
	body := `{"x": [` + strings.TrimSuffix(strings.Repeat(row+",", 512), ",") + `]}`
	in, err := decodeRequest([]byte(body), p.Specs())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = p.Predict(context.Background(), in)
	var te *core.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if te.Error() != "Inference timed out after 100ms" {
		t.Fatalf("message %q", te.Error())
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("timeout took %v to stop the run", elapsed)
	}
	// The next small run is not refused: the run options were reset.
	// Options left terminated make ONNX Runtime refuse a run at once, an
	// InferenceError. On a loaded machine the small run may itself take
	// over 100ms, and time out: it is then tried again.
	for attempt := 1; ; attempt++ {
		small, err := decodeRequest([]byte(`{"x": [`+row+`]}`), p.Specs())
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Predict(context.Background(), small)
		if err == nil {
			out, err := resultJSON(p, res)
			res.Close()
			if err != nil || !strings.HasPrefix(string(out), `{"y":[[`) {
				t.Fatalf("after timeout: %s, %v", out, err)
			}
			return
		}
		if !errors.As(err, &te) || attempt == 50 {
			t.Fatalf("after timeout, run %d: %v", attempt, err)
		}
	}
}

func TestPredictCanceled(t *testing.T) {
	p := newPredictor(t, model("slow.onnx"), config.Runtime{})
	row := "[" + strings.TrimSuffix(strings.Repeat("0.5,", 256), ",") + "]"
	body := `{"x": [` + strings.TrimSuffix(strings.Repeat(row+",", 512), ",") + `]}`
	in, err := decodeRequest([]byte(body), p.Specs())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = p.Predict(ctx, in)
	if !errors.Is(err, core.ErrCanceled) {
		t.Fatalf("err = %v, want ErrCanceled", err)
	}
}

func TestPredictInferenceError(t *testing.T) {
	p := newPredictor(t, model("failing.onnx"), config.Runtime{})
	in, err := decodeRequest([]byte(`{"x": [1, 2, 3, 4]}`), p.Specs())
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Predict(context.Background(), in)
	var ie *core.InferenceError
	if !errors.As(err, &ie) || !strings.HasPrefix(ie.Error(), "Inference failed: ") {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(ie.Error(), "Error running network") {
		t.Fatalf("wrapper text leaked: %q", ie.Error())
	}
}

func TestNewPredictorInfo(t *testing.T) {
	p := newPredictor(t, model("classifier.onnx"), config.Runtime{GraphOptimization: "basic", IntraOpThreads: 1, InterOpThreads: 1})
	info := p.Info()
	if info.Version != "3" || info.Format != "onnx" || info.Metadata["author"] != "svc tests" {
		t.Fatalf("info = %+v", info)
	}
	if !reflect.DeepEqual(info.Inputs[0].Shape, []int64{-1, 4}) {
		t.Fatalf("shape = %v", info.Inputs[0].Shape)
	}
	if math.IsNaN(info.SizeMB) || info.SizeMB <= 0 {
		t.Fatalf("size = %v", info.SizeMB)
	}
}

func TestOptionalInputDefault(t *testing.T) {
	p := newPredictor(t, model("scalar.onnx"), config.Runtime{})
	info := p.Info()
	if len(info.Inputs) != 3 || info.Inputs[2].Name != "bias" || info.Inputs[2].Required || !info.Inputs[0].Required {
		t.Fatalf("inputs = %+v", info.Inputs)
	}
	if info.Inputs[0].Shape == nil || len(info.Inputs[0].Shape) != 0 {
		t.Fatalf("x shape = %#v, want rank 0", info.Inputs[0].Shape)
	}
	if got := predictJSON(t, p, `{"x": 3, "scale": 2}`); got != `{"y":[6.5]}` {
		t.Fatalf("without bias: %s", got)
	}
	if got := predictJSON(t, p, `{"x": 3, "scale": [2], "bias": [-1]}`); got != `{"y":[5]}` {
		t.Fatalf("with bias: %s", got)
	}
}
