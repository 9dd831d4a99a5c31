package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// The two versions of testdata/models/reload_v*.onnx: the answer y of
// each to an input x, element by element.
var reloadAnswers = map[string]func(float64) float64{
	"1": func(x float64) float64 { return x + 100 },
	"2": func(x float64) float64 { return x * -3 },
}

// copyModel writes the bytes of the test model name to dst by a rename
// over it: the swap is atomic.
func copyModel(t *testing.T, name, dst string) {
	t.Helper()
	b, err := os.ReadFile(model(name))
	if err != nil {
		t.Fatal(err)
	}
	renameIn(t, b, dst)
}

// renameIn writes b beside dst, then renames it over dst.
func renameIn(t *testing.T, b []byte, dst string) {
	t.Helper()
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
}

// reloadLoad is steady load on a reloading server: clients that each send
// /predict in a loop with inputs of their own, and check every answer
// against the versions. phase is set by the test: odd while a reload is
// under way, even once it has completed, when stable holds the version
// that every answer must then come from.
type reloadLoad struct {
	s      *server
	phase  atomic.Int64
	stable atomic.Value // string
	stop   chan struct{}
	wg     sync.WaitGroup

	mu       sync.Mutex
	failures []string
	answers  map[string]int // by version
	total    atomic.Int64
}

func startReloadLoad(s *server, clients int, version string) *reloadLoad {
	l := &reloadLoad{s: s, stop: make(chan struct{}), answers: map[string]int{}}
	l.stable.Store(version)
	for c := range clients {
		l.wg.Add(1)
		go l.client(c)
	}
	return l
}

func (l *reloadLoad) fail(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.failures) < 20 {
		l.failures = append(l.failures, fmt.Sprintf(format, args...))
	}
}

func (l *reloadLoad) client(c int) {
	defer l.wg.Done()
	hc := &http.Client{}
	for i := 0; ; i++ {
		select {
		case <-l.stop:
			return
		default:
		}
		a, b := float64(c*50000+i%50000), float64(-(c*1000 + i%1000))
		p0, want := l.phase.Load(), l.stable.Load().(string)
		resp, err := hc.Post(l.s.URL+"/predict", "application/json", strings.NewReader(fmt.Sprintf(`{"x": [[%g, %g]]}`, a, b)))
		if err != nil {
			l.fail("client %d: %v", c, err)
			return
		}
		var out struct {
			Y [][]float64 `json:"y"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		p1 := l.phase.Load()
		l.total.Add(1)
		if resp.StatusCode != http.StatusOK || err != nil || len(out.Y) != 1 || len(out.Y[0]) != 2 {
			l.fail("client %d: status %d, %v, %v", c, resp.StatusCode, err, out.Y)
			continue
		}
		got := ""
		for v, f := range reloadAnswers {
			if out.Y[0][0] == f(a) && out.Y[0][1] == f(b) {
				got = v
			}
		}
		switch {
		case got == "":
			l.fail("client %d: x [%g %g] got %v, the answer of neither version", c, a, b, out.Y)
		case p0 == p1 && p0%2 == 0 && got != want:
			l.fail("client %d: x [%g %g] got version %s's answer %v after the reload to %s had completed", c, a, b, got, out.Y, want)
		}
		l.mu.Lock()
		l.answers[got]++
		l.mu.Unlock()
	}
}

// reloaded marks the reload to version as completed.
func (l *reloadLoad) reloaded(version string) {
	l.stable.Store(version)
	l.phase.Add(1)
}

func (l *reloadLoad) finish(t *testing.T) {
	t.Helper()
	close(l.stop)
	l.wg.Wait()
	for _, f := range l.failures {
		t.Error(f)
	}
	t.Logf("%d requests under reloads, answers by version %v", l.total.Load(), l.answers)
}

// index fetches the repository index.
func reloadIndex(t *testing.T, s *server) []map[string]string {
	t.Helper()
	r := s.do(http.MethodPost, "/v2/repository/index", "application/json", strings.NewReader(`{}`))
	if r.Status != http.StatusOK {
		t.Fatalf("index: %d %s", r.Status, r.Body)
	}
	var out []map[string]string
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatalf("index %s: %v", r.Body, err)
	}
	return out
}

// reloadCounts sums svc_model_reloads_total by result over the workers.
func reloadCounts(t *testing.T, s *server) (success, failure float64) {
	t.Helper()
	sc, _ := scrapeMetrics(t, s, textAccept)
	for _, m := range sc["svc_model_reloads"].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() != "result" {
				continue
			}
			switch lp.GetValue() {
			case "success":
				success += m.GetCounter().GetValue()
			case "failure":
				failure += m.GetCounter().GetValue()
			}
		}
	}
	return success, failure
}

// TestHotReloadUnderLoad holds 16 clients of steady load while 20 reloads
// alternate between two versions of the model that answer differently,
// each swapped in by a rename and loaded by POST .../load: no request
// fails, every answer is one version's answer to its input, and once a
// load has answered 200 every answer is the new version's. Then SIGHUP
// reloads once more, and a broken model file leaves the old version
// serving with the failure in the load's answer, the index, the metric and
// the log. Alone and with --workers 2.
func TestHotReloadUnderLoad(t *testing.T) {
	t.Parallel()
	skipShort(t, "steady load through 20 reloads")
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "model.onnx")
			copyModel(t, "reload_v1.onnx", file)
			s := startServer(t, file, "--name", "model", "--workers", fmt.Sprint(workers))
			load := startReloadLoad(s, 16, "1")
			const reloads = 20
			version := "1"
			for k := 1; k <= reloads; k++ {
				version = map[string]string{"1": "2", "2": "1"}[version]
				load.phase.Add(1) // reloading
				copyModel(t, "reload_v"+version+".onnx", file)
				r := s.do(http.MethodPost, "/v2/repository/models/model/load", "", nil)
				if r.Status != http.StatusOK {
					load.finish(t)
					t.Fatalf("load %d: %d %s", k, r.Status, r.Body)
				}
				if got := r.JSON(t)["version"]; got != version {
					t.Errorf("load %d answered version %v, want %s", k, got, version)
				}
				load.reloaded(version)
			}
			if ix := reloadIndex(t, s); len(ix) != 1 || ix[0]["version"] != version || ix[0]["state"] != "READY" || ix[0]["name"] != "model" {
				t.Errorf("index after the reloads: %v", ix)
			}

			// SIGHUP (to the supervisor, under --workers) reloads too:
			// the log says when every worker has.
			version = map[string]string{"1": "2", "2": "1"}[version]
			load.phase.Add(1)
			copyModel(t, "reload_v"+version+".onnx", file)
			if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
				t.Fatal(err)
			}
			if workers == 1 {
				s.waitLog("model reloaded", reloads+1, nil)
			} else {
				s.waitLog("worker reloaded", workers*(reloads+1), nil)
			}
			load.reloaded(version)

			// A broken file: the load fails, the old version serves on.
			load.phase.Add(1)
			renameIn(t, []byte("not an ONNX model"), file)
			r := s.do(http.MethodPost, "/v2/repository/models/model/load", "", nil)
			if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "keeps serving") {
				t.Errorf("load of a broken model: %d %s", r.Status, r.Body)
			}
			load.reloaded(version)
			s.waitLog("model reload failed; the previous version keeps serving", workers, nil)
			ix := reloadIndex(t, s)
			if len(ix) != 2 || ix[0]["version"] != version || ix[0]["state"] != "READY" ||
				ix[1]["state"] != "UNAVAILABLE" || !strings.Contains(ix[1]["reason"], "keeps serving") {
				t.Errorf("index after a failed reload: %v", ix)
			}
			// Requests keep coming to the old version while the test
			// checks the metric, then load stops.
			success, failure := reloadCounts(t, s)
			// Each worker counts its own reloads.
			if success != float64(workers*(reloads+1)) || failure != float64(workers) {
				t.Errorf("svc_model_reloads_total: success %v, failure %v; want %d and %d", success, failure, workers*(reloads+1), workers)
			}
			load.finish(t)
			if r := s.predict(`{"x": [[1, 2]]}`); r.Status != http.StatusOK || !strings.Contains(string(r.Body), fmt.Sprint(reloadAnswers[version](1))) {
				t.Errorf("after the failed reload: %d %s", r.Status, r.Body)
			}
			s.stopNoPanic()
		})
	}
}

// TestRepositoryRefusals: the repository routes refuse what svc does not
// do, each with the protocol's {"error"}.
func TestRepositoryRefusals(t *testing.T) {
	t.Parallel()
	s := startServer(t, model("reload_v1.onnx"))
	tests := []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"unload", "/v2/repository/models/reload_v1/unload", "", http.StatusBadRequest, "unloading 'reload_v1' is refused"},
		{"load another model", "/v2/repository/models/other/load", "", http.StatusNotFound, "Unknown model 'other'"},
		{"unload another model", "/v2/repository/models/other/unload", "", http.StatusNotFound, "Unknown model 'other'"},
		{"load with parameters", "/v2/repository/models/reload_v1/load", `{"parameters": {"config": "{}"}}`, http.StatusBadRequest, "takes no parameters"},
		{"load, not JSON", "/v2/repository/models/reload_v1/load", `[`, http.StatusBadRequest, "not a JSON object"},
		{"index, not JSON", "/v2/repository/index", `{`, http.StatusBadRequest, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(http.MethodPost, tt.path, "application/json", strings.NewReader(tt.body))
			var body struct {
				Error string `json:"error"`
			}
			if r.Status != tt.status || json.Unmarshal(r.Body, &body) != nil || !strings.Contains(body.Error, tt.want) {
				t.Fatalf("%d %s, want %d with an error containing %q", r.Status, r.Body, tt.status, tt.want)
			}
		})
	}
	if r := s.do(http.MethodGet, "/v2/repository/index", "", nil); r.Status != http.StatusMethodNotAllowed {
		t.Errorf("GET index: %d %s", r.Status, r.Body)
	}
	if ix := reloadIndex(t, s); len(ix) != 1 || ix[0]["version"] != "1" || ix[0]["state"] != "READY" || ix[0]["reason"] != "" {
		t.Errorf("index: %v", ix)
	}
	// A load of the unchanged file reloads it: same version, a success.
	if r := s.do(http.MethodPost, "/v2/repository/models/reload_v1/load", "", nil); r.Status != http.StatusOK {
		t.Errorf("load: %d %s", r.Status, r.Body)
	}
	if success, failure := reloadCounts(t, s); success != 1 || failure != 0 {
		t.Errorf("svc_model_reloads_total: success %v, failure %v", success, failure)
	}
}

// TestHotReloadWatch: with reload.watch on, a symlink swapped by a rename
// reloads the model, and a file written in place in two halves is loaded
// only once whole (the half does not parse: it is skipped, never loaded).
func TestHotReloadWatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, v := range []string{"1", "2"} {
		copyModel(t, "reload_v"+v+".onnx", filepath.Join(dir, "v"+v+".onnx"))
	}
	link := filepath.Join(dir, "model.onnx")
	if err := os.Symlink("v1.onnx", link); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte("reload:\n  watch: true\n  settle: 50ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, link, "--config", cfg)
	s.waitLog("watching the model for changes", 1, nil)
	answer := func(version string) {
		t.Helper()
		r := s.predict(`{"x": [[1, 2]]}`)
		want := fmt.Sprintf(`{"y":[[%g,%g]]}`, reloadAnswers[version](1), reloadAnswers[version](2))
		if r.Status != http.StatusOK || string(r.Body) != want {
			t.Fatalf("predict: %d %s, want version %s's %s", r.Status, r.Body, version, want)
		}
	}
	answer("1")

	// The symlink swap.
	tmp := filepath.Join(dir, "model.tmp")
	if err := os.Symlink("v2.onnx", tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, link); err != nil {
		t.Fatal(err)
	}
	s.waitLog("model reloaded", 1, func(r map[string]any) bool { return r["version"] == "2" })
	answer("2")

	// A file written in place, half first: v2.onnx is what the link
	// points to.
	whole, err := os.ReadFile(model("reload_v1.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "v2.onnx"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(whole[:len(whole)/2]); err != nil {
		t.Fatal(err)
	}
	s.waitLog("the model file changed but is no ONNX model yet; waiting for the next change", 1, nil)
	answer("2")
	if _, err := f.Write(whole[len(whole)/2:]); err != nil {
		t.Fatal(err)
	}
	s.waitLog("model reloaded", 2, nil)
	answer("1")
	if n := len(s.logRecords("model reload failed; the previous version keeps serving")); n != 0 {
		t.Errorf("%d failed reloads: the half-written file was loaded", n)
	}
	if success, failure := reloadCounts(t, s); success != 2 || failure != 0 {
		t.Errorf("svc_model_reloads_total: success %v, failure %v", success, failure)
	}
	s.stopNoPanic()
}

// TestHotReloadFollowsHub: with reload.watch on, a model pulled from the
// Hub follows its revision: a new commit on main (the fake Hub in the test
// process, on 127.0.0.1) is pulled and served, and /info says so.
func TestHotReloadFollowsHub(t *testing.T) {
	t.Parallel()
	f := newHubFixture(t)
	f.hub.AddRepo("acme/reload", map[string][]byte{"model.onnx": readTestModel(t, "reload_v1.onnx")})
	if code, stdout, stderr := runSvc(t, f.env(), "pull", "acme/reload"); code != 0 {
		t.Fatalf("pull: exit %d\n%s\n%s", code, stdout, stderr)
	}
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte("reload:\n  watch: true\n  interval: 50ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServerEnv(t, f.env(), "acme/reload", "--config", cfg)
	s.waitLog("following the model's revision on the Hub", 1, nil)
	if r := s.predict(`{"x": [[1, 2]]}`); string(r.Body) != `{"y":[[101,102]]}` {
		t.Fatalf("version 1: %d %s", r.Status, r.Body)
	}
	commit := f.hub.Commit("acme/reload", "main", map[string][]byte{"model.onnx": readTestModel(t, "reload_v2.onnx")})
	s.waitLog("model reloaded", 1, nil)
	if r := s.predict(`{"x": [[1, 2]]}`); string(r.Body) != `{"y":[[-3,-6]]}` {
		t.Fatalf("after the new commit: %d %s", r.Status, r.Body)
	}
	info := s.get("/info").JSON(t)
	if info["version"] != "2" || !strings.Contains(fmt.Sprint(info["path"]), commit) {
		t.Errorf("/info after the new commit: version %v, path %v (commit %s)", info["version"], info["path"], commit)
	}
	if recs := s.logRecords("the followed revision has a new commit; pulled, reloading"); len(recs) != 1 || recs[0]["commit"] != commit[:7] {
		t.Errorf("pull log records: %v", recs)
	}
	s.stopNoPanic()
}

// TestHotReloadFollowsInputs: a new model with other inputs and outputs
// brings its own /info, /openapi.json, /predict validation and v2
// metadata; the old inputs are refused once it serves.
func TestHotReloadFollowsInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "m.onnx")
	copyModel(t, "reload_v1.onnx", file)
	port := freePort(t)
	s := startServer(t, file, "--grpc-port", port)
	c := grpcClient(t, "127.0.0.1:"+port)
	copyModel(t, "classifier.onnx", file)
	if r := s.do(http.MethodPost, "/v2/repository/models/m/load", "", nil); r.Status != http.StatusOK || r.JSON(t)["version"] != "3" {
		t.Fatalf("load: %d %s", r.Status, r.Body)
	}
	info := s.get("/info").JSON(t)
	if in := info["inputs"].([]any)[0].(map[string]any); in["name"] != "input" || info["version"] != "3" {
		t.Errorf("/info after the reload: %v", info)
	}
	if doc := string(s.get("/openapi.json").Body); !strings.Contains(doc, `"input"`) || strings.Contains(doc, `"x + 100 (version 1)"`) {
		t.Errorf("/openapi.json after the reload still describes the old model:\n%.600s", doc)
	}
	meta := s.get("/v2/models/m").JSON(t)
	if in := meta["inputs"].([]any)[0].(map[string]any); in["name"] != "input" || meta["versions"].([]any)[0] != "3" {
		t.Errorf("v2 metadata after the reload: %v", meta)
	}
	if r := s.predict(`{"x": [[1, 2]]}`); r.Status != http.StatusBadRequest || !strings.Contains(r.Detail(t), "input") {
		t.Errorf("the old model's body: %d %s", r.Status, r.Body)
	}
	if r := s.predict(`{"input": [[1, 2, 3, 4]]}`); r.Status != http.StatusOK || !strings.Contains(string(r.Body), "probabilities") {
		t.Errorf("the new model's body: %d %s", r.Status, r.Body)
	}
	if r := s.get("/v2/models/m/versions/1"); r.Status != http.StatusNotFound {
		t.Errorf("the old version's metadata: %d %s", r.Status, r.Body)
	}
	// gRPC's metadata follows too.
	md, err := c.ModelMetadata(context.Background(), "m", "")
	if err != nil || len(md.GetInputs()) != 1 || md.GetInputs()[0].GetName() != "input" || md.GetVersions()[0] != "3" {
		t.Errorf("gRPC metadata after the reload: %v, %v", md, err)
	}
}

// TestHotReloadConfigRejects: a new model whose outputs do not fit what
// svc.yml declares (a classify output it lacks) fails the reload, and so
// does a model file that is gone; the old one serves on.
func TestHotReloadConfigRejects(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "iris.onnx")
	copyModel(t, "classifier.onnx", file)
	cfg := filepath.Join(dir, "svc.yml")
	yml := "models:\n  iris:\n    path: iris.onnx\n    labels: {probabilities: [a, b, c]}\n    outputs:\n      probabilities:\n        classify: {top_k: 1}\n"
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "iris", "--config", cfg)
	before := s.predict(`{"input": [[1, 2, 3, 4]]}`)
	if before.Status != http.StatusOK {
		t.Fatalf("predict: %d %s", before.Status, before.Body)
	}
	copyModel(t, "reload_v2.onnx", file)
	r := s.do(http.MethodPost, "/v2/repository/models/iris/load", "", nil)
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "probabilities") {
		t.Fatalf("load of a model without the declared output: %d %s", r.Status, r.Body)
	}
	if after := s.predict(`{"input": [[1, 2, 3, 4]]}`); after.Status != http.StatusOK || string(after.Body) != string(before.Body) {
		t.Errorf("after the failed reload: %d %s, want %s", after.Status, after.Body, before.Body)
	}
	if ix := reloadIndex(t, s); len(ix) != 2 || ix[1]["state"] != "UNAVAILABLE" || !strings.Contains(ix[1]["reason"], "probabilities") {
		t.Errorf("index: %v", ix)
	}

	// The model file gone: the reload fails finding it, the old one
	// serves on.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	r = s.do(http.MethodPost, "/v2/repository/models/iris/load", "", nil)
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "keeps serving") || !strings.Contains(string(r.Body), "iris.onnx") {
		t.Errorf("load of a missing model file: %d %s", r.Status, r.Body)
	}
	if after := s.predict(`{"input": [[1, 2, 3, 4]]}`); after.Status != http.StatusOK || string(after.Body) != string(before.Body) {
		t.Errorf("after the reload of a missing file: %d %s, want %s", after.Status, after.Body, before.Body)
	}
}
