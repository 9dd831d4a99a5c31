package main_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/grpcapi"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
)

// cacheConfig writes svc.yml serving the classifier as "iris" with the
// given cache section (YAML flow mapping; "" : none).
func cacheConfig(t *testing.T, section string) string {
	t.Helper()
	yml := fmt.Sprintf("models:\n  iris:\n    path: %s\n", model("classifier.onnx"))
	if section != "" {
		yml += "    cache: " + section + "\n"
	}
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// cacheStats reads /v2/models/iris/stats: the rows the model ran and the
// cache's figures.
func cacheStats(t *testing.T, s *server) (rows uint64, c map[string]float64) {
	t.Helper()
	return modelCacheStats(t, s, "iris")
}

// modelCacheStats is cacheStats for the model served as name.
func modelCacheStats(t *testing.T, s *server, name string) (rows uint64, c map[string]float64) {
	t.Helper()
	r := s.get("/v2/models/" + name + "/stats")
	var st struct {
		ModelStats []struct {
			InferenceCount uint64             `json:"inference_count"`
			Cache          map[string]float64 `json:"cache_stats"`
		} `json:"model_stats"`
	}
	if err := json.Unmarshal(r.Body, &st); err != nil || len(st.ModelStats) != 1 {
		t.Fatalf("stats: %v %s", err, r.Body)
	}
	return st.ModelStats[0].InferenceCount, st.ModelStats[0].Cache
}

// irisAsked is one flower, as each protocol sends it.
var irisAsked = []float32{5.9, 3.0, 4.2, 1.5}

// cacheAsk sends the flower through one protocol and returns what the
// answer says of the cache, failing unless the answer is right.
type cacheAsk struct {
	name string
	ask  func(t *testing.T, s *server, gc *grpcapi.Client, headers ...string) string
}

func v2Body(params string) string {
	return `{"inputs":[{"name":"input","datatype":"FP32","shape":[1,4],"data":[5.9,3.0,4.2,1.5]}]` + params + `}`
}

var cacheAsks = []cacheAsk{
	{"v1 JSON", func(t *testing.T, s *server, _ *grpcapi.Client, h ...string) string {
		r := s.do(http.MethodPost, "/predict", "application/json", strings.NewReader(`{"input": [[5.9, 3.0, 4.2, 1.5]]}`), h...)
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"label":[1]`) {
			t.Errorf("v1: %d %s", r.Status, r.Body)
		}
		return r.Header.Get("X-Cache")
	}},
	{"v2 JSON", func(t *testing.T, s *server, _ *grpcapi.Client, h ...string) string {
		r := s.do(http.MethodPost, "/v2/models/iris/infer", "application/json", strings.NewReader(v2Body("")), h...)
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"data":[1]`) {
			t.Errorf("v2 JSON: %d %s", r.Status, r.Body)
		}
		return r.Header.Get("X-Cache")
	}},
	{"v2 binary", func(t *testing.T, s *server, _ *grpcapi.Client, h ...string) string {
		header := `{"inputs":[{"name":"input","datatype":"FP32","shape":[1,4],"parameters":{"binary_data_size":16}}]}`
		body := []byte(header)
		for _, v := range irisAsked {
			body = binary.LittleEndian.AppendUint32(body, math.Float32bits(v))
		}
		h = append(h, "Inference-Header-Content-Length", fmt.Sprint(len(header)))
		r := s.do(http.MethodPost, "/v2/models/iris/infer", "application/octet-stream", bytes.NewReader(body), h...)
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"data":[1]`) {
			t.Errorf("v2 binary: %d %s", r.Status, r.Body)
		}
		return r.Header.Get("X-Cache")
	}},
	{"gRPC", func(t *testing.T, _ *server, gc *grpcapi.Client, h ...string) string {
		x := &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, 4}, Data: irisAsked}
		ctx := context.Background()
		if len(h) > 0 {
			ctx = metadata.AppendToOutgoingContext(ctx, h...)
		}
		var md metadata.MD
		resp, err := gc.Service().ModelInfer(ctx, grpcapi.RawRequest("iris", grpcapi.Input{Name: "input", Tensor: x}), grpc.Header(&md))
		if err != nil {
			t.Errorf("gRPC: %v", err)
			return ""
		}
		outs, err := grpcapi.Outputs(resp)
		if err != nil || len(outs) != 2 || outs[1].Data.([]int64)[0] != 1 {
			t.Errorf("gRPC: %v %v", outs, err)
		}
		if v := md.Get("x-cache"); len(v) == 1 {
			return v[0]
		}
		return ""
	}},
}

// TestResponseCache: with models.NAME.cache, identical requests, sent
// together through every protocol and wire form, make one run of the
// model, and each answer says whether it was a hit; a bypass runs the
// model; a reload empties the cache; the figures are in /metrics and the
// statistics. Runs are counted by the model's own statistics.
func TestResponseCache(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	s := startServer(t, "iris", "--config", cacheConfig(t, "{size: 1MiB}"), "--grpc-port", port)
	gc := grpcClient(t, "127.0.0.1:"+port)
	rows0, _ := cacheStats(t, s)
	const each = 4
	got := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, a := range cacheAsks {
		for range each {
			wg.Go(func() {
				x := a.ask(t, s, gc)
				mu.Lock()
				got[x]++
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	n := each * len(cacheAsks)
	if got["miss"] != 1 || got["hit"] != n-1 {
		t.Errorf("X-Cache of %d identical requests: %v, want one miss", n, got)
	}
	rows, st := cacheStats(t, s)
	if rows-rows0 != 1 || st["hits"] != float64(n-1) || st["misses"] != 1 || st["entries"] != 1 || st["bytes"] <= 0 {
		t.Errorf("after %d identical requests: %d runs, cache %v; want one run", n, rows-rows0, st)
	}
	t.Run("bypass", func(t *testing.T) {
		bypasses := []struct {
			name string
			ask  func() string
		}{
			{"v1 Cache-Control", func() string { return cacheAsks[0].ask(t, s, gc, "Cache-Control", "no-cache") }},
			{"v2 Cache-Control", func() string { return cacheAsks[1].ask(t, s, gc, "Cache-Control", "no-cache") }},
			{"v2 parameter", func() string {
				r := s.do(http.MethodPost, "/v2/models/iris/infer", "application/json", strings.NewReader(v2Body(`,"parameters":{"cache":false}`)))
				if r.Status != http.StatusOK {
					t.Errorf("%d %s", r.Status, r.Body)
				}
				return r.Header.Get("X-Cache")
			}},
			{"gRPC cache-control", func() string { return cacheAsks[3].ask(t, s, gc, "cache-control", "no-cache") }},
		}
		for _, b := range bypasses {
			before, _ := cacheStats(t, s)
			if x := b.ask(); x != "miss" {
				t.Errorf("%s: X-Cache %q, want miss", b.name, x)
			}
			if after, _ := cacheStats(t, s); after != before+1 {
				t.Errorf("%s: %d runs, want 1", b.name, after-before)
			}
		}
		r := s.do(http.MethodPost, "/v2/models/iris/infer", "application/json", strings.NewReader(v2Body(`,"parameters":{"cache":"no"}`)))
		if r.Status != http.StatusBadRequest || !strings.Contains(oipError(t, r), "parameters.cache") {
			t.Errorf("parameters.cache not a boolean: %d %s", r.Status, r.Body)
		}
	})
	t.Run("reload empties", func(t *testing.T) {
		if r := s.do(http.MethodPost, "/v2/repository/models/iris/load", "", nil); r.Status != http.StatusOK {
			t.Fatalf("reload: %d %s", r.Status, r.Body)
		}
		if _, st := cacheStats(t, s); st["entries"] != 0 || st["bytes"] != 0 {
			t.Errorf("after a reload: %v", st)
		}
		before, _ := cacheStats(t, s)
		for i, want := range []string{"miss", "hit"} {
			if x := cacheAsks[2].ask(t, s, gc); x != want {
				t.Errorf("request %d after the reload: X-Cache %q, want %q", i, x, want)
			}
		}
		if after, _ := cacheStats(t, s); after != before+1 {
			t.Errorf("after a reload: %d runs for two requests, want 1", after-before)
		}
	})
	t.Run("metrics", func(t *testing.T) {
		r := s.do(http.MethodGet, "/metrics", "", nil, "Accept", "text/plain")
		for _, name := range []string{"svc_cache_hits_total ", "svc_cache_misses_total ", "svc_cache_bytes ", "svc_cache_evictions_total 0"} {
			if !strings.Contains(string(r.Body), "\n"+name) {
				t.Errorf("/metrics lacks %q", name)
			}
		}
	})
}

// TestResponseCacheOff: without models.NAME.cache, answers say nothing of
// a cache and every request runs.
func TestResponseCacheOff(t *testing.T) {
	t.Parallel()
	s := startServer(t, "iris", "--config", cacheConfig(t, ""))
	before, st := cacheStats(t, s)
	for range 2 {
		if x := cacheAsks[0].ask(t, s, nil); x != "" {
			t.Errorf("X-Cache %q without a cache", x)
		}
	}
	if after, _ := cacheStats(t, s); after != before+2 || st != nil {
		t.Errorf("without a cache: %d runs for 2 requests, stats %v", after-before, st)
	}
	if strings.Contains(string(s.do(http.MethodGet, "/metrics", "", nil, "Accept", "text/plain").Body), "svc_cache_") {
		t.Error("/metrics has the cache's series without a cache")
	}
}

// TestResponseCacheBadConfig: a cache section that cannot be one stops
// the start, naming its key.
func TestResponseCacheBadConfig(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ section, want string }{
		{"{size: 0}", "models.iris.cache.size must be positive"},
		{"{size: lots}", `models.iris.cache.size invalid size "lots"`},
		{"{size: 1MiB, ttl: soon}", `models.iris.cache.ttl invalid duration "soon"`},
		{"{ttl: 1m}", "models.iris.cache.size is required"},
	} {
		code, _, stderr := runSvc(t, nil, "serve", "iris", "--config", cacheConfig(t, tt.section), "--port", "0")
		if code == 0 || !strings.Contains(stderr, tt.want) {
			t.Errorf("cache %s: exit %d, stderr lacks %q:\n%s", tt.section, code, tt.want, stderr)
		}
	}
}

// TestResponseCachePictures: the same picture, posted as a form, as the
// whole body, as base64 in v1 JSON and in a v2 BYTES tensor, and sent over
// gRPC, is one entry of PaddleOCR cls's cache: the key is the tensor the
// picture makes, so the model runs once; ?raw=true hits it too.
func TestResponseCachePictures(t *testing.T) {
	t.Parallel()
	cls := filepath.Dir(thirdParty(t, "paddleocr-cls"))
	yml := fmt.Sprintf(`models:
  cls:
    path: %s
    inputs:
      x:
        image: {preset: paddleocr-cls}
    outputs:
      softmax_0.tmp_0:
        classify: {labels: ["0", "180"], top_k: 1}
    cache: {size: 1MiB}
`, cls)
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	s := startServer(t, "cls", "--config", cfg, "--grpc-port", port)
	gc := grpcClient(t, "127.0.0.1:"+port)
	png := filepath.Join(repoRoot, "examples", "ocr", "line.png")
	data, err := os.ReadFile(png)
	if err != nil {
		t.Fatal(err)
	}
	rows0, _ := modelCacheStats(t, s, "cls")
	want := []string{"miss", "hit", "hit", "hit", "hit", "hit"}
	var got []string
	for _, form := range []string{"multipart", "raw", "json"} {
		r := s.postImage(t, form, "x", png, "")
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"label":"0"`) {
			t.Fatalf("%s: %d %s", form, r.Status, r.Body)
		}
		got = append(got, r.Header.Get("X-Cache"))
	}
	r := s.postImage(t, "raw", "x", png, "?raw=true")
	if r.Status != http.StatusOK || strings.Contains(string(r.Body), "label") {
		t.Fatalf("raw: %d %s", r.Status, r.Body)
	}
	got = append(got, r.Header.Get("X-Cache"))
	v2, _ := json.Marshal(map[string]any{"inputs": []map[string]any{{"name": "x", "datatype": "BYTES", "shape": []int{1}, "data": []string{base64.StdEncoding.EncodeToString(data)}}}})
	r = s.do(http.MethodPost, "/v2/models/cls/infer", "application/json", bytes.NewReader(v2))
	if r.Status != http.StatusOK {
		t.Fatalf("v2: %d %s", r.Status, r.Body)
	}
	got = append(got, r.Header.Get("X-Cache"))
	req := &inference.ModelInferRequest{ModelName: "cls", Inputs: []*inference.ModelInferRequest_InferInputTensor{{
		Name: "x", Datatype: "BYTES", Shape: []int64{1}, Contents: &inference.InferTensorContents{BytesContents: [][]byte{data}}}}}
	var md metadata.MD
	if _, err := gc.Service().ModelInfer(context.Background(), req, grpc.Header(&md)); err != nil {
		t.Fatalf("gRPC: %v", err)
	}
	got = append(got, strings.Join(md.Get("x-cache"), ","))
	if !slices.Equal(got, want) {
		t.Errorf("X-Cache of the same picture in every form: %v, want %v", got, want)
	}
	if rows, _ := modelCacheStats(t, s, "cls"); rows-rows0 != 1 {
		t.Errorf("%d runs for one picture sent %d ways, want 1", rows-rows0, len(got))
	}
}

// TestResponseCacheSkipsSequences: with a cache, the steps of a sequence
// still run the model each time (running_sum adds each step's x to the
// state svc keeps), and their answers say nothing of the cache, over v1
// headers and v2 parameters alike.
func TestResponseCacheSkipsSequences(t *testing.T) {
	t.Parallel()
	yml := fmt.Sprintf("models:\n  running_sum:\n    path: %s\n    cache: {size: 1MiB}\n", model("running_sum.onnx"))
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "running_sum", "--config", cfg)
	for i, want := range []string{"[[2]]", "[[4]]", "[[6]]"} {
		r := s.do(http.MethodPost, "/predict", "application/json", strings.NewReader(`{"x": [[2]]}`),
			"X-Sequence-Id", "v1", "X-Sequence-Start", fmt.Sprint(i == 0))
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"sum":`+want) || r.Header.Get("X-Cache") != "" {
			t.Errorf("v1 step %d: %d %s, X-Cache %q; want sum %s and no X-Cache", i, r.Status, r.Body, r.Header.Get("X-Cache"), want)
		}
		body := fmt.Sprintf(`{"parameters": {"sequence_id": 7, "sequence_start": %v}, "inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 1], "data": [2]}]}`, i == 0)
		r = s.do(http.MethodPost, "/v2/models/running_sum/infer", "application/json", strings.NewReader(body))
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"data":[`+strings.Trim(want, "[]")+`]`) || r.Header.Get("X-Cache") != "" {
			t.Errorf("v2 step %d: %d %s, X-Cache %q; want sum %s and no X-Cache", i, r.Status, r.Body, r.Header.Get("X-Cache"), want)
		}
	}
	if _, st := modelCacheStats(t, s, "running_sum"); st["hits"] != 0 || st["misses"] != 0 || st["entries"] != 0 {
		t.Errorf("the steps touched the cache: %v", st)
	}
}
