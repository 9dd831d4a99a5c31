package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	// The providers' settings sections, as in svc itself.
	_ "github.com/svc-dev/svc/providers/all"
)

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadEveryKey(t *testing.T) {
	p := write(t, `
name: vision
models:
  iris:
    path: models/iris
    version: "2.1"
    description: Iris classifier
    metadata: {team: ml}
    labels:
      probabilities: [a, b, c]
    sequence:
      states: {state: stateN}
      initial: {state: 0.5}
      context: {input: 64}
serve:
  host: 127.0.0.1
  port: 9000
  workers: 3
  provider: cuda
  shutdown_grace: 5s
  drain_delay: 2s
  access_log: sampled:5%
runtime:
  library: /opt/ort/libonnxruntime.so
  timeout: 1.5
  memory_limit: 2GiB
  max_model_size: 8GiB
  intra_op_threads: 4
  inter_op_threads: 2
  spinning: true
  graph_optimization: basic
  optimized_model_path: /tmp/opt.onnx
  warmup: false
  adaptive_threads: false
  release_memory_after: 0s
limits:
  max_body_size: 32MiB
  max_elements: 1000000
  max_string_length: 64KiB
  read_timeout: 15s
  max_image_pixels: 1000000
  max_images: 8
  max_request_pixels: 4000000
  max_jpeg_scan_pixels: 20000000
  max_texts: 100
  max_tokens: 4096
  request_memory: 64MiB
  memory_wait: 2s
batching:
  enabled: false
  max_batch_size: 8
  max_queue_delay: 2ms
  adaptive: false
providers:
  device_id: 1
  tensorrt: {fp16: true, int8: true, engine_cache: /tmp/trt}
  openvino: {device_type: GPU}
reload:
  watch: true
  settle: 250ms
  interval: 30s
  timeout: 5m
sequence:
  max_idle: 30s
  max_active: 5
  batching: false
  max_batch_size: 16
  max_id_length: 64
  max_connections: 7
`)
	c, err := Load(p, true)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Name: "vision",
		Models: map[string]Model{"iris": {Path: "models/iris", Version: "2.1", Description: "Iris classifier",
			Metadata: map[string]string{"team": "ml"}, Labels: map[string][]string{"probabilities": {"a", "b", "c"}},
			Sequence: &ModelSequence{States: map[string]string{"state": "stateN"}, Initial: map[string]float64{"state": 0.5}, Context: map[string]int{"input": 64}}}},
		Serve:   Serve{Host: "127.0.0.1", Port: 9000, Workers: 3, Provider: "cuda", ShutdownGrace: Duration(5 * time.Second), DrainDelay: Duration(2 * time.Second), AccessLog: "sampled:5%"},
		Runtime: Runtime{Library: "/opt/ort/libonnxruntime.so", Timeout: Duration(1500 * time.Millisecond), MemoryLimit: 2 << 30, MaxModelSize: 8 << 30, IntraOpThreads: 4, InterOpThreads: 2, Spinning: true, GraphOptimization: "basic", OptimizedModelPath: "/tmp/opt.onnx"},
		Limits: Limits{MaxBodyBytes: 32 << 20, MaxElements: 1000000, MaxStringLength: 64 << 10, ReadTimeout: Duration(15 * time.Second),
			MaxImagePixels: 1000000, MaxImages: 8, MaxRequestPixels: 4000000, MaxJPEGScanPixels: 20000000, MaxTexts: 100, MaxTokens: 4096,
			RequestMemory: 64 << 20, MemoryWait: Duration(2 * time.Second)},
		Batching:  Batching{Enabled: false, MaxBatchSize: 8, MaxQueueDelay: Duration(2 * time.Millisecond)},
		Providers: Providers{DeviceID: 1},
		Reload:    Reload{Watch: true, Settle: Duration(250 * time.Millisecond), Interval: Duration(30 * time.Second), Timeout: Duration(5 * time.Minute)},
		Sequence:  Sequence{MaxIdle: Duration(30 * time.Second), MaxActive: 5, Batching: new(false), MaxBatchSize: 16, MaxIDLength: 64, MaxConnections: 7},
		File:      p,
	}
	wantSections := map[string]map[string]any{
		"tensorrt": {"fp16": true, "int8": true, "engine_cache": "/tmp/trt"},
		"openvino": {"device_type": "GPU"},
	}
	if got := sections(t, c.Providers.Settings); !reflect.DeepEqual(got, wantSections) {
		t.Errorf("provider sections = %v, want %v", got, wantSections)
	}
	c.lines, want.lines = nil, nil
	c.Providers.Settings = nil
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got  %+v\nwant %+v", c, want)
	}
}

// sections shows each provider's settings as the YAML keys and values it
// holds, so the tests need not name the providers' types.
func sections(t *testing.T, settings map[string]any) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for name, s := range settings {
		data, err := yaml.Marshal(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = m
	}
	return out
}

func TestLoadDefaultsAndMissing(t *testing.T) {
	c, err := Load(filepath.Join(t.TempDir(), "svc.yml"), false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, Default()) {
		t.Fatalf("missing default file: %+v", c)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "other.yml"), true); err == nil || !strings.Contains(err.Error(), "other.yml") {
		t.Fatalf("explicit missing file: %v", err)
	}
	c, err = Load(write(t, "# only a comment\n"), true)
	if err != nil || c.Serve.Port != 8080 || c.Limits.MaxBodyBytes != DefaultMaxBodyBytes {
		t.Fatalf("empty file: %+v %v", c, err)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"unknown top key", "name: x\nserver:\n  port: 1\n", []string{"svc.yml", "line 2", "server"}},
		{"unknown nested key", "serve:\n  port: 80\n  prot: 81\n", []string{"svc.yml", "line 3", "prot"}},
		{"bad int", "serve:\n  port: eighty\n", []string{"svc.yml", "line 2", "eighty"}},
		{"bad duration", "runtime:\n  timeout: soon\n", []string{"svc.yml", "line 2", "invalid duration \"soon\""}},
		{"bad size", "limits:\n  max_body_size: lots\n", []string{"svc.yml", "line 2", "invalid size \"lots\""}},
		{"port range", "serve:\n  port: 70000\n", []string{"svc.yml: line 2: serve.port 70000 is out of range"}},
		{"workers", "name: x\nserve:\n  workers: 0\n", []string{"svc.yml: line 3: serve.workers must be at least 1"}},
		{"optimization", "runtime:\n  graph_optimization: max\n", []string{"line 2: runtime.graph_optimization", `"max"`}},
		{"negative threads", "runtime:\n  intra_op_threads: -1\n", []string{"line 2: runtime.intra_op_threads cannot be negative"}},
		{"negative Go processors", "runtime:\n  go_procs: -2\n", []string{"line 2: runtime.go_procs cannot be negative"}},
		{"zero reload interval", "reload:\n  interval: 0s\n", []string{"line 2: reload.interval must be positive"}},
		{"zero reload timeout", "reload:\n  timeout: 0s\n", []string{"line 2: reload.timeout must be positive"}},
		{"zero model size", "runtime:\n  max_model_size: 0\n", []string{"line 2: runtime.max_model_size must be positive"}},
		{"negative release", "runtime:\n  release_memory_after: -1s\n", []string{"line 2: invalid duration", `"-1s"`}},
		{"batch size", "batching:\n  max_batch_size: 0\n", []string{"line 2: batching.max_batch_size must be at least 1"}},
		{"zero body", "limits:\n  max_body_size: 0\n", []string{"line 2: limits.max_body_size must be positive"}},
		{"bad drain delay", "serve:\n  drain_delay: -1s\n", []string{"line 2: invalid duration"}},
		{"negative elements", "limits:\n  max_elements: -1\n", []string{"line 2: limits.max_elements cannot be negative"}},
		{"zero string length", "limits:\n  max_string_length: 0\n", []string{"line 2: limits.max_string_length must be positive"}},
		{"negative picture pixels", "limits:\n  max_image_pixels: -1\n", []string{"line 2: limits.max_image_pixels cannot be negative"}},
		{"no pictures", "limits:\n  max_images: 0\n", []string{"line 2: limits.max_images must be at least 1"}},
		{"no request pixels", "limits:\n  max_request_pixels: 0\n", []string{"line 2: limits.max_request_pixels must be positive"}},
		{"no scan pixels", "limits:\n  max_jpeg_scan_pixels: -5\n", []string{"line 2: limits.max_jpeg_scan_pixels must be positive"}},
		{"no texts", "limits:\n  max_texts: 0\n", []string{"line 2: limits.max_texts must be at least 1"}},
		{"no tokens", "limits:\n  max_tokens: 0\n", []string{"line 2: limits.max_tokens must be positive"}},
		{"no request memory", "limits:\n  request_memory: 0\n", []string{"line 2: limits.request_memory must be positive"}},
		{"no memory wait", "limits:\n  memory_wait: 0s\n", []string{"line 2: limits.memory_wait must be positive"}},
		{"model without path", "models:\n  iris:\n    version: \"1\"\n", []string{"line 2: models.iris.path is required"}},
		{"access log mode", "name: x\nserve:\n  port: 80\n  access_log: verbose\n", []string{"svc.yml: line 4: serve.access_log must be one of all, errors, sampled", `"verbose"`}},
		{"access log empty", "serve:\n  access_log: \"\"\n", []string{"svc.yml: line 2: serve.access_log must be one of"}},
		{"access log rate", "serve:\n  access_log: sampled:2\n", []string{"svc.yml: line 2: serve.access_log sample rate must be a fraction in (0, 1]", `"2"`}},
		{"access log rate on all", "serve:\n  access_log: all:0.5\n", []string{"svc.yml: line 2: serve.access_log takes a rate only in sampled mode"}},
		{"tracing spans", "tracing:\n  spans: every\n", []string{"line 2: tracing.spans must be steps or request", `"every"`}},
		{"not yaml", "serve: [1, 2\n", []string{"svc.yml"}},
		{"negative image pixels", "limits:\n  max_image_pixels: -1\n", []string{"line 2: limits.max_image_pixels cannot be negative"}},
		{"input declaring nothing", "models:\n  m:\n    path: m.onnx\n    inputs:\n      x: {}\n", []string{"line 5: models.m.inputs.x declares nothing"}},
		{"output declaring nothing", "models:\n  m:\n    path: m.onnx\n    outputs:\n      y: {}\n", []string{"line 5: models.m.outputs.y declares nothing"}},
		{"output with two meanings", "models:\n  m:\n    path: m.onnx\n    outputs:\n      y: {classify: {}, ctc: {labels: [a]}}\n", []string{"models.m.outputs.y declares more than one of classify, ctc, detect, segment and pose: an output has one meaning"}},
		{"detect and segment", "models:\n  m:\n    path: m.onnx\n    outputs:\n      y: {detect: {}, segment: {}}\n", []string{"models.m.outputs.y declares more than one of classify, ctc, detect, segment and pose"}},
		{"negative top_k", "models:\n  m:\n    path: m.onnx\n    outputs:\n      y:\n        classify: {top_k: -1}\n", []string{"models.m.outputs.y.classify.top_k cannot be negative"}},
		{"ctc without labels", "models:\n  m:\n    path: m.onnx\n    outputs:\n      y:\n        ctc: {blank: 0}\n", []string{"models.m.outputs.y.ctc.labels is required"}},
		{"cache of size 0", "models:\n  m:\n    path: m.onnx\n    cache: {size: 0}\n", []string{"line 4: models.m.cache.size must be positive"}},
		{"cache without size", "models:\n  m:\n    path: m.onnx\n    cache: {ttl: 1m}\n", []string{"line 4: models.m.cache.size is required"}},
		{"cache size malformed", "models:\n  m:\n    path: m.onnx\n    cache:\n      size: lots\n", []string{"line 5: models.m.cache.size invalid size \"lots\""}},
		{"cache ttl malformed", "models:\n  m:\n    path: m.onnx\n    cache:\n      size: 1MiB\n      ttl: soon\n", []string{"line 6: models.m.cache.ttl invalid duration \"soon\""}},
		{"cache ttl negative", "models:\n  m:\n    path: m.onnx\n    cache: {size: 1MiB, ttl: -1s}\n", []string{"line 4: models.m.cache.ttl invalid duration"}},
		{"logger mode", "models:\n  m:\n    path: m.onnx\n    logger:\n      mode: everything\n      url: http://c/\n", []string{"line 5: models.m.logger.mode must be all, request or response", `"everything"`}},
		{"logger without url", "models:\n  m:\n    path: m.onnx\n    logger: {mode: all}\n", []string{"line 4: models.m.logger.url is required"}},
		{"logger url malformed", "models:\n  m:\n    path: m.onnx\n    logger:\n      url: \"http://a b/%zz\"\n", []string{"line 5: models.m.logger.url is malformed"}},
		{"logger url scheme", "models:\n  m:\n    path: m.onnx\n    logger:\n      url: kafka://c/t\n", []string{"line 5: models.m.logger.url must be http://, https:// or file:///"}},
		{"logger url file with a host", "models:\n  m:\n    path: m.onnx\n    logger:\n      url: file://payloads.jsonl\n", []string{"line 5: models.m.logger.url must name a path"}},
		{"logger sample over 1", "models:\n  m:\n    path: m.onnx\n    logger:\n      url: http://c/\n      sample: 1.5\n", []string{"line 6: models.m.logger.sample must be within [0, 1], got 1.5"}},
		{"logger sample negative", "models:\n  m:\n    path: m.onnx\n    logger:\n      url: http://c/\n      sample: -0.1\n", []string{"line 6: models.m.logger.sample must be within [0, 1]"}},
		{"logger queue 0", "models:\n  m:\n    path: m.onnx\n    logger:\n      url: http://c/\n      queue: 0\n", []string{"line 6: models.m.logger.queue must be positive, got 0"}},
		{"logger drain", "models:\n  m:\n    path: m.onnx\n    logger:\n      url: http://c/\n      drain: 0s\n", []string{"line 6: models.m.logger.drain must be positive"}},
		{"logger file size", "models:\n  m:\n    path: m.onnx\n    logger:\n      url: file:///tmp/p\n      max_file_size: big\n", []string{"line 6: models.m.logger.max_file_size invalid size"}},
		{"affinity mode", "runtime:\n  cpu_affinity: always\n", []string{"line 2: runtime.cpu_affinity must be auto, off, or one list of cores per worker", `"always"`}},
		{"affinity overlapping", "runtime:\n  cpu_affinity: [[0, 1], [1, 2]]\n", []string{"line 2: runtime.cpu_affinity core 1 is in set 1 and set 2: the sets must not overlap"}},
		{"affinity empty set", "runtime:\n  cpu_affinity: [[0], []]\n", []string{"line 2: runtime.cpu_affinity set 2 is empty"}},
		{"affinity negative core", "runtime:\n  cpu_affinity: [[-1]]\n", []string{"line 2: runtime.cpu_affinity set 1 has core -1"}},
		{"affinity not lists", "runtime:\n  cpu_affinity: {a: 1}\n", []string{"line 2: runtime.cpu_affinity: want auto, off, or one list of cores per worker"}},
		{"labels neither list nor file", "models:\n  m:\n    path: m.onnx\n    outputs:\n      y:\n        classify: {labels: {a: b}}\n", []string{"labels: want a list of labels or the path of a label file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(write(t, tt.body), true)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestNotices(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"none", "runtime:\n  warmup: true\n", nil},
		{"adaptive threads, off", "runtime:\n  adaptive_threads: false\n", nil},
		{"adaptive threads, on", "name: x\nruntime:\n  adaptive_threads: true\n", []string{"svc.yml: line 3: runtime.adaptive_threads has no effect any more"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(write(t, tt.body), true)
			if err != nil {
				t.Fatal(err)
			}
			got := c.Notices()
			if len(got) != len(tt.want) {
				t.Fatalf("notices %q, want %d", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("notice %q lacks %q", got[i], w)
				}
			}
		})
	}
}

func TestStarterParses(t *testing.T) {
	c, err := Load(write(t, Starter()), true)
	if err != nil {
		t.Fatalf("the starter file does not load: %v", err)
	}
	d := Default()
	d.File = c.File
	c.lines = nil
	if !reflect.DeepEqual(c, d) {
		t.Fatalf("the starter file's values differ from the defaults:\n%+v\n%+v", c, d)
	}
}

func TestParseByteSize(t *testing.T) {
	tests := []struct {
		give string
		want int64
	}{
		{"1024", 1024}, {"16MiB", 16 << 20}, {"2GB", 2e9}, {"1.5G", 3 << 29}, {"512kib", 512 << 10}, {"0", 0}, {"10 MiB", 10 << 20},
	}
	for _, tt := range tests {
		got, err := ParseByteSize(tt.give)
		if err != nil || got != tt.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", tt.give, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "x", "-1", "MiB"} {
		if _, err := ParseByteSize(bad); err == nil {
			t.Errorf("ParseByteSize(%q) accepted", bad)
		}
	}
}

func TestParseAccessLog(t *testing.T) {
	tests := []struct {
		give    string
		want    AccessLog
		wantErr string
	}{
		{give: "all", want: AccessLog{Mode: AccessLogAll, Rate: 1}},
		{give: "ALL", want: AccessLog{Mode: AccessLogAll, Rate: 1}},
		{give: "errors", want: AccessLog{Mode: AccessLogErrors, Rate: 1}},
		{give: "off", want: AccessLog{Mode: AccessLogOff, Rate: 1}},
		{give: "sampled", want: AccessLog{Mode: AccessLogSampled, Rate: DefaultSampleRate}},
		{give: "sampled:0.25", want: AccessLog{Mode: AccessLogSampled, Rate: 0.25}},
		{give: "sampled:1", want: AccessLog{Mode: AccessLogSampled, Rate: 1}},
		{give: "sampled:5%", want: AccessLog{Mode: AccessLogSampled, Rate: 0.05}},
		{give: " sampled: 0.5 ", want: AccessLog{Mode: AccessLogSampled, Rate: 0.5}},
		{give: "", wantErr: `must be one of all, errors, sampled, sampled:RATE (a fraction such as 0.01, or 1%) or off; got ""`},
		{give: "none", wantErr: `got "none"`},
		{give: "sampled:0", wantErr: `sample rate must be a fraction in (0, 1]`},
		{give: "sampled:-0.1", wantErr: `sample rate must be a fraction in (0, 1]`},
		{give: "sampled:1.5", wantErr: `sample rate must be a fraction in (0, 1]`},
		{give: "sampled:101%", wantErr: `sample rate must be a fraction in (0, 1]`},
		{give: "sampled:NaN", wantErr: `sample rate must be a fraction in (0, 1]`},
		{give: "sampled:", wantErr: `sample rate must be a fraction in (0, 1]`},
		{give: "errors:0.1", wantErr: `takes a rate only in sampled mode`},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			got, err := ParseAccessLog(tt.give)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseAccessLog(%q) = %+v, %v; want error containing %q", tt.give, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseAccessLog(%q) = %+v, %v; want %+v", tt.give, got, err, tt.want)
			}
			// String gives back a value that parses to the same thing.
			if again, err := ParseAccessLog(got.String()); err != nil || again != got {
				t.Fatalf("ParseAccessLog(%q) = %+v, %v; want %+v", got.String(), again, err, got)
			}
		})
	}
}

func TestServeAccessLogPolicy(t *testing.T) {
	tests := []struct {
		give    string
		want    AccessLogMode
		wantErr string
	}{
		{"", AccessLogAll, ""}, // a Serve not built from Default
		{"errors", AccessLogErrors, ""},
		{"loud", 0, "serve.access_log "},
	}
	for _, tt := range tests {
		got, err := Serve{AccessLog: tt.give}.AccessLogPolicy()
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("AccessLogPolicy(%q) error %v, want one containing %q", tt.give, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.Mode != tt.want {
			t.Errorf("AccessLogPolicy(%q) = %+v, %v; want mode %v", tt.give, got, err, tt.want)
		}
	}
}

// TestLabelFilesRelative: a label file (and a warm-up sample) is found
// relative to svc.yml, a list stays a list.
func TestLabelFilesRelative(t *testing.T) {
	p := write(t, "models:\n  m:\n    path: m.onnx\n    warmup: samples/m.json\n    outputs:\n      y:\n        ctc: {labels: keys/chars.txt}\n      z:\n        classify: {labels: [a, b]}\n")
	c, err := Load(p, true)
	if err != nil {
		t.Fatal(err)
	}
	m := c.Models["m"]
	if got, want := m.Outputs["y"].CTC.Labels.File, filepath.Join(filepath.Dir(c.File), "keys", "chars.txt"); got != want {
		t.Errorf("ctc labels file = %q, want %q", got, want)
	}
	if l := m.Outputs["z"].Classify.Labels; l.File != "" || strings.Join(l.List, ",") != "a,b" {
		t.Errorf("classify labels = %+v", l)
	}
	if got, want := m.WarmUp, filepath.Join(filepath.Dir(c.File), "samples", "m.json"); got != want {
		t.Errorf("warm-up sample = %q, want %q", got, want)
	}
}

func TestCPUAffinityParses(t *testing.T) {
	tests := []struct {
		body string
		want CPUAffinity
		on   bool
	}{
		{"name: x\n", CPUAffinity{}, false},
		{"runtime:\n  cpu_affinity: off\n", CPUAffinity{}, false},
		{"runtime:\n  cpu_affinity: auto\n", CPUAffinity{Mode: "auto"}, true},
		{"runtime:\n  cpu_affinity: [[0, 1], [2, 3]]\n", CPUAffinity{Mode: "sets", Sets: [][]int{{0, 1}, {2, 3}}}, true},
	}
	for _, tt := range tests {
		c, err := Load(write(t, tt.body), true)
		if err != nil {
			t.Fatalf("%q: %v", tt.body, err)
		}
		if got := c.Runtime.CPUAffinity; !reflect.DeepEqual(got, tt.want) || got.On() != tt.on {
			t.Errorf("%q: %+v (on %v), want %+v (on %v)", tt.body, got, got.On(), tt.want, tt.on)
		}
	}
}
