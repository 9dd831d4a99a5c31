package main_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/svc-dev/svc/transport/grpcapi/inference"
)

// TestRepositoryGRPC: Triton's model-repository RPCs over gRPC answer as
// the REST routes do: the index shows the version that serves, a load
// reloads the model from its file (the new version then serves), a load
// of a broken file leaves the old version serving with the failure in the
// index, and what svc refuses gets its code and why.
func TestRepositoryGRPC(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "reloadable.onnx")
	copyModel(t, "reload_v1.onnx", file)
	port := freePort(t)
	startServer(t, file, "--grpc-port", port)
	svc := grpcClient(t, "127.0.0.1:"+port).Service()
	ctx := context.Background()

	index := func(ready bool) string {
		t.Helper()
		resp, err := svc.RepositoryIndex(ctx, &inference.RepositoryIndexRequest{Ready: ready})
		if err != nil {
			t.Fatalf("RepositoryIndex: %v", err)
		}
		var out string
		for _, m := range resp.GetModels() {
			out += fmt.Sprintf("[%s %s %s %q]", m.GetName(), m.GetVersion(), m.GetState(), m.GetReason())
		}
		return out
	}
	version := func() string {
		t.Helper()
		md, err := svc.ModelMetadata(ctx, &inference.ModelMetadataRequest{Name: "reloadable"})
		if err != nil {
			t.Fatalf("ModelMetadata: %v", err)
		}
		return md.GetVersions()[0]
	}
	if got := index(false); got != `[reloadable 1 READY ""]` {
		t.Errorf("index: %s", got)
	}

	config := map[string]*inference.ModelRepositoryParameter{"config": {ParameterChoice: &inference.ModelRepositoryParameter_StringParam{StringParam: "{}"}}}
	for _, tt := range []struct {
		name string
		call func() error
		code codes.Code
		msg  string
	}{
		{"load another model", func() error {
			_, err := svc.RepositoryModelLoad(ctx, &inference.RepositoryModelLoadRequest{ModelName: "other"})
			return err
		}, codes.NotFound, "Unknown model 'other'; this server serves 'reloadable'"},
		{"load with parameters", func() error {
			_, err := svc.RepositoryModelLoad(ctx, &inference.RepositoryModelLoadRequest{ModelName: "reloadable", Parameters: config})
			return err
		}, codes.InvalidArgument, "svc reloads the model from its source as configured: a load takes no parameters (no config or file override)"},
		{"unload", func() error {
			_, err := svc.RepositoryModelUnload(ctx, &inference.RepositoryModelUnloadRequest{ModelName: "reloadable"})
			return err
		}, codes.InvalidArgument, "svc serves one model: unloading 'reloadable' is refused; stop the server to unload it, or load to reload it"},
		{"unload another model", func() error {
			_, err := svc.RepositoryModelUnload(ctx, &inference.RepositoryModelUnloadRequest{ModelName: "other"})
			return err
		}, codes.NotFound, "Unknown model 'other'; this server serves 'reloadable'"},
	} {
		t.Run(tt.name, func(t *testing.T) { wantGRPCCode(t, tt.call(), tt.code, tt.msg) })
	}

	// A new version swapped in and loaded serves once the load answers.
	copyModel(t, "reload_v2.onnx", file)
	if _, err := svc.RepositoryModelLoad(ctx, &inference.RepositoryModelLoadRequest{ModelName: "reloadable"}); err != nil {
		t.Fatalf("load of version 2: %v", err)
	}
	if v := version(); v != "2" {
		t.Errorf("after the load the model metadata says version %s, want 2", v)
	}

	// A broken file: the load fails, version 2 serves on, the index says
	// why below the version that serves (and ready keeps only that).
	if err := os.WriteFile(file+".tmp", []byte("not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(file+".tmp", file); err != nil {
		t.Fatal(err)
	}
	_, err := svc.RepositoryModelLoad(ctx, &inference.RepositoryModelLoadRequest{ModelName: "reloadable"})
	wantGRPCCode(t, err, codes.InvalidArgument, "reload of model 'reloadable' failed; the previous version keeps serving: load model")
	if v := version(); v != "2" {
		t.Errorf("after the failed load the model metadata says version %s, want 2", v)
	}
	all := index(false)
	if want := `[reloadable 2 READY ""][reloadable  UNAVAILABLE "reload of model 'reloadable' failed`; len(all) < len(want) || all[:len(want)] != want {
		t.Errorf("index after the failed load: %s, want it to begin %s", all, want)
	}
	if got := index(true); got != `[reloadable 2 READY ""]` {
		t.Errorf("index of the ready: %s", got)
	}
}
