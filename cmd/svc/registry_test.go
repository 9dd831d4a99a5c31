package main_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/core/onnxpb"
	"github.com/svc-dev/svc/core/registry/hubtest"
)

var hubIrisConfig = []byte(`{"architectures":["IrisClassifier"],"id2label":{"0":"setosa","1":"versicolor","2":"virginica"}}`)

// hubFixture is a fake Hugging Face Hub in the test process and a store
// for the svc processes under test.
type hubFixture struct {
	hub  *hubtest.Hub
	home string
}

func newHubFixture(t *testing.T) *hubFixture {
	t.Helper()
	hub := hubtest.New()
	t.Cleanup(hub.Close)
	return &hubFixture{hub: hub, home: filepath.Join(t.TempDir(), "svc-home")}
}

// env points svc at the fake Hub and the test store, without a token
// unless one is added.
func (f *hubFixture) env(extra ...string) []string {
	return append([]string{"HF_ENDPOINT=" + f.hub.URL, "SVC_HOME=" + f.home, "HF_TOKEN="}, extra...)
}

func readTestModel(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(model(name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// classifierWithoutVersion is the classifier with no model_version, so
// the registry revision becomes its version.
func classifierWithoutVersion(t *testing.T) []byte {
	t.Helper()
	m, err := onnxpb.Unmarshal(readTestModel(t, "classifier.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	m.ModelVersion = 0
	b, err := onnxpb.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// storeFiles lists the files under dir, relative.
func storeFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

func TestRegistryPullServeListRm(t *testing.T) {
	t.Parallel()
	sequential(t)
	f := newHubFixture(t)
	classifier := readTestModel(t, "classifier.onnx")
	iris := f.hub.AddRepo("acme/iris", map[string][]byte{
		"onnx/model.onnx":           classifier,
		"onnx/model_quantized.onnx": classifier,
		"config.json":               hubIrisConfig,
		"tokenizer.json":            []byte(`{}`),
		"README.md":                 []byte("# Iris\n"),
	})
	bare := f.hub.AddRepo("acme/bare", map[string][]byte{"model.onnx": classifierWithoutVersion(t)})
	f.hub.CutAfter("onnx/model.onnx", 200)

	// Pull, resuming after the connection is cut.
	code, stdout, stderr := runSvc(t, f.env(), "pull", "acme/iris")
	if code != 0 {
		t.Fatalf("pull: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"pulled acme/iris@main (commit " + iris[:7] + ")",
		"model   onnx/model.onnx (the default; also in the repository: onnx/model_quantized.onnx; pick one with --file)",
		"files   3, ",
		filepath.Join(f.home, "models", "acme--iris", "snapshots", iris),
		"serve it with: svc serve acme/iris",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("pull stdout lacks %q:\n%s", want, stdout)
		}
	}
	for _, want := range []string{"acme/iris@main is commit " + iris[:7], "downloading onnx/model.onnx", "resuming onnx/model.onnx at byte 200", "verified onnx/model.onnx", "verified config.json"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("pull stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.ContainsAny(stderr, "\r\033") {
		t.Errorf("progress bar drawn on a non-terminal stderr:\n%q", stderr)
	}
	dl := f.hub.Downloads("onnx/model.onnx")
	if len(dl) != 2 || dl[1].Range != "bytes=200-" {
		t.Errorf("model downloads = %+v; want a cut one, then one resumed with Range bytes=200-", dl)
	}
	if len(f.hub.Downloads("onnx/model_quantized.onnx")) != 0 || len(f.hub.Downloads("README.md")) != 0 {
		t.Error("pulled files the model does not need")
	}

	// Serve it by name.
	s := startServerEnv(t, f.env(), "acme/iris")
	if h := s.get("/health").JSON(t); h["model"] != "acme/iris" || h["status"] != "healthy" {
		t.Errorf("health = %v", h)
	}
	info := s.get("/info").JSON(t)
	if info["name"] != "acme/iris" || info["version"] != "3" {
		t.Errorf("info name %v version %v; want acme/iris and the model's own version 3", info["name"], info["version"])
	}
	if p, _ := info["path"].(string); !strings.HasPrefix(p, filepath.Join(f.home, "models", "acme--iris")) {
		t.Errorf("info path = %v", info["path"])
	}
	outs := info["outputs"].([]any)
	labels, _ := outs[0].(map[string]any)["labels"].([]any)
	if len(labels) != 3 || labels[0] != "setosa" || labels[2] != "virginica" {
		t.Errorf("probabilities labels = %v, want config.json's id2label", outs[0])
	}
	md := info["metadata"].(map[string]any)
	if md["repository"] != "acme/iris" || md["commit"] != iris || md["revision"] != "main" {
		t.Errorf("metadata = %v", md)
	}
	r := s.predict(`{"input": [[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3]]}`)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"label":[0,2]`) {
		t.Errorf("predict: %d %s", r.Status, r.Body)
	}
	s.kill()

	// A model without a version of its own is versioned by the commit.
	if code, stdout, stderr := runSvc(t, f.env(), "pull", "acme/bare"); code != 0 {
		t.Fatalf("pull acme/bare: %d\n%s\n%s", code, stdout, stderr)
	}
	s = startServerEnv(t, f.env(), "acme/bare")
	if info := s.get("/info").JSON(t); info["version"] != bare[:7] {
		t.Errorf("acme/bare version = %v, want the short commit %s", info["version"], bare[:7])
	}
	s.kill()

	// List.
	code, stdout, stderr = runSvc(t, f.env(), "list")
	if code != 0 {
		t.Fatalf("list: %d %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	row := regexp.MustCompile(`^(\S+)\s+(\S+)\s+([0-9a-f]{7})\s+([0-9.]+ (?:B|KiB|MiB))\s+(\d{4}-\d\d-\d\d \d\d:\d\d)\s+(\S+)$`)
	if len(lines) != 3 || !regexp.MustCompile(`^MODEL\s+REVISION\s+COMMIT\s+SIZE\s+PULLED\s+FILE$`).MatchString(lines[0]) {
		t.Fatalf("list output:\n%s", stdout)
	}
	want := map[string][]string{"acme/bare": {"main", bare[:7], "model.onnx"}, "acme/iris": {"main", iris[:7], "onnx/model.onnx"}}
	for _, l := range lines[1:] {
		m := row.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("list row %q does not parse", l)
			continue
		}
		w := want[m[1]]
		if w == nil || m[2] != w[0] || m[3] != w[1] || m[6] != w[2] {
			t.Errorf("list row %q, want %v", l, w)
		}
	}

	// Remove, then serving by name fails with the hint to pull.
	code, stdout, stderr = runSvc(t, f.env(), "rm", "acme/iris")
	if code != 0 || !strings.Contains(stdout, "removed acme/iris@main (commit "+iris[:7]) {
		t.Fatalf("rm: %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(f.home, "models", "acme--iris")); !os.IsNotExist(err) {
		t.Errorf("acme--iris still in the store: %v", err)
	}
	code, _, stderr = runSvc(t, f.env(), "serve", "acme/iris", "--port", "0")
	oneLineError(t, code, stderr, 1, "model not found", `"acme/iris"`, "registry "+f.home+" (not pulled)", "svc pull acme/iris")
	code, _, stderr = runSvc(t, f.env(), "rm", "acme/iris")
	oneLineError(t, code, stderr, 1, "acme/iris is not in the store", "svc list")
	if code, stdout, _ := runSvc(t, f.env(), "list"); code != 0 || strings.Contains(stdout, "acme/iris") || !strings.Contains(stdout, "acme/bare") {
		t.Errorf("list after rm: %s", stdout)
	}
}

func TestPullVariantAndRevision(t *testing.T) {
	t.Parallel()
	sequential(t)
	f := newHubFixture(t)
	classifier := readTestModel(t, "classifier.onnx")
	f.hub.AddRepo("acme/iris", map[string][]byte{"onnx/model.onnx": classifier, "onnx/model_fp16.onnx": classifierWithoutVersion(t), "config.json": hubIrisConfig})
	v1 := f.hub.Commit("acme/iris", "v1", map[string][]byte{"model.onnx": classifierWithoutVersion(t)})

	code, stdout, stderr := runSvc(t, f.env(), "pull", "acme/iris", "--file", "onnx/model_fp16.onnx")
	if code != 0 || !strings.Contains(stdout, "model   onnx/model_fp16.onnx (chosen with --file; also in the repository: onnx/model.onnx") {
		t.Fatalf("pull --file: %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runSvc(t, f.env(), "pull", "acme/iris@v1")
	if code != 0 || !strings.Contains(stdout, "pulled acme/iris@v1 (commit "+v1[:7]+")") || !strings.Contains(stdout, "svc serve acme/iris@v1") {
		t.Fatalf("pull @v1: %d\n%s\n%s", code, stdout, stderr)
	}
	// By revision, the variant pulled from main; by name, the newest pull.
	s := startServerEnv(t, f.env(), "acme/iris@main")
	info := s.get("/info").JSON(t)
	if p, _ := info["path"].(string); filepath.Base(p) != "model_fp16.onnx" || info["name"] != "acme/iris" {
		t.Errorf("acme/iris@main serves %v as %v", info["path"], info["name"])
	}
	s.kill()
	s = startServerEnv(t, f.env(), "acme/iris")
	if info := s.get("/info").JSON(t); info["version"] != v1[:7] {
		t.Errorf("acme/iris serves version %v, want the newest pull %s", info["version"], v1[:7])
	}
	s.kill()

	code, stdout, _ = runSvc(t, f.env(), "rm", "acme/iris@v1")
	if code != 0 || !strings.Contains(stdout, "removed acme/iris@v1") {
		t.Fatalf("rm @v1: %d %s", code, stdout)
	}
	if code, stdout, _ := runSvc(t, f.env(), "list"); code != 0 || strings.Contains(stdout, "v1") || !strings.Contains(stdout, "onnx/model_fp16.onnx") {
		t.Errorf("list after rm @v1:\n%s", stdout)
	}
}

func TestPullErrors(t *testing.T) {
	t.Parallel()
	f := newHubFixture(t)
	f.hub.AddRepo("acme/gated", map[string][]byte{"model.onnx": readTestModel(t, "classifier.onnx")})
	f.hub.Gate("acme/gated", "hf_secret")
	f.hub.AddRepo("acme/corrupt", map[string][]byte{"model.onnx": readTestModel(t, "classifier.onnx"), "config.json": hubIrisConfig})
	f.hub.Corrupt("acme/corrupt", "model.onnx")
	f.hub.AddRepo("acme/torch", map[string][]byte{"config.json": hubIrisConfig, "pytorch_model.bin": []byte("weights")})

	tests := []struct {
		name  string
		env   []string
		args  []string
		code  int
		wants []string
	}{
		{name: "gated without a token", args: []string{"acme/gated"}, code: 1, wants: []string{"pull acme/gated", "401", "set HF_TOKEN"}},
		{name: "gated with a wrong token", env: []string{"HF_TOKEN=hf_wrong"}, args: []string{"acme/gated"}, code: 1, wants: []string{"403", "accept its conditions"}},
		{name: "repository not found", args: []string{"acme/missing"}, code: 1, wants: []string{"repository acme/missing not found on " + f.hub.URL}},
		{name: "revision not found", args: []string{"acme/torch@v7"}, code: 1, wants: []string{`revision "v7" of acme/torch not found`}},
		{name: "checksum mismatch", args: []string{"acme/corrupt"}, code: 1, wants: []string{"model.onnx failed verification", "sha256", "discarded"}},
		{name: "no ONNX file", args: []string{"acme/torch"}, code: 1, wants: []string{"acme/torch has no ONNX file", "--convert", "pip install 'optimum[exporters]'"}},
		{name: "--convert without optimum-cli", env: []string{"PATH=" + t.TempDir()}, args: []string{"acme/torch", "--convert"}, code: 1, wants: []string{"--convert needs optimum-cli on the PATH"}},
		{name: "not ORG/NAME", args: []string{"iris"}, code: 2, wants: []string{`"iris" is not a model reference`, "ORG/NAME[@REVISION]"}},
		{name: "no argument", code: 2, wants: []string{"pull takes exactly one ORG/NAME[@REVISION]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runSvc(t, f.env(tt.env...), append([]string{"pull"}, tt.args...)...)
			last := strings.TrimRight(stderr, "\n")
			if i := strings.LastIndex(last, "\n"); i >= 0 {
				last = last[i+1:]
			}
			oneLineError(t, code, last, tt.code, tt.wants...)
			if !strings.HasPrefix(last, "svc: error: ") {
				t.Errorf("last stderr line %q is not the error", last)
			}
		})
	}
	if got := storeFiles(t, filepath.Join(f.home, "models")); len(got) != 0 {
		t.Errorf("failed pulls left files in models/: %v", got)
	}
	if got := storeFiles(t, filepath.Join(f.home, "tmp")); len(got) != 0 {
		t.Errorf("failed pulls left files in tmp/: %v", got)
	}
	code, stdout, stderr := runSvc(t, f.env("HF_TOKEN=hf_secret"), "pull", "acme/gated")
	if code != 0 || !strings.Contains(stdout, "pulled acme/gated@main") {
		t.Errorf("pull with HF_TOKEN: %d\n%s\n%s", code, stdout, stderr)
	}
}

func TestPullConvertWithOptimumCLI(t *testing.T) {
	t.Parallel()
	f := newHubFixture(t)
	f.hub.AddRepo("acme/torch", map[string][]byte{"config.json": hubIrisConfig, "pytorch_model.bin": []byte("weights")})
	bin := t.TempDir()
	script := `#!/bin/sh
# fake optimum-cli: export onnx --model REPO OUTPUT
[ "$1 $2 $3" = "export onnx --model" ] && [ $# -eq 5 ] || { echo "bad arguments: $*" >&2; exit 2; }
[ -n "$HF_ENDPOINT" ] || { echo "HF_ENDPOINT not passed on" >&2; exit 3; }
mkdir -p "$5" && cp '` + model("classifier.onnx") + `' "$5/model.onnx" && cp "$(dirname "$0")/config.json" "$5/config.json"
echo "exported $4 to $5"
`
	if err := os.WriteFile(filepath.Join(bin, "optimum-cli"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "config.json"), hubIrisConfig, 0o644); err != nil {
		t.Fatal(err)
	}
	env := f.env("PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"))
	code, stdout, stderr := runSvc(t, env, "pull", "acme/torch", "--convert")
	if code != 0 {
		t.Fatalf("pull --convert: %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "model   model.onnx (converted with optimum-cli, the default)") || !strings.Contains(stderr, "exported acme/torch to ") {
		t.Errorf("pull --convert output:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	s := startServerEnv(t, f.env(), "acme/torch")
	info := s.get("/info").JSON(t)
	labels, _ := info["outputs"].([]any)[0].(map[string]any)["labels"].([]any)
	if info["name"] != "acme/torch" || len(labels) != 3 {
		t.Errorf("converted model info = %v", info)
	}
}

// TestPullConcurrentProcesses: two processes pull the same repository at
// once; one downloads, the other waits for its lock and then finds the
// model in the store. The hub holds the first download back until the
// second pull has said that it waits.
// pullProcess is a running svc pull.
type pullProcess struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{} // closed once it has exited
	err            error
}

// startPull starts svc pull with args.
func startPull(t *testing.T, env []string, args ...string) *pullProcess {
	t.Helper()
	p := &pullProcess{cmd: svcCmd(t, env, append([]string{"pull"}, args...)...), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done })
	return p
}

// wait waits for the pull to exit and returns its exit code.
func (p *pullProcess) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(patience):
		t.Fatalf("svc %v did not exit\n%s\n%s", p.cmd.Args, p.stdout, p.stderr)
	}
	var ee *exec.ExitError
	switch {
	case p.err == nil:
		return 0
	case errors.As(p.err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("svc %v: %v", p.cmd.Args, p.err)
	return -1
}

func TestPullConcurrentProcesses(t *testing.T) {
	t.Parallel()
	f := newHubFixture(t)
	classifier := readTestModel(t, "classifier.onnx")
	commit := f.hub.AddRepo("acme/iris", map[string][]byte{"onnx/model.onnx": classifier, "config.json": hubIrisConfig})
	release := f.hub.Hold("onnx/model.onnx")
	t.Cleanup(release) // before the hub closes: cleanups run last first

	first := startPull(t, f.env(), "acme/iris")
	waitUntil(t, first.done, "the first pull's download begun", func() error {
		if len(f.hub.Downloads("onnx/model.onnx")) == 0 {
			return fmt.Errorf("no download yet; the pull's log:\n%s", first.stderr)
		}
		return nil
	})
	second := startPull(t, f.env(), "acme/iris")
	const waitMsg = "waiting for another pull of acme/iris"
	second.stderr.waitFor(t, second.done, "the second pull waiting", func(s string) bool { return strings.Contains(s, waitMsg) })
	release()
	waited := 0
	for _, p := range []*pullProcess{first, second} {
		if code := p.wait(t); code != 0 {
			t.Fatalf("a concurrent pull failed: %d\n%s\n%s", code, p.stdout, p.stderr)
		}
		if strings.Contains(p.stderr.String(), waitMsg) {
			waited++
		}
	}
	if waited != 1 {
		t.Errorf("%d pulls waited for the other, want 1", waited)
	}
	if dl := f.hub.Downloads("onnx/model.onnx"); len(dl) != 1 {
		t.Errorf("model downloaded %d times by two processes, want once", len(dl))
	}
	snap := filepath.Join(f.home, "models", "acme--iris", "snapshots", commit)
	got, err := os.ReadFile(filepath.Join(snap, "onnx", "model.onnx"))
	if err != nil || !bytes.Equal(got, classifier) {
		t.Errorf("model in the store differs after concurrent pulls (err %v)", err)
	}
	if tmp := storeFiles(t, filepath.Join(f.home, "tmp")); len(tmp) != 0 {
		t.Errorf("tmp/ after concurrent pulls: %v", tmp)
	}
	s := startServerEnv(t, f.env(), "acme/iris")
	if r := s.predict(`{"input": [5.9, 3.0, 4.2, 1.5]}`); r.Status != 200 || !strings.Contains(string(r.Body), `"label":[1]`) {
		t.Errorf("predict: %d %s", r.Status, r.Body)
	}
}
