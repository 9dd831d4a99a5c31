package grpcapi

import (
	"context"
	"reflect"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc/codes"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
)

// panicRunner panics in Predict.
type panicRunner struct{ echoRunner }

func (*panicRunner) Predict(context.Context, []*tensor.Tensor) (core.Result, error) {
	panic("bug in a runner")
}

func TestCallLog(t *testing.T) {
	okReq := &inference.ModelInferRequest{ModelName: "echo", Inputs: []*inference.ModelInferRequest_InferInputTensor{fp32Input()}}
	badReq := &inference.ModelInferRequest{ModelName: "other"}
	tests := []struct {
		policy string
		want   []string // codes of the logged calls, in order
	}{
		{"all", []string{"OK", "NotFound"}},
		{"errors", []string{"NotFound"}},
		{"sampled:1e-9", []string{"NotFound"}},
		{"off", nil},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			obs, logs := observer.New(zapcore.InfoLevel)
			policy, err := config.ParseAccessLog(tt.policy)
			if err != nil {
				t.Fatal(err)
			}
			f := start(t, &echoRunner{}, Options{}, ServerOptions{AccessLog: policy, Logger: zap.New(obs)})
			if _, err := f.client.Infer(context.Background(), okReq); err != nil {
				t.Fatal(err)
			}
			_, _ = f.client.Infer(context.Background(), badReq)
			var got []string
			for _, e := range logs.FilterMessage("rpc").All() {
				m := e.ContextMap()
				if m["grpc_method"] != "/inference.GRPCInferenceService/ModelInfer" || m["remote"] == "" {
					t.Errorf("line %v", m)
				}
				got = append(got, m["code"].(string))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("logged codes %v, want %v", got, tt.want)
			}
		})
	}
}

// TestHandlerPanic: a panic fails the call with Internal, is logged, and
// the server goes on serving.
func TestHandlerPanic(t *testing.T) {
	obs, logs := observer.New(zapcore.InfoLevel)
	f := start(t, &panicRunner{}, Options{}, ServerOptions{Logger: zap.New(obs)})
	req := &inference.ModelInferRequest{ModelName: "echo", Inputs: []*inference.ModelInferRequest_InferInputTensor{fp32Input()}}
	_, err := f.client.Infer(context.Background(), req)
	wantCode(t, err, codes.Internal, "Internal server error")
	if n := logs.FilterMessage("handler panic").Len(); n != 1 {
		t.Fatalf("%d panic lines", n)
	}
	if live, err := f.client.ServerLive(context.Background()); err != nil || !live {
		t.Fatalf("after the panic: %v, %v", live, err)
	}
	if f.model.InFlight() != 0 {
		t.Fatalf("the panicked call is still in flight")
	}
}
