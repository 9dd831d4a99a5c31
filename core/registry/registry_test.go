package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-dev/svc/core/onnxpb"
	"github.com/svc-dev/svc/core/registry"
	"github.com/svc-dev/svc/core/registry/hubtest"
)

var irisConfig = []byte(`{"architectures":["IrisClassifier"],"id2label":{"0":"setosa","1":"versicolor","2":"virginica"},"label2id":{"setosa":0,"versicolor":1,"virginica":2}}`)

var irisLabels = []string{"setosa", "versicolor", "virginica"}

// testModel reads a committed test model.
func testModel(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// unversioned is the classifier without its model_version.
func unversioned(t *testing.T) []byte {
	t.Helper()
	m, err := onnxpb.Unmarshal(testModel(t, "classifier.onnx"))
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

// externalAs is the external-data classifier with its data file renamed,
// so only reading the model tells the puller about it.
func externalAs(t *testing.T, location string) []byte {
	t.Helper()
	m, err := onnxpb.Unmarshal(testModel(t, "external_data/model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	for _, init := range m.Graph.Initializers {
		for i := range init.ExternalData {
			if init.ExternalData[i].Key == "location" {
				init.ExternalData[i].Value = location
			}
		}
	}
	b, err := onnxpb.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakeClock advances a minute at each reading.
type fakeClock struct{ n atomic.Int64 }

func (c *fakeClock) Now() time.Time {
	return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(c.n.Add(1)) * time.Minute)
}

type env struct {
	t      *testing.T
	hub    *hubtest.Hub
	store  *registry.Store
	puller *registry.Puller
	events *eventLog
}

type eventLog struct {
	mu sync.Mutex
	ev []registry.Event
}

func (l *eventLog) add(e registry.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ev = append(l.ev, e)
}

func (l *eventLog) messages() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, e := range l.ev {
		if e.Message != "" {
			b.WriteString(e.Message + "\n")
		}
	}
	return b.String()
}

func newEnv(t *testing.T) *env {
	t.Helper()
	hub := hubtest.New()
	t.Cleanup(hub.Close)
	store := registry.Open(filepath.Join(t.TempDir(), "svc-home"))
	log := &eventLog{}
	clock := &fakeClock{}
	return &env{t: t, hub: hub, store: store, events: log, puller: &registry.Puller{
		Store:   store,
		Hub:     &registry.Hub{Endpoint: hub.URL, UserAgent: "svc/test"},
		Report:  log.add,
		Now:     clock.Now,
		Backoff: func(int) time.Duration { return 0 },
	}}
}

func (e *env) pull(ref string, opts registry.PullOptions) (*registry.Pulled, error) {
	e.t.Helper()
	r, err := registry.ParseRef(ref)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.puller.Pull(context.Background(), r, opts)
}

func (e *env) mustPull(ref string, opts registry.PullOptions) *registry.Pulled {
	e.t.Helper()
	p, err := e.pull(ref, opts)
	if err != nil {
		e.t.Fatalf("pull %s: %v\nevents:\n%s", ref, err, e.events.messages())
	}
	return p
}

// files lists the files under dir (relative, '/'), sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == dir {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func TestPullChoosesFiles(t *testing.T) {
	classifier := testModel(t, "classifier.onnx")
	tests := []struct {
		name       string
		repo       map[string][]byte
		opts       registry.PullOptions
		wantModel  string
		wantChoice string
		wantFiles  []string
		wantOthers []string
	}{
		{
			name: "onnx directory with variants and config at the root",
			repo: map[string][]byte{
				"onnx/model.onnx":           classifier,
				"onnx/model_quantized.onnx": classifier,
				"onnx/model_fp16.onnx":      classifier,
				"config.json":               irisConfig,
				"tokenizer.json":            []byte(`{}`),
				"tokenizer_config.json":     []byte(`{}`),
				"special_tokens_map.json":   []byte(`{}`),
				"vocab.txt":                 []byte("a\nb\n"),
				"modules.json":              []byte(`[]`),
				"1_Pooling/config.json":     []byte(`{}`),
				"2_Dense/config.json":       []byte(`{}`),
				"README.md":                 []byte("# iris\n"),
				"pytorch_model.bin":         []byte("weights"),
				"other/config.json":         []byte(`{}`),
			},
			wantModel:  "onnx/model.onnx",
			wantChoice: "the default",
			wantFiles:  []string{"1_Pooling/config.json", "config.json", "modules.json", "onnx/model.onnx", "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt"},
			wantOthers: []string{"onnx/model_fp16.onnx", "onnx/model_quantized.onnx"},
		},
		{
			name:       "model.onnx at the root wins over onnx/",
			repo:       map[string][]byte{"model.onnx": classifier, "onnx/model.onnx": classifier, "merges.txt": []byte("m")},
			wantModel:  "model.onnx",
			wantChoice: "the default",
			wantFiles:  []string{"merges.txt", "model.onnx"},
			wantOthers: []string{"onnx/model.onnx"},
		},
		{
			name:       "variant chosen with --file",
			repo:       map[string][]byte{"onnx/model.onnx": classifier, "onnx/model_fp16.onnx": classifier, "config.json": irisConfig},
			opts:       registry.PullOptions{File: "onnx/model_fp16.onnx"},
			wantModel:  "onnx/model_fp16.onnx",
			wantChoice: "chosen with --file",
			wantFiles:  []string{"config.json", "onnx/model_fp16.onnx"},
			wantOthers: []string{"onnx/model.onnx"},
		},
		{
			name:       "the only ONNX file",
			repo:       map[string][]byte{"onnx/classifier.onnx": classifier, "onnx/preprocessor_config.json": []byte(`{}`)},
			wantModel:  "onnx/classifier.onnx",
			wantChoice: "the only ONNX file",
			wantFiles:  []string{"onnx/classifier.onnx", "onnx/preprocessor_config.json"},
		},
		{
			name: "external data named after the model",
			repo: map[string][]byte{
				"model.onnx":      testModel(t, "external_data/model.onnx"),
				"model.onnx.data": testModel(t, "external_data/model.onnx.data"),
			},
			wantModel:  "model.onnx",
			wantChoice: "the default",
			wantFiles:  []string{"model.onnx", "model.onnx.data"},
		},
		{
			name: "external data found by reading the model",
			repo: map[string][]byte{
				"onnx/model.onnx":  externalAs(t, "weights.bin"),
				"onnx/weights.bin": testModel(t, "external_data/model.onnx.data"),
				"onnx/unused.bin":  []byte("not referenced"),
			},
			wantModel:  "onnx/model.onnx",
			wantChoice: "the default",
			wantFiles:  []string{"onnx/model.onnx", "onnx/weights.bin"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			commit := e.hub.AddRepo("acme/iris", tt.repo)
			got := e.mustPull("acme/iris", tt.opts)
			if got.Commit != commit || got.Model != tt.wantModel || got.Choice != tt.wantChoice {
				t.Errorf("pulled commit %s model %s (%s), want %s %s (%s)", got.Commit, got.Model, got.Choice, commit, tt.wantModel, tt.wantChoice)
			}
			if !reflect.DeepEqual(got.Others, tt.wantOthers) {
				t.Errorf("others = %v, want %v", got.Others, tt.wantOthers)
			}
			wantOnDisk := append([]string{registry.ManifestFile}, tt.wantFiles...)
			sort.Strings(wantOnDisk)
			if on := files(t, got.Dir); !reflect.DeepEqual(on, wantOnDisk) {
				t.Errorf("snapshot holds %v, want %v", on, wantOnDisk)
			}
			var inManifest []string
			for _, f := range got.Files {
				inManifest = append(inManifest, f.Path)
				data, err := os.ReadFile(filepath.Join(got.Dir, filepath.FromSlash(f.Path)))
				if err != nil || !reflect.DeepEqual(data, tt.repo[f.Path]) || f.Size != int64(len(data)) || len(f.SHA256) != 64 {
					t.Errorf("file %s: content or manifest entry wrong (%+v, err %v)", f.Path, f, err)
				}
			}
			if !reflect.DeepEqual(inManifest, tt.wantFiles) {
				t.Errorf("manifest files = %v, want %v", inManifest, tt.wantFiles)
			}
			if want := filepath.Join(e.store.Root(), "models", "acme--iris", "snapshots", commit); got.Dir != want {
				t.Errorf("snapshot dir = %s, want %s", got.Dir, want)
			}
			if tmp := files(t, filepath.Join(e.store.Root(), "tmp")); len(tmp) != 0 {
				t.Errorf("tmp/ not empty after a pull: %v", tmp)
			}
			if got.ModelInfo == nil || got.ModelInfo.Version != "3" {
				t.Errorf("model info = %+v, want version 3", got.ModelInfo)
			}
		})
	}
}

func TestPullRefusals(t *testing.T) {
	classifier := testModel(t, "classifier.onnx")
	tests := []struct {
		name  string
		repo  map[string][]byte
		opts  registry.PullOptions
		wants []string
	}{
		{
			name:  "several ONNX files and none is the default",
			repo:  map[string][]byte{"onnx/encoder.onnx": classifier, "onnx/decoder.onnx": classifier},
			wants: []string{"2 ONNX files", "--file", "onnx/decoder.onnx, onnx/encoder.onnx"},
		},
		{
			name:  "--file not in the repository",
			repo:  map[string][]byte{"onnx/model.onnx": classifier},
			opts:  registry.PullOptions{File: "onnx/model_int8.onnx"},
			wants: []string{"--file onnx/model_int8.onnx is not in acme/iris", "onnx/model.onnx"},
		},
		{
			name:  "--file not an ONNX file",
			repo:  map[string][]byte{"onnx/model.onnx": classifier, "config.json": irisConfig},
			opts:  registry.PullOptions{File: "config.json"},
			wants: []string{"not an .onnx file"},
		},
		{
			name:  "no ONNX file and no --convert",
			repo:  map[string][]byte{"config.json": irisConfig, "pytorch_model.bin": []byte("w")},
			wants: []string{"acme/iris has no ONNX file", "--convert", "pip install 'optimum[exporters]'", "svc serve DIR"},
		},
		{
			name:  "external data missing from the repository",
			repo:  map[string][]byte{"model.onnx": externalAs(t, "weights.bin")},
			wants: []string{`references external data "weights.bin"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.hub.AddRepo("acme/iris", tt.repo)
			_, err := e.pull("acme/iris", tt.opts)
			if err == nil {
				t.Fatal("pull succeeded")
			}
			for _, w := range tt.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if snaps, _ := e.store.List(); len(snaps) != 0 {
				t.Errorf("store lists %d snapshots after a refused pull", len(snaps))
			}
			if tmp := files(t, filepath.Join(e.store.Root(), "tmp")); len(tmp) != 0 {
				t.Errorf("tmp/ after a refused pull: %v", tmp)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	e := newEnv(t)
	versioned := e.hub.AddRepo("acme/iris", map[string][]byte{"onnx/model.onnx": testModel(t, "classifier.onnx"), "config.json": irisConfig})
	bare := e.hub.AddRepo("acme/bare", map[string][]byte{"model.onnx": unversioned(t), "config.json": irisConfig})
	noLabels := e.hub.AddRepo("acme/nolabels", map[string][]byte{"model.onnx": unversioned(t), "config.json": []byte(`{"id2label":{"0":"a","1":"b"}}`)})
	e.mustPull("acme/iris", registry.PullOptions{})
	e.mustPull("acme/bare", registry.PullOptions{})
	e.mustPull("acme/nolabels", registry.PullOptions{})

	src, ok, err := e.store.Lookup("acme/iris")
	if err != nil || !ok {
		t.Fatalf("Lookup(acme/iris) = %v, %v", ok, err)
	}
	snap := filepath.Join(e.store.Root(), "models", "acme--iris", "snapshots", versioned)
	if src.Name != "acme/iris" || src.Origin != "registry" || src.File != filepath.Join(snap, "onnx", "model.onnx") {
		t.Errorf("source = %+v", src)
	}
	if src.Version != "" {
		t.Errorf("version = %q, want empty: the model's own model_version (3) comes before the revision", src.Version)
	}
	if want := map[string][]string{"probabilities": irisLabels}; !reflect.DeepEqual(src.Labels, want) {
		t.Errorf("labels = %v, want %v", src.Labels, want)
	}
	if want := map[string]string{"repository": "acme/iris", "revision": "main", "commit": versioned}; !reflect.DeepEqual(src.Metadata, want) {
		t.Errorf("metadata = %v, want %v", src.Metadata, want)
	}

	src, ok, err = e.store.Lookup("acme/bare")
	if err != nil || !ok {
		t.Fatalf("Lookup(acme/bare) = %v, %v", ok, err)
	}
	if src.Version != bare[:7] {
		t.Errorf("version = %q, want the short commit %q (the model has no version)", src.Version, bare[:7])
	}
	src, _, _ = e.store.Lookup("acme/nolabels")
	if src.Labels != nil || src.Version != noLabels[:7] {
		t.Errorf("two labels for three classes: labels = %v (want none), version %q", src.Labels, src.Version)
	}

	for _, id := range []string{"acme/iris@main", "acme/iris@" + versioned, "acme/iris@" + versioned[:7]} {
		if src, ok, err := e.store.Lookup(id); err != nil || !ok || src.Name != "acme/iris" {
			t.Errorf("Lookup(%s) = %+v, %v, %v", id, src, ok, err)
		}
	}
	for _, id := range []string{"acme/iris@v9", "acme/other", "resnet", "acme/iris@" + bare[:7], "a/b/c", "../../etc", ""} {
		if _, ok, err := e.store.Lookup(id); err != nil || ok {
			t.Errorf("Lookup(%q) = %v, %v; want not found", id, ok, err)
		}
	}
	if _, ok, err := registry.Open(filepath.Join(t.TempDir(), "missing")).Lookup("acme/iris"); ok || err != nil {
		t.Errorf("Lookup in a store that does not exist = %v, %v", ok, err)
	}
}

func TestLookupIncompleteSnapshot(t *testing.T) {
	e := newEnv(t)
	e.hub.AddRepo("acme/iris", map[string][]byte{"model.onnx": testModel(t, "classifier.onnx")})
	p := e.mustPull("acme/iris", registry.PullOptions{})
	if err := os.Remove(filepath.Join(p.Dir, "model.onnx")); err != nil {
		t.Fatal(err)
	}
	_, _, err := e.store.Lookup("acme/iris")
	if err == nil || !strings.Contains(err.Error(), "svc rm acme/iris@") {
		t.Errorf("Lookup of a damaged snapshot: %v", err)
	}
}

func TestResumeAfterCutConnection(t *testing.T) {
	e := newEnv(t)
	model := testModel(t, "classifier.onnx")
	e.hub.AddRepo("acme/iris", map[string][]byte{"onnx/model.onnx": model, "config.json": irisConfig})
	e.hub.CutAfter("onnx/model.onnx", 100)
	e.hub.CutAfter("config.json", 10)
	p := e.mustPull("acme/iris", registry.PullOptions{})

	for file, cut := range map[string]string{"onnx/model.onnx": "bytes=100-", "config.json": "bytes=10-"} {
		dl := e.hub.Downloads(file)
		if len(dl) != 2 || dl[0].Range != "" || dl[1].Range != cut || dl[1].Status != http.StatusPartialContent {
			t.Errorf("downloads of %s = %+v; want a whole request cut, then a Range %q request answered 206", file, dl, cut)
		}
	}
	data, err := os.ReadFile(filepath.Join(p.Dir, "onnx", "model.onnx"))
	if err != nil || !reflect.DeepEqual(data, model) {
		t.Errorf("resumed model differs from the original (err %v)", err)
	}
	if !strings.Contains(e.events.messages(), "resuming onnx/model.onnx at byte 100") {
		t.Errorf("no resume message:\n%s", e.events.messages())
	}
}

func TestResumeAcrossPulls(t *testing.T) {
	e := newEnv(t)
	model := testModel(t, "classifier.onnx")
	commit := e.hub.AddRepo("acme/iris", map[string][]byte{"onnx/model.onnx": model})
	e.hub.CutAfter("onnx/model.onnx", 120)
	e.puller.Retries = -1
	if _, err := e.pull("acme/iris", registry.PullOptions{}); err == nil || !strings.Contains(err.Error(), "connection broken at byte 120") {
		t.Fatalf("first pull: %v, want a broken connection", err)
	}
	part := filepath.Join(e.store.Root(), "tmp", "acme--iris", commit, "onnx", "model.onnx.part")
	if st, err := os.Stat(part); err != nil || st.Size() != 120 {
		t.Fatalf("partial download: %v (want 120 bytes kept in %s)", err, part)
	}
	if snaps, _ := e.store.List(); len(snaps) != 0 {
		t.Fatal("an interrupted pull is visible in the store")
	}
	if _, ok, _ := e.store.Lookup("acme/iris"); ok {
		t.Fatal("an interrupted pull is found by Lookup")
	}

	p := e.mustPull("acme/iris", registry.PullOptions{})
	dl := e.hub.Downloads("onnx/model.onnx")
	if len(dl) != 2 || dl[1].Range != "bytes=120-" {
		t.Errorf("downloads = %+v; want the second to resume with Range bytes=120-", dl)
	}
	if data, _ := os.ReadFile(filepath.Join(p.Dir, "onnx", "model.onnx")); !reflect.DeepEqual(data, model) {
		t.Error("resumed model differs from the original")
	}
	if tmp := files(t, filepath.Join(e.store.Root(), "tmp")); len(tmp) != 0 {
		t.Errorf("tmp/ not empty: %v", tmp)
	}
}

func TestChecksumMismatchLeavesStoreClean(t *testing.T) {
	for _, file := range []string{"onnx/model.onnx", "config.json"} {
		t.Run(file, func(t *testing.T) {
			e := newEnv(t)
			e.hub.AddRepo("acme/iris", map[string][]byte{"onnx/model.onnx": testModel(t, "classifier.onnx"), "config.json": irisConfig, "tokenizer.json": []byte(`{"x":1}`)})
			e.hub.Corrupt("acme/iris", file)
			_, err := e.pull("acme/iris", registry.PullOptions{})
			var ce *registry.ChecksumError
			if !errors.As(err, &ce) || ce.File != file {
				t.Fatalf("pull: %v, want a checksum error for %s", err, file)
			}
			want := "sha256"
			if file == "config.json" {
				want = "git blob sha1"
			}
			if ce.Algorithm != want || !strings.Contains(err.Error(), "discarded") {
				t.Errorf("error %q: want a %s mismatch", err, want)
			}
			root := e.store.Root()
			if got := files(t, filepath.Join(root, "models")); len(got) != 0 {
				t.Errorf("models/ after a failed verification: %v", got)
			}
			if got := files(t, filepath.Join(root, "tmp")); len(got) != 0 {
				t.Errorf("tmp/ after a failed verification: %v", got)
			}
			if _, ok, _ := e.store.Lookup("acme/iris"); ok {
				t.Error("Lookup finds a model that failed verification")
			}
		})
	}
}

func TestHubErrors(t *testing.T) {
	tests := []struct {
		name    string
		ref     string
		token   string
		wantErr any
		wants   []string
	}{
		{name: "gated without a token", ref: "acme/gated", wantErr: new(*registry.AuthError), wants: []string{"401", "acme/gated", "gated or private", "set HF_TOKEN"}},
		{name: "gated with a wrong token", ref: "acme/gated", token: "hf_wrong", wantErr: new(*registry.AuthError), wants: []string{"403", "no access", "accept its conditions"}},
		{name: "gated with the token", ref: "acme/gated", token: "hf_right"},
		{name: "repository not found", ref: "acme/nothing", wantErr: new(*registry.NotFoundError), wants: []string{"repository acme/nothing not found"}},
		{name: "revision not found", ref: "acme/gated@v9", token: "hf_right", wantErr: new(*registry.NotFoundError), wants: []string{`revision "v9" of acme/gated not found`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.hub.AddRepo("acme/gated", map[string][]byte{"model.onnx": testModel(t, "classifier.onnx")})
			e.hub.Gate("acme/gated", "hf_right")
			e.puller.Hub.Token = tt.token
			_, err := e.pull(tt.ref, registry.PullOptions{})
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("pull: %v", err)
				}
				for _, r := range e.hub.Requests() {
					if !strings.HasPrefix(r.Path, "/cdn/") && r.Authorization != "Bearer hf_right" {
						t.Errorf("request %s without the token (%q)", r.Path, r.Authorization)
					}
				}
				return
			}
			if err == nil {
				t.Fatal("pull succeeded")
			}
			switch want := tt.wantErr.(type) {
			case **registry.AuthError:
				if !errors.As(err, want) {
					t.Errorf("error %T %v, want an AuthError", err, err)
				}
			case **registry.NotFoundError:
				if !errors.As(err, want) {
					t.Errorf("error %T %v, want a NotFoundError", err, err)
				}
			}
			for _, w := range tt.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if n := len(e.hub.Requests()); n != 1 {
				t.Errorf("%d requests for a permanent failure, want 1 (no retries)", n)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name     string
		failures []int
		retries  int
		wantErr  string
	}{
		{name: "server errors then success", failures: []int{503, 502}, retries: 2},
		{name: "rate limited then success", failures: []int{429}, retries: 1},
		{name: "server errors until out of retries", failures: []int{503, 503, 500}, retries: 2, wantErr: "500 Internal Server Error"},
		{name: "no retries", failures: []int{503}, retries: -1, wantErr: "503 Service Unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.hub.AddRepo("acme/iris", map[string][]byte{"model.onnx": testModel(t, "classifier.onnx")})
			e.hub.FailNext(tt.failures...)
			e.puller.Retries = tt.retries
			_, err := e.pull("acme/iris", registry.PullOptions{})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("pull: %v", err)
				}
				if !strings.Contains(e.events.messages(), "retrying (1 of") {
					t.Errorf("no retry message:\n%s", e.events.messages())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("pull: %v, want %q", err, tt.wantErr)
			}
			if n, want := len(e.hub.Requests()), max(tt.retries, 0)+1; n != want {
				t.Errorf("%d requests, want %d", n, want)
			}
		})
	}
}

// TestStalledDownload: a download whose body does not come (the hub holds
// it back) fails once StallTimeout has passed without data.
func TestStalledDownload(t *testing.T) {
	e := newEnv(t)
	e.hub.AddRepo("acme/iris", map[string][]byte{"model.onnx": testModel(t, "classifier.onnx")})
	t.Cleanup(e.hub.Hold("model.onnx")) // released before the hub closes
	e.puller.Hub.StallTimeout = 50 * time.Millisecond
	e.puller.Retries = -1
	_, err := e.pull("acme/iris", registry.PullOptions{})
	if err == nil || !strings.Contains(err.Error(), "no data for 50ms") {
		t.Fatalf("pull: %v, want a stall", err)
	}
}

// TestConcurrentPulls: pulls of one repository at once take turns; the
// first downloads, the others find the files in the store. The hub holds
// the model's download back until another pull says it waits.
func TestConcurrentPulls(t *testing.T) {
	e := newEnv(t)
	model := testModel(t, "classifier.onnx")
	e.hub.AddRepo("acme/iris", map[string][]byte{"onnx/model.onnx": model, "config.json": irisConfig})
	release := e.hub.Hold("onnx/model.onnx")
	t.Cleanup(release) // before the hub closes
	const n = 6
	var wg sync.WaitGroup
	results := make([]*registry.Pulled, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			ref, _ := registry.ParseRef("acme/iris")
			results[i], errs[i] = e.puller.Pull(context.Background(), ref, registry.PullOptions{})
		})
	}
	for deadline := time.Now().Add(time.Minute); !strings.Contains(e.events.messages(), "waiting for another pull of acme/iris"); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			release()
			wg.Wait()
			t.Fatalf("no pull waited for another within a minute:\n%s", e.events.messages())
		}
	}
	release()
	wg.Wait()
	fetched := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("pull %d: %v", i, errs[i])
		}
		fetched += results[i].Downloaded
		if results[i].Dir != results[0].Dir {
			t.Errorf("pull %d installed %s, pull 0 %s", i, results[i].Dir, results[0].Dir)
		}
	}
	if fetched != 2 {
		t.Errorf("%d files downloaded in all, want 2 (the other pulls find them in the store)", fetched)
	}
	if dl := e.hub.Downloads("onnx/model.onnx"); len(dl) != 1 {
		t.Errorf("model downloaded %d times, want once", len(dl))
	}
	if !strings.Contains(e.events.messages(), "waiting for another pull of acme/iris") {
		t.Errorf("no waiting message:\n%s", e.events.messages())
	}
	data, err := os.ReadFile(filepath.Join(results[0].Dir, "onnx", "model.onnx"))
	if err != nil || !reflect.DeepEqual(data, model) {
		t.Errorf("model after concurrent pulls differs (err %v)", err)
	}
	if tmp := files(t, filepath.Join(e.store.Root(), "tmp")); len(tmp) != 0 {
		t.Errorf("tmp/ not empty: %v", tmp)
	}
}

func TestPullAgainAndAddVariant(t *testing.T) {
	e := newEnv(t)
	classifier := testModel(t, "classifier.onnx")
	e.hub.AddRepo("acme/iris", map[string][]byte{"onnx/model.onnx": classifier, "onnx/model_fp16.onnx": unversioned(t), "config.json": irisConfig})
	first := e.mustPull("acme/iris", registry.PullOptions{})
	again := e.mustPull("acme/iris", registry.PullOptions{})
	if again.Downloaded != 0 || !again.PulledAt.After(first.PulledAt) {
		t.Errorf("second pull downloaded %d files (want 0), pulled at %v (first %v)", again.Downloaded, again.PulledAt, first.PulledAt)
	}
	variant := e.mustPull("acme/iris", registry.PullOptions{File: "onnx/model_fp16.onnx"})
	if variant.Downloaded != 1 || variant.Dir != first.Dir {
		t.Errorf("adding a variant downloaded %d files into %s; want 1 into %s", variant.Downloaded, variant.Dir, first.Dir)
	}
	want := []string{"config.json", "onnx/model.onnx", "onnx/model_fp16.onnx", registry.ManifestFile}
	sort.Strings(want)
	if got := files(t, first.Dir); !reflect.DeepEqual(got, want) {
		t.Errorf("snapshot holds %v, want %v", got, want)
	}
	src, ok, err := e.store.Lookup("acme/iris")
	if err != nil || !ok || filepath.Base(src.File) != "model_fp16.onnx" || src.Version != variant.Commit[:7] {
		t.Errorf("after pulling a variant, Lookup = %+v, %v, %v; want the variant, versioned by commit", src, ok, err)
	}
	if len(e.hub.Downloads("onnx/model.onnx")) != 1 || len(e.hub.Downloads("config.json")) != 1 {
		t.Error("files already in the store were downloaded again")
	}
}

func TestRevisionsListAndRemove(t *testing.T) {
	e := newEnv(t)
	main := e.hub.AddRepo("acme/iris", map[string][]byte{"model.onnx": testModel(t, "classifier.onnx")})
	v2 := e.hub.Commit("acme/iris", "v2", map[string][]byte{"model.onnx": unversioned(t)})
	pr := e.hub.Commit("acme/iris", "refs/pr/1", map[string][]byte{"model.onnx": unversioned(t), "config.json": irisConfig})
	e.hub.AddRepo("acme/other", map[string][]byte{"model.onnx": testModel(t, "classifier.onnx")})

	e.mustPull("acme/iris", registry.PullOptions{})
	e.mustPull("acme/iris@v2", registry.PullOptions{})
	e.mustPull("acme/iris@refs/pr/1", registry.PullOptions{})
	e.mustPull("acme/iris@"+main, registry.PullOptions{}) // by commit: no new ref
	e.mustPull("acme/other", registry.PullOptions{})

	refFile := filepath.Join(e.store.Root(), "models", "acme--iris", "refs", "refs%2Fpr%2F1")
	if data, err := os.ReadFile(refFile); err != nil || strings.TrimSpace(string(data)) != pr {
		t.Errorf("ref file for refs/pr/1: %q, %v", data, err)
	}

	snaps, err := e.store.List()
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		repo, commit string
		refs         []string
	}
	var got []row
	for _, s := range snaps {
		got = append(got, row{s.Repo, s.Commit, s.Refs})
	}
	want := []row{
		{"acme/iris", main, []string{"main"}}, // pulled last, by commit
		{"acme/iris", pr, []string{"refs/pr/1"}},
		{"acme/iris", v2, []string{"v2"}},
		{"acme/other", snaps[3].Commit, []string{"main"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("List = %+v\nwant %+v", got, want)
	}

	for id, commit := range map[string]string{"acme/iris": main, "acme/iris@v2": v2, "acme/iris@refs/pr/1": pr, "acme/iris@main": main} {
		src, ok, err := e.store.Lookup(id)
		if err != nil || !ok || src.Metadata["commit"] != commit {
			t.Errorf("Lookup(%s) = commit %s, %v, %v; want %s", id, src.Metadata["commit"], ok, err, commit)
		}
	}
	if src, _, _ := e.store.Lookup("acme/iris@refs/pr/1"); !reflect.DeepEqual(src.Labels, map[string][]string{"probabilities": irisLabels}) {
		t.Errorf("labels of refs/pr/1 = %v", src.Labels)
	}

	ctx := context.Background()
	removed, err := e.store.Remove(ctx, registry.Ref{Repo: "acme/iris", Revision: "v2"})
	if err != nil || len(removed) != 1 || removed[0].Commit != v2 {
		t.Fatalf("Remove(acme/iris@v2) = %+v, %v", removed, err)
	}
	if _, ok, _ := e.store.Lookup("acme/iris@v2"); ok {
		t.Error("acme/iris@v2 found after its removal")
	}
	if _, err := os.Stat(filepath.Join(e.store.Root(), "models", "acme--iris", "refs", "v2")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ref v2 left behind: %v", err)
	}
	if _, ok, _ := e.store.Lookup("acme/iris"); !ok {
		t.Error("acme/iris gone after removing only v2")
	}
	removed, err = e.store.Remove(ctx, registry.Ref{Repo: "acme/iris"})
	if err != nil || len(removed) != 2 {
		t.Fatalf("Remove(acme/iris) = %d snapshots, %v; want 2", len(removed), err)
	}
	if _, err := os.Stat(filepath.Join(e.store.Root(), "models", "acme--iris")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("acme--iris left behind: %v", err)
	}
	if _, err := e.store.Remove(ctx, registry.Ref{Repo: "acme/iris"}); !errors.Is(err, registry.ErrNotPulled) {
		t.Errorf("removing twice: %v, want ErrNotPulled", err)
	}
	if _, err := e.store.Remove(ctx, registry.Ref{Repo: "acme/other", Revision: "v9"}); !errors.Is(err, registry.ErrNotPulled) {
		t.Errorf("removing a revision never pulled: %v, want ErrNotPulled", err)
	}
	empty := registry.Open(filepath.Join(t.TempDir(), "empty"))
	if _, err := empty.Remove(ctx, registry.Ref{Repo: "acme/iris"}); !errors.Is(err, registry.ErrNotPulled) {
		t.Errorf("removing from an empty store: %v, want ErrNotPulled", err)
	}
	if _, err := os.Stat(empty.Root()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("removing from an empty store created it: %v", err)
	}
	if snaps, _ := e.store.List(); len(snaps) != 1 || snaps[0].Repo != "acme/other" {
		t.Errorf("after removal List = %+v", snaps)
	}
	if got := files(t, filepath.Join(e.store.Root(), "tmp")); len(got) != 0 {
		t.Errorf("tmp/ after removal: %v", got)
	}
}

func TestHubFromEnv(t *testing.T) {
	e := newEnv(t)
	e.hub.AddRepo("acme/iris", map[string][]byte{"model.onnx": testModel(t, "classifier.onnx")})
	envs := map[string]string{"HF_ENDPOINT": e.hub.URL + "/", "HF_TOKEN": "hf_abc"}
	hub := registry.HubFromEnv(func(k string) string { return envs[k] })
	if hub.Endpoint != e.hub.URL || hub.Token != "hf_abc" {
		t.Fatalf("HubFromEnv = %+v", hub)
	}
	e.puller.Hub = hub
	e.mustPull("acme/iris", registry.PullOptions{})
	reqs := e.hub.Requests()
	if len(reqs) == 0 || reqs[0].Path != "/api/models/acme/iris" || reqs[0].Authorization != "Bearer hf_abc" {
		t.Errorf("requests = %+v; want the info request on HF_ENDPOINT with HF_TOKEN", reqs)
	}
	if def := registry.HubFromEnv(func(string) string { return "" }); def.Endpoint != "https://huggingface.co" || def.Token != "" {
		t.Errorf("default hub = %+v", def)
	}
}

// fakeExporter writes a fake optimum-cli into a new directory and puts it
// first on the PATH. It exports the classifier and a config.json, or
// fails with a message when fail is set.
func fakeExporter(t *testing.T, fail bool) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Fatal("the fake optimum-cli is a shell script")
	}
	dir := t.TempDir()
	classifier, err := filepath.Abs(filepath.Join("..", "..", "testdata", "models", "classifier.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	script := `#!/bin/sh
# fake optimum-cli: export onnx --model REPO OUTPUT
if [ "$1 $2 $3" != "export onnx --model" ] || [ $# -ne 5 ]; then
  echo "usage: optimum-cli export onnx --model MODEL OUTPUT (got: $*)" >&2; exit 2
fi
echo "$4" > "$(dirname "$0")/exported"
`
	if fail {
		script += "echo 'Framework not specified.' >&2\necho 'ValueError: unsupported architecture IrisNet' >&2\nexit 1\n"
	} else {
		script += `mkdir -p "$5" && cp '` + classifier + `' "$5/model.onnx" && printf '%s' '` + string(irisConfig) + `' > "$5/config.json"
echo "Validating ONNX model... all good"
`
	}
	if err := os.WriteFile(filepath.Join(dir, "optimum-cli"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

func TestConvert(t *testing.T) {
	repo := map[string][]byte{"config.json": irisConfig, "pytorch_model.bin": []byte("weights")}

	t.Run("without optimum-cli", func(t *testing.T) {
		e := newEnv(t)
		e.hub.AddRepo("acme/torch", repo)
		e.puller.Exporter = "svc-test-no-such-exporter"
		_, err := e.pull("acme/torch", registry.PullOptions{Convert: true})
		var ne *registry.NoONNXError
		if !errors.As(err, &ne) || !strings.Contains(err.Error(), "--convert needs svc-test-no-such-exporter on the PATH") ||
			!strings.Contains(err.Error(), "pip install 'optimum[exporters]'") {
			t.Errorf("pull: %v", err)
		}
	})
	t.Run("with optimum-cli", func(t *testing.T) {
		e := newEnv(t)
		commit := e.hub.AddRepo("acme/torch", repo)
		dir := fakeExporter(t, false)
		p := e.mustPull("acme/torch", registry.PullOptions{Convert: true})
		if !p.Converted || p.Model != "model.onnx" || p.Commit != commit || !strings.HasPrefix(p.Choice, "converted with optimum-cli") {
			t.Errorf("pulled %+v", p.Manifest)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "exported")); strings.TrimSpace(string(got)) != "acme/torch" {
			t.Errorf("optimum-cli exported %q, want acme/torch", got)
		}
		src, ok, err := e.store.Lookup("acme/torch")
		if err != nil || !ok || !reflect.DeepEqual(src.Labels, map[string][]string{"probabilities": irisLabels}) {
			t.Errorf("Lookup = %+v, %v, %v", src, ok, err)
		}
		if data, _ := os.ReadFile(src.File); !reflect.DeepEqual(data, testModel(t, "classifier.onnx")) {
			t.Error("stored model is not the exported one")
		}
		again := e.mustPull("acme/torch", registry.PullOptions{Convert: true})
		if again.Downloaded != 0 || !strings.Contains(e.events.messages(), "converted before") {
			t.Errorf("second conversion: downloaded %d\n%s", again.Downloaded, e.events.messages())
		}
		if tmp := files(t, filepath.Join(e.store.Root(), "tmp")); len(tmp) != 0 {
			t.Errorf("tmp/ not empty: %v", tmp)
		}
	})
	t.Run("optimum-cli fails", func(t *testing.T) {
		e := newEnv(t)
		e.hub.AddRepo("acme/torch", repo)
		fakeExporter(t, true)
		_, err := e.pull("acme/torch", registry.PullOptions{Convert: true})
		if err == nil || !strings.Contains(err.Error(), "optimum-cli export onnx --model acme/torch failed") ||
			!strings.Contains(err.Error(), "unsupported architecture IrisNet") {
			t.Errorf("pull: %v", err)
		}
		if got := files(t, e.store.Root()); len(got) != 1 || !strings.HasPrefix(got[0], "locks/") {
			t.Errorf("store after a failed conversion: %v", got)
		}
	})
	t.Run("a revision", func(t *testing.T) {
		e := newEnv(t)
		e.hub.Commit("acme/torch", "v1", repo)
		fakeExporter(t, false)
		_, err := e.pull("acme/torch@v1", registry.PullOptions{Convert: true})
		if err == nil || !strings.Contains(err.Error(), "default branch only") {
			t.Errorf("pull: %v", err)
		}
	})
}

func TestManifestOnDisk(t *testing.T) {
	e := newEnv(t)
	commit := e.hub.AddRepo("acme/iris", map[string][]byte{"onnx/model.onnx": testModel(t, "classifier.onnx"), "config.json": irisConfig})
	p := e.mustPull("acme/iris", registry.PullOptions{})
	data, err := os.ReadFile(filepath.Join(p.Dir, registry.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"repo", "revision", "commit", "model", "files", "pulled_at", "model_info"} {
		if _, ok := m[k]; !ok {
			t.Errorf("manifest lacks %q:\n%s", k, data)
		}
	}
	if m["commit"] != commit || m["model"] != "onnx/model.onnx" || m["pulled_at"] != "2025-06-01T12:01:00Z" {
		t.Errorf("manifest:\n%s", data)
	}
	files := m["files"].([]any)
	model := files[1].(map[string]any)
	if model["path"] != "onnx/model.onnx" || model["lfs"] != true || len(model["sha256"].(string)) != 64 {
		t.Errorf("manifest model entry: %v", model)
	}
}

func TestParseRef(t *testing.T) {
	tests := []struct {
		give    string
		want    registry.Ref
		wantErr string
	}{
		{give: "acme/iris", want: registry.Ref{Repo: "acme/iris"}},
		{give: "acme/iris@v1.0", want: registry.Ref{Repo: "acme/iris", Revision: "v1.0"}},
		{give: "Org_1/model.v2-small@refs/pr/3", want: registry.Ref{Repo: "Org_1/model.v2-small", Revision: "refs/pr/3"}},
		{give: "iris", wantErr: "ORG/NAME"},
		{give: "a/b/c", wantErr: "ORG/NAME"},
		{give: "acme/iris@", wantErr: "empty"},
		{give: "acme/ir is", wantErr: "character"},
		{give: "acme/-iris", wantErr: "starts or ends"},
		{give: "acme/ir--is", wantErr: `"--"`},
		{give: "../iris", wantErr: `".."`},
		{give: "acme/iris@../../x", wantErr: "not a valid"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			got, err := registry.ParseRef(tt.give)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("ParseRef(%q) error = %v, want one with %q", tt.give, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want || got.String() != tt.give {
				t.Errorf("ParseRef(%q) = %+v (%s), %v", tt.give, got, got, err)
			}
		})
	}
}

func TestDefaultRoot(t *testing.T) {
	t.Setenv("SVC_HOME", "/srv/svc-home")
	if got := registry.DefaultRoot(); got != "/srv/svc-home" {
		t.Errorf("DefaultRoot with SVC_HOME = %q", got)
	}
	t.Setenv("SVC_HOME", "")
	t.Setenv("XDG_CACHE_HOME", "/tmp/xdg-cache")
	if runtime.GOOS == "linux" {
		if got := registry.DefaultRoot(); got != "/tmp/xdg-cache/svc" {
			t.Errorf("DefaultRoot = %q, want the user cache dir", got)
		}
	}
}
