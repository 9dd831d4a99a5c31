package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/svc-dev/svc/cmd/genmodels/slowload"
	"github.com/svc-dev/svc/core/tensor"
	grpcapi "github.com/svc-dev/svc/transport/grpcapi"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
)

// grpcurl runs the grpcurl that 'make tools' installs into build/tools.
func grpcurl(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	skipShort(t, "needs grpcurl (make tools)")
	bin := filepath.Join(repoRoot, "build", "tools", "grpcurl")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("grpcurl missing at %s: run 'make tools' (make test does it)", bin)
	}
	return runCmd(t, exec.Command(bin, args...))
}

func grpcClient(t *testing.T, addr string, opts ...grpcapi.ClientOption) *grpcapi.Client {
	t.Helper()
	c, err := grpcapi.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func wantGRPCCode(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != code || !strings.Contains(st.Message(), msg) {
		t.Fatalf("got %v %q, want %v containing %q", st.Code(), st.Message(), code, msg)
	}
}

var grpcBannerLine = regexp.MustCompile(`(?m)^\s+gRPC\s+(\S+) \(inference\.GRPCInferenceService, grpc\.health\.v1, reflection\)$`)

const classifierInfer = `{"model_name":"classifier","id":"req-1","inputs":[{"name":"input","datatype":"FP32","shape":[2,4],"contents":{"fp32_contents":[5.1,3.5,1.4,0.2,6.7,3.0,5.2,2.3]}}]}`

// TestGRPCWithGrpcurl: the banner shows the gRPC endpoint; grpcurl lists
// the services through reflection, calls ModelInfer and the health
// service; the answer matches /predict's.
func TestGRPCWithGrpcurl(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	s := startServer(t, model("classifier.onnx"), "--grpc-port", port)
	addr := "127.0.0.1:" + port
	if m := grpcBannerLine.FindStringSubmatch(s.stdout.String()); m == nil || m[1] != addr {
		t.Fatalf("banner lacks the gRPC endpoint %s:\n%s", addr, s.stdout)
	}

	code, out, errOut := grpcurl(t, "-plaintext", addr, "list")
	if code != 0 {
		t.Fatalf("grpcurl list: %d %s", code, errOut)
	}
	for _, svc := range []string{"inference.GRPCInferenceService", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"} {
		if !strings.Contains(out, svc+"\n") {
			t.Errorf("grpcurl list lacks %s:\n%s", svc, out)
		}
	}
	code, out, _ = grpcurl(t, "-plaintext", addr, "list", "inference.GRPCInferenceService")
	want := "inference.GRPCInferenceService.ModelInfer\ninference.GRPCInferenceService.ModelMetadata\ninference.GRPCInferenceService.ModelReady\n" +
		"inference.GRPCInferenceService.ModelStreamInfer\n" +
		"inference.GRPCInferenceService.RepositoryIndex\ninference.GRPCInferenceService.RepositoryModelLoad\ninference.GRPCInferenceService.RepositoryModelUnload\n" +
		"inference.GRPCInferenceService.ServerLive\ninference.GRPCInferenceService.ServerMetadata\ninference.GRPCInferenceService.ServerReady\n"
	if code != 0 || out != want {
		t.Fatalf("methods: %d\n%s", code, out)
	}

	code, out, errOut = grpcurl(t, "-plaintext", "-d", classifierInfer, addr, "inference.GRPCInferenceService/ModelInfer")
	if code != 0 {
		t.Fatalf("grpcurl ModelInfer: %d %s", code, errOut)
	}
	var resp struct {
		ModelName string `json:"modelName"`
		ID        string `json:"id"`
		Outputs   []struct {
			Name     string   `json:"name"`
			Datatype string   `json:"datatype"`
			Shape    []string `json:"shape"`
			Contents struct {
				Fp32  []float32 `json:"fp32Contents"`
				Int64 []string  `json:"int64Contents"`
			} `json:"contents"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		t.Fatalf("grpcurl output: %v\n%s", err, out)
	}
	if resp.ModelName != "classifier" || resp.ID != "req-1" || len(resp.Outputs) != 2 {
		t.Fatalf("ModelInfer answer:\n%s", out)
	}
	probs, label := resp.Outputs[0], resp.Outputs[1]
	if probs.Name != "probabilities" || probs.Datatype != "FP32" || !reflect.DeepEqual(probs.Shape, []string{"2", "3"}) || len(probs.Contents.Fp32) != 6 ||
		label.Name != "label" || label.Datatype != "INT64" || !reflect.DeepEqual(label.Shape, []string{"2"}) {
		t.Fatalf("outputs:\n%s", out)
	}
	// The same rows through /predict give the same answer.
	r := s.predict(`{"input": [[5.1,3.5,1.4,0.2],[6.7,3.0,5.2,2.3]]}`)
	var rest struct {
		Probabilities [][]float32 `json:"probabilities"`
		Label         []int64     `json:"label"`
	}
	if err := json.Unmarshal(r.Body, &rest); err != nil || r.Status != 200 {
		t.Fatalf("/predict: %d %s", r.Status, r.Body)
	}
	for i, p := range probs.Contents.Fp32 {
		if p != rest.Probabilities[i/3][i%3] {
			t.Fatalf("probabilities: gRPC %v, /predict %v", probs.Contents.Fp32, rest.Probabilities)
		}
	}
	if label.Contents.Int64[0] != strconv.FormatInt(rest.Label[0], 10) || label.Contents.Int64[1] != strconv.FormatInt(rest.Label[1], 10) {
		t.Fatalf("labels: gRPC %v, /predict %v", label.Contents.Int64, rest.Label)
	}

	for _, svc := range []string{"", "inference.GRPCInferenceService"} {
		code, out, errOut = grpcurl(t, "-plaintext", "-d", `{"service":"`+svc+`"}`, addr, "grpc.health.v1.Health/Check")
		if code != 0 || !strings.Contains(out, `"status": "SERVING"`) {
			t.Fatalf("health %q: %d %s %s", svc, code, out, errOut)
		}
	}

	// Errors: the code and the message, as grpcurl shows them.
	for _, tt := range []struct {
		body, code, msg string
	}{
		{`{"model_name":"resnet"}`, "NotFound", "Unknown model 'resnet'; this server serves 'classifier'"},
		{`{"model_name":"classifier","inputs":[{"name":"input","datatype":"FP32","shape":[1,5],"contents":{"fp32_contents":[1,2,3,4,5]}}]}`,
			"InvalidArgument", "Invalid shape for 'input': expected [-1, 4], got [1, 5]"},
		{`{"model_name":"classifier","inputs":[{"name":"input","datatype":"FP64","shape":[1,4]}]}`,
			"InvalidArgument", "Invalid datatype for input 'input': the model takes FP32, got FP64"},
	} {
		code, _, errOut = grpcurl(t, "-plaintext", "-d", tt.body, addr, "inference.GRPCInferenceService/ModelInfer")
		if code == 0 || !strings.Contains(errOut, "Code: "+tt.code) || !strings.Contains(errOut, "Message: "+tt.msg) {
			t.Errorf("%s: exit %d\n%s", tt.body, code, errOut)
		}
	}

	// The requests above count in the metrics, like HTTP ones.
	m := s.do("GET", "/metrics", "", nil, "Accept", "text/plain;version=0.0.4")
	if !regexp.MustCompile(`svc_inference_request_failures_total\{[^}]*reason="bad_request"[^}]*\} 3\n`).Match(m.Body) {
		t.Errorf("the three refused gRPC calls are not counted:\n%s", m.Body)
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit code %d\n%s", code, s.stderr)
	}
}

// TestGRPCAllTypes: every datatype of alltypes.onnx through ONNX Runtime,
// raw and typed.
func TestGRPCAllTypes(t *testing.T) {
	t.Parallel()
	sequential(t)
	port := freePort(t)
	startServer(t, model("alltypes.onnx"), "--grpc-port", port)
	c := grpcClient(t, "127.0.0.1:"+port)
	inputs := []grpcapi.Input{
		{Name: "f64", Tensor: &tensor.Tensor{DType: tensor.Float64, Shape: []int64{3}, Data: []float64{1, 2.5, 1e300}}},
		{Name: "i8", Tensor: &tensor.Tensor{DType: tensor.Int8, Shape: []int64{2}, Data: []int8{-128, 127}}},
		{Name: "i16", Tensor: &tensor.Tensor{DType: tensor.Int16, Shape: []int64{2}, Data: []int16{-32768, 32767}}},
		{Name: "i32", Tensor: &tensor.Tensor{DType: tensor.Int32, Shape: []int64{1}, Data: []int32{-2147483648}}},
		{Name: "u8", Tensor: &tensor.Tensor{DType: tensor.Uint8, Shape: []int64{2}, Data: []uint8{0, 255}}},
		{Name: "u16", Tensor: &tensor.Tensor{DType: tensor.Uint16, Shape: []int64{1}, Data: []uint16{65535}}},
		{Name: "u32", Tensor: &tensor.Tensor{DType: tensor.Uint32, Shape: []int64{1}, Data: []uint32{4294967295}}},
		{Name: "u64", Tensor: &tensor.Tensor{DType: tensor.Uint64, Shape: []int64{2}, Data: []uint64{0, 18446744073709551615}}},
	}
	check := func(t *testing.T, resp *inference.ModelInferResponse) {
		t.Helper()
		got, err := grpcapi.Outputs(resp)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(inputs)+1 {
			t.Fatalf("%d outputs", len(got))
		}
		for i, in := range inputs {
			if resp.GetOutputs()[i].GetName() != in.Name+"_out" || !reflect.DeepEqual(got[i], in.Tensor) {
				t.Errorf("%s_out = %+v, want %+v", in.Name, got[i], in.Tensor)
			}
		}
	}
	raw, err := c.Infer(context.Background(), grpcapi.RawRequest("alltypes", inputs...))
	if err != nil {
		t.Fatal(err)
	}
	if len(raw.GetRawOutputContents()) != len(inputs)+1 {
		t.Fatal("a raw request gets raw outputs")
	}
	check(t, raw)
	typed := grpcapi.RawRequest("alltypes", inputs...)
	typed.RawInputContents = nil
	contents := []*inference.InferTensorContents{
		{Fp64Contents: []float64{1, 2.5, 1e300}}, {IntContents: []int32{-128, 127}}, {IntContents: []int32{-32768, 32767}},
		{IntContents: []int32{-2147483648}}, {UintContents: []uint32{0, 255}}, {UintContents: []uint32{65535}},
		{UintContents: []uint32{4294967295}}, {Uint64Contents: []uint64{0, 18446744073709551615}},
	}
	for i := range typed.Inputs {
		typed.Inputs[i].Contents = contents[i]
	}
	resp, err := c.Infer(context.Background(), typed)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetRawOutputContents()) != 0 || resp.GetOutputs()[0].GetContents() == nil {
		t.Fatal("a typed request gets typed outputs")
	}
	check(t, resp)
}

// startLoadingGRPC runs 'svc serve' and returns once it listens (before
// the model has loaded), with the gRPC address.
func startLoadingGRPC(t *testing.T, modelPath string) (*server, string) {
	t.Helper()
	port := freePort(t)
	return startLoading(t, modelPath, "--grpc-port", port), "127.0.0.1:" + port
}

// TestGRPCHealthFollowsReadiness: NOT_SERVING and Unavailable while the
// model loads, SERVING once it is ready.
func TestGRPCHealthFollowsReadiness(t *testing.T) {
	t.Parallel()
	skipShort(t, "its model takes seconds of CPU to load")
	dir := filepath.Join(t.TempDir(), "slowload")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := slowload.Write(filepath.Join(dir, "model.onnx")); err != nil {
		t.Fatal(err)
	}
	s, addr := startLoadingGRPC(t, dir)
	c := grpcClient(t, addr)
	ctx := context.Background()
	if st, err := c.Health(ctx, ""); err != nil || st != grpc_health_v1.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health while loading = %v, %v", st, err)
	}
	if strings.Contains(s.stdout.String(), "URL") {
		t.Fatal("the model loaded before the first health check; it loaded too fast to test this")
	}
	if live, err := c.ServerLive(ctx); err != nil || !live {
		t.Fatalf("ServerLive while loading = %v, %v", live, err)
	}
	if ready, err := c.ModelReady(ctx, "slowload", ""); err != nil || ready {
		t.Fatalf("ModelReady while loading = %v, %v", ready, err)
	}
	x := &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, 4}, Data: []float32{1, 2, 3, 4}}
	_, err := c.Infer(ctx, grpcapi.RawRequest("slowload", grpcapi.Input{Name: "x", Tensor: x}))
	wantGRPCCode(t, err, codes.Unavailable, "Model 'slowload' is loading; try again shortly")

	// A watch sees the model become ready.
	watch, err := grpc_health_v1.NewHealthClient(c.Conn()).Watch(ctx, &grpc_health_v1.HealthCheckRequest{Service: "inference.GRPCInferenceService"})
	if err != nil {
		t.Fatal(err)
	}
	for {
		m, err := watch.Recv()
		if err != nil {
			t.Fatalf("watch: %v\n%s", err, s.stderr)
		}
		if m.GetStatus() == grpc_health_v1.HealthCheckResponse_SERVING {
			break
		}
	}
	resp, err := c.Infer(ctx, grpcapi.RawRequest("slowload", grpcapi.Input{Name: "x", Tensor: x}))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := grpcapi.Outputs(resp); err != nil || !reflect.DeepEqual(out[0].Data, []float32{2, 3, 4, 5}) {
		t.Fatalf("ready: %v, %v", out, err)
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit code %d\n%s", code, s.stderr)
	}
}

// TestGRPCGracefulStop: SIGTERM with a ModelInfer in flight: the call
// finishes, a health watch turns NOT_SERVING, and svc exits 0.
func TestGRPCGracefulStop(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	s := startServer(t, model("slow.onnx"), "--grpc-port", port)
	c := grpcClient(t, "127.0.0.1:"+port)
	ctx := context.Background()
	watch, err := grpc_health_v1.NewHealthClient(c.Conn()).Watch(ctx, &grpc_health_v1.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := watch.Recv(); err != nil || m.GetStatus() != grpc_health_v1.HealthCheckResponse_SERVING {
		t.Fatalf("watch = %v, %v", m, err)
	}
	rows := make([]float32, 384*256)
	for i := range rows {
		rows[i] = 0.01
	}
	req := grpcapi.RawRequest("slow", grpcapi.Input{Name: "x", Tensor: &tensor.Tensor{DType: tensor.Float32, Shape: []int64{384, 256}, Data: rows}})
	var wg sync.WaitGroup
	var callErr error
	var resp *inference.ModelInferResponse
	finished := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(finished)
		resp, callErr = c.Infer(ctx, req)
	}()
	// Signal once the call is being served (the in-flight gauge says so).
	inFlight := regexp.MustCompile(`(?m)^svc_inference_in_flight\{[^}]*\} 1$`)
	waitUntil(t, finished, "the call seen in flight (else the test does not exercise draining)", func() error {
		if !inFlight.Match(s.do("GET", "/metrics", "", nil, "Accept", "text/plain;version=0.0.4").Body) {
			return errors.New("svc_inference_in_flight is not 1")
		}
		return nil
	})
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	var statuses []grpc_health_v1.HealthCheckResponse_ServingStatus
	for {
		m, err := watch.Recv()
		if err != nil {
			break
		}
		statuses = append(statuses, m.GetStatus())
	}
	wg.Wait()
	if callErr != nil {
		t.Fatalf("in-flight call: %v\n%s", callErr, s.stderr)
	}
	if len(resp.GetRawOutputContents()) != 1 || len(resp.GetRawOutputContents()[0]) != 384*256*4 {
		t.Fatalf("in-flight call's answer: %d outputs", len(resp.GetRawOutputContents()))
	}
	if !reflect.DeepEqual(statuses, []grpc_health_v1.HealthCheckResponse_ServingStatus{grpc_health_v1.HealthCheckResponse_NOT_SERVING}) {
		t.Errorf("watch after SIGTERM saw %v, want NOT_SERVING", statuses)
	}
	// The SIGTERM above stops it: wait (signal 0 sends nothing), since a
	// second SIGTERM could land after svc has let go of its handler.
	if code := s.stop(syscall.Signal(0)); code != 0 {
		t.Fatalf("exit code %d\n%s", code, s.stderr)
	}
}

// TestGRPCWorkers: --workers 2 serves gRPC on the shared port.
func TestGRPCWorkers(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	s := startServer(t, model("classifier.onnx"), "--workers", "2", "--grpc-port", port)
	addr := "127.0.0.1:" + port
	if m := grpcBannerLine.FindStringSubmatch(s.stdout.String()); m == nil || m[1] != addr {
		t.Fatalf("banner lacks the gRPC endpoint %s:\n%s", addr, s.stdout)
	}
	// Several connections, so that both workers are likely to take some.
	for i := range 6 {
		c := grpcClient(t, addr)
		if st, err := c.Health(context.Background(), ""); err != nil || st != grpc_health_v1.HealthCheckResponse_SERVING {
			t.Fatalf("health via connection %d = %v, %v", i, st, err)
		}
		x := &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, 4}, Data: []float32{5.1, 3.5, 1.4, 0.2}}
		resp, err := c.Infer(context.Background(), grpcapi.RawRequest("classifier", grpcapi.Input{Name: "input", Tensor: x}))
		if err != nil || len(resp.GetOutputs()) != 2 {
			t.Fatalf("ModelInfer via connection %d: %v, %v", i, resp, err)
		}
	}
	code, out, errOut := grpcurl(t, "-plaintext", addr, "list")
	if code != 0 || !strings.Contains(out, "inference.GRPCInferenceService") {
		t.Fatalf("grpcurl list under workers: %d %s %s", code, out, errOut)
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit code %d\n%s", code, s.stderr)
	}
}

func TestGRPCPortFailures(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	for _, workers := range []string{"1", "2"} {
		t.Run("port in use, workers "+workers, func(t *testing.T) {
			code, stdout, stderr := runSvc(t, nil, "serve", model("classifier.onnx"), "--host", "127.0.0.1", "--port", "0", "--grpc-port", busy, "--workers", workers)
			oneLineError(t, code, stderr, 1, "port already in use", "127.0.0.1:"+busy, "--grpc-port")
			if stdout != "" {
				t.Errorf("stdout: %s", stdout)
			}
		})
	}
	t.Run("same port as HTTP", func(t *testing.T) {
		code, _, stderr := runSvc(t, nil, "serve", model("classifier.onnx"), "--port", "9000", "--grpc-port", "9000")
		oneLineError(t, code, stderr, 2, "serve.grpc_port", "9000 is also serve.port")
	})
	t.Run("out of range", func(t *testing.T) {
		code, _, stderr := runSvc(t, nil, "serve", model("classifier.onnx"), "--grpc-port", "70000")
		oneLineError(t, code, stderr, 2, "serve.grpc_port", "70000 is out of range 0-65535")
	})
}

// TestGRPCAPIKeys: with keys configured, ModelInfer needs one; health,
// reflection and metadata do not.
func TestGRPCAPIKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "svc.yml")
	port := freePort(t)
	if err := os.WriteFile(cfg, []byte("serve:\n  grpc_port: "+port+"\naccess:\n  api_keys_env: SVC_API_KEYS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	startServerEnv(t, []string{"SVC_API_KEYS=grpc-key-1"}, model("classifier.onnx"), "--config", cfg)
	addr := "127.0.0.1:" + port
	call := func(headers ...string) (int, string, string) {
		args := []string{"-plaintext"}
		for _, h := range headers {
			args = append(args, "-H", h)
		}
		return grpcurl(t, append(args, "-d", classifierInfer, addr, "inference.GRPCInferenceService/ModelInfer")...)
	}
	if code, _, errOut := call(); code == 0 || !strings.Contains(errOut, "Code: Unauthenticated") || !strings.Contains(errOut, "Message: Not authenticated") {
		t.Fatalf("no key: %d %s", code, errOut)
	}
	if code, _, errOut := call("authorization: Bearer wrong"); code == 0 || !strings.Contains(errOut, "Message: Invalid API key") {
		t.Fatalf("wrong key: %d %s", code, errOut)
	}
	if code, out, errOut := call("authorization: Bearer grpc-key-1"); code != 0 || !strings.Contains(out, `"id": "req-1"`) {
		t.Fatalf("right key: %d %s %s", code, out, errOut)
	}
	for _, args := range [][]string{
		{"-plaintext", addr, "list"},
		{"-plaintext", addr, "grpc.health.v1.Health/Check"},
		{"-plaintext", "-d", `{"name":"classifier"}`, addr, "inference.GRPCInferenceService/ModelMetadata"},
	} {
		if code, _, errOut := grpcurl(t, args...); code != 0 {
			t.Errorf("%v without a key: %d %s", args, code, errOut)
		}
	}
	c := grpcClient(t, addr, grpcapi.WithAPIKey("grpc-key-1"))
	x := &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, 4}, Data: []float32{5.1, 3.5, 1.4, 0.2}}
	if _, err := c.Infer(context.Background(), grpcapi.RawRequest("classifier", grpcapi.Input{Name: "input", Tensor: x})); err != nil {
		t.Fatalf("client with the key: %v", err)
	}
}
