package main_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/svc-dev/svc/core/tensor"
	grpcapi "github.com/svc-dev/svc/transport/grpcapi"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
)

// v2Slow is a v2 request of slow.onnx with batch rows and the given
// request parameters (JSON members, "" for none).
func v2Slow(batch int, params string) string {
	row := strings.TrimSuffix(strings.Repeat("0.01,", 256), ",")
	data := strings.TrimSuffix(strings.Repeat(row+",", batch), ",")
	p := ""
	if params != "" {
		p = `"parameters":{` + params + `},`
	}
	return `{` + p + `"inputs":[{"name":"x","shape":[` + strconv.Itoa(batch) + `,256],"datatype":"FP32","data":[` + data + `]}]}`
}

// slowGRPC is a gRPC request of slow.onnx with batch rows and params.
func slowGRPC(batch int, params map[string]*inference.InferParameter) *inference.ModelInferRequest {
	rows := make([]float32, batch*256)
	for i := range rows {
		rows[i] = 0.01
	}
	req := grpcapi.RawRequest("slow", grpcapi.Input{Name: "x", Tensor: &tensor.Tensor{DType: tensor.Float32, Shape: []int64{int64(batch), 256}, Data: rows}})
	req.Parameters = params
	return req
}

func int64Param(n int64) *inference.InferParameter {
	return &inference.InferParameter{ParameterChoice: &inference.InferParameter_Int64Param{Int64Param: n}}
}

func stringParam(s string) *inference.InferParameter {
	return &inference.InferParameter{ParameterChoice: &inference.InferParameter_StringParam{StringParam: s}}
}

// TestRequestDeadlinesAndPriority: a request's own timeout (v2
// parameters.timeout in microseconds, gRPC the same parameter, /predict's
// X-Request-Timeout header) ends a run that outlasts it with 504 /
// DEADLINE_EXCEEDED and the request's message, capped at runtime.timeout;
// priority is taken by each protocol; bad values are refused with 400 /
// INVALID_ARGUMENT. (That a request expired in the queue never runs, and
// that priority reorders the queue, is shown by core/sched's tests, which
// hold the run slot by an event.)
func TestRequestDeadlinesAndPriority(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte("runtime:\n  timeout: 30s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	s := startServer(t, model("slow.onnx"), "-c", cfg, "--grpc-port", port)
	c := grpcClient(t, "127.0.0.1:"+port)

	// A batch of 512 runs for half a second or more: timeouts of 20 ms end
	// it, a timeout past runtime.timeout is capped at it.
	calls := []struct {
		name, path, body string
		headers          []string
		status           int
		detail           string
	}{
		{"v2 timeout", "/v2/models/slow/infer", v2Slow(512, `"timeout":20000`), nil, 504, "Request timed out: its timeout of 20ms passed before inference finished"},
		{"v2 timeout capped", "/v2/models/slow/infer", v2Slow(512, `"timeout":3600000000,"priority":1`), nil, 200, ""},
		{"v2 bad timeout", "/v2/models/slow/infer", v2Slow(1, `"timeout":-5`), nil, 400, "Invalid parameters.timeout: expected a non-negative integer"},
		{"v2 bad priority", "/v2/models/slow/infer", v2Slow(1, `"priority":"high"`), nil, 400, "Invalid parameters.priority: expected a non-negative integer"},
		{"v2 priority", "/v2/models/slow/infer", v2Slow(1, `"priority":2,"timeout":0`), nil, 200, ""},
		{"predict timeout", "/predict", slowBody(512), []string{"X-Request-Timeout", "20ms"}, 504, "Request timed out: its timeout of 20ms passed before inference finished"},
		{"predict bad timeout", "/predict", slowBody(1), []string{"X-Request-Timeout", "20"}, 400, "Invalid X-Request-Timeout header '20': expected a positive duration with its unit"},
		{"predict bad priority", "/predict", slowBody(1), []string{"X-Request-Priority", "urgent"}, 400, "Invalid X-Request-Priority header 'urgent'"},
		{"predict priority", "/predict", slowBody(1), []string{"X-Request-Priority", "1", "X-Request-Timeout", "1m"}, 200, ""},
	}
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do("POST", tc.path, "application/json", strings.NewReader(tc.body), tc.headers...)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
			}
			if tc.detail == "" {
				return
			}
			var got string
			if strings.HasPrefix(tc.path, "/v2") {
				got, _ = r.JSON(t)["error"].(string)
			} else {
				got = r.Detail(t)
			}
			if !strings.HasPrefix(got, tc.detail) {
				t.Fatalf("message %q, want %q", got, tc.detail)
			}
		})
	}

	grpcCases := []struct {
		name   string
		req    *inference.ModelInferRequest
		code   codes.Code
		detail string
	}{
		{"timeout", slowGRPC(512, map[string]*inference.InferParameter{"timeout": int64Param(20000)}), codes.DeadlineExceeded, "Request timed out: its timeout of 20ms"},
		{"bad timeout", slowGRPC(1, map[string]*inference.InferParameter{"timeout": stringParam("1s")}), codes.InvalidArgument, "Invalid parameters.timeout"},
		{"bad priority", slowGRPC(1, map[string]*inference.InferParameter{"priority": int64Param(-1)}), codes.InvalidArgument, "Invalid parameters.priority"},
		{"priority", slowGRPC(1, map[string]*inference.InferParameter{"priority": int64Param(1), "timeout": int64Param(60_000_000)}), codes.OK, ""},
	}
	for _, tc := range grpcCases {
		t.Run("grpc "+tc.name, func(t *testing.T) {
			_, err := c.Infer(context.Background(), tc.req)
			if tc.code == codes.OK {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantGRPCCode(t, err, tc.code, tc.detail)
		})
	}
	if r := s.get("/health"); r.Status != http.StatusOK {
		t.Fatalf("health after the timeouts: %d", r.Status)
	}
}
