// Package config is svc's configuration: defaults, the YAML file (svc.yml)
// and command-line overrides, in that order of precedence (flags win).
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.uber.org/fx"
	"go.yaml.in/yaml/v3"
)

// DefaultFile is the configuration file looked for in the working directory.
const DefaultFile = "svc.yml"

// Default body limit for POST /predict.
const DefaultMaxBodyBytes = 16 << 20

// Config is the whole configuration.
type Config struct {
	// Name is the service name.
	Name    string           `yaml:"name"`
	Models  map[string]Model `yaml:"models"`
	Serve   Serve            `yaml:"serve"`
	Runtime Runtime          `yaml:"runtime"`
	Limits  Limits           `yaml:"limits"`
	// Batching merges requests that wait for a busy session.
	Batching Batching `yaml:"batching"`
	// Providers holds execution-provider options.
	Providers Providers `yaml:"providers"`
	// Access holds API keys and CORS (see transport/access).
	Access Access `yaml:"access"`
	// Tracing configures OpenTelemetry tracing (off by default).
	Tracing Tracing `yaml:"tracing"`
	// Reload configures hot reloading of the served model (docs/reload.md).
	Reload Reload `yaml:"reload"`
	// Sequence configures sequences with implicit state (sequence.go).
	Sequence Sequence `yaml:"sequence"`

	// File is the path the configuration was read from ("" = none).
	File string `yaml:"-"`
	// lines maps dotted keys to their line in File, for messages.
	lines map[string]int
}

// Model is a named local model.
type Model struct {
	Path        string            `yaml:"path"`
	Version     string            `yaml:"version"`
	Description string            `yaml:"description"`
	Metadata    map[string]string `yaml:"metadata"`
	// Labels maps output names to class labels.
	Labels map[string][]string `yaml:"labels"`
	// Inputs declares inputs made from what users send (images), by name.
	Inputs map[string]ModelInput `yaml:"inputs"`
	// Outputs declares what outputs mean (classes, text), by name.
	Outputs map[string]ModelOutput `yaml:"outputs"`
	// Text makes a model that takes token ids take text (nil: automatic,
	// when a tokenizer.json is beside the model).
	Text *Text `yaml:"text"`
	// Sequence declares the model's state pairs, first values and context
	// (nil: found by convention; sequence.go).
	Sequence *ModelSequence `yaml:"sequence"`
	// WarmUp is a file holding an Open Inference Protocol request (the JSON
	// a client POSTs to /v2/models/NAME/infer), relative to svc.yml: the
	// warm-up inference runs it instead of inputs of ones.
	WarmUp string `yaml:"warmup"`
	// Pipeline makes the entry a model made of the file's other models
	// (pipeline.go); such an entry has no path.
	Pipeline *Pipeline `yaml:"pipeline"`
	// Cache keeps the model's answers to repeated requests (nil: no
	// cache; cache.go).
	Cache *ModelCache `yaml:"cache"`
	// Logger sends each inference's request and response to a collector
	// (nil: off; logger.go).
	Logger *ModelLogger `yaml:"logger"`
}

// Reload configures hot reloading: SIGHUP and POST
// /v2/repository/models/NAME/load always reload; Watch reloads on changes.
type Reload struct {
	// Watch reloads the model when its local file or folder changes, or,
	// for a Hub source, when its revision gets a new commit.
	Watch bool `yaml:"watch"`
	// Settle is how long a changed model file must keep its size and
	// modification time (and parse as ONNX) before it is loaded.
	Settle Duration `yaml:"settle"`
	// Interval is how often a Hub source's revision is asked for its
	// commit while watching.
	Interval Duration `yaml:"interval"`
	// Timeout bounds one reload (loading, preparing, warming up): one
	// that has not ended by then fails and the old version serves on.
	Timeout Duration `yaml:"timeout"`
}

// Serve holds HTTP serving settings.
type Serve struct {
	Host string `yaml:"host"`
	Port int    `yaml:"port"`
	// GRPCPort is the port of the Open Inference Protocol's gRPC service,
	// on the same host (0 = off; KServe's convention is 9000, Triton's
	// 8001).
	GRPCPort int    `yaml:"grpc_port"`
	Workers  int    `yaml:"workers"`
	Provider string `yaml:"provider"`
	// ShutdownGrace bounds how long in-flight requests may finish on stop.
	ShutdownGrace Duration `yaml:"shutdown_grace"`
	// DrainDelay is how long the server keeps accepting after SIGTERM, not
	// ready, while load balancers remove it from their endpoints (0 =
	// stop accepting at once).
	DrainDelay Duration `yaml:"drain_delay"`
	// AccessLog says which requests get an access-log line: all, errors,
	// sampled[:RATE] or off (see ParseAccessLog).
	AccessLog string `yaml:"access_log"`
}

// Runtime holds ONNX Runtime settings.
type Runtime struct {
	// Library is the path of the ONNX Runtime shared library.
	Library string `yaml:"library"`
	// CPUAffinity pins --workers N's processes to cores (affinity.go).
	CPUAffinity CPUAffinity `yaml:"cpu_affinity"`
	// Timeout bounds one inference (0 = none).
	Timeout Duration `yaml:"timeout"`
	// MemoryLimit caps runtime memory, e.g. "2GiB" (0 = none).
	MemoryLimit ByteSize `yaml:"memory_limit"`
	// MaxModelSize caps the model file and its external data files
	// together; a larger model is refused before it is read.
	MaxModelSize ByteSize `yaml:"max_model_size"`
	// IntraOpThreads and InterOpThreads size ONNX Runtime's thread pools
	// (intra 0 = half the cores, see sched.CPUPlan; inter 0 = ONNX
	// Runtime's default).
	IntraOpThreads int `yaml:"intra_op_threads"`
	InterOpThreads int `yaml:"inter_op_threads"`
	// Spinning lets ONNX Runtime's idle pool threads spin waiting for work
	// (lower latency for back-to-back runs, but they burn the cores the
	// HTTP server needs).
	Spinning bool `yaml:"spinning"`
	// GraphOptimization is one of disabled, basic, extended, all.
	GraphOptimization string `yaml:"graph_optimization"`
	// OptimizedModelPath, when set, is where the optimized model is written.
	OptimizedModelPath string `yaml:"optimized_model_path"`
	// Profile, when set, turns on ONNX Runtime's profiler for every session:
	// each writes <Profile>_<date>_<time>.json (Chrome trace events, every
	// kernel tagged with its execution provider) when it is destroyed, at
	// shutdown. For diagnosis only: it records every run.
	Profile string `yaml:"profile"`
	// WarmUp runs one inference on inputs of ones after loading, before
	// the model reports ready, so the first request does not pay for lazy
	// initialisation.
	WarmUp bool `yaml:"warmup"`
	// AdaptiveThreads is read and has no effect: it loaded a second
	// session with every core for runs that arrived alone, which measured
	// no faster (docs/performance.md, "Self-tuning"). Notices says so.
	AdaptiveThreads bool `yaml:"adaptive_threads"`
	// ReleaseMemoryAfter gives memory back to the operating system once no
	// request has run for this long after serving (0: never).
	ReleaseMemoryAfter Duration `yaml:"release_memory_after"`
	// GoProcs fixes the number of Go processors (0: tuned to the length of
	// the model's runs: one per core, one more while the runs are long).
	// The GOMAXPROCS environment variable wins over it.
	GoProcs int `yaml:"go_procs"`
}

// The defaults of the bounds on loading a model: the model with its
// external data (runtime.max_model_size), one reload (reload.timeout).
const (
	DefaultMaxModelSize  = 64 << 30
	DefaultReloadTimeout = 10 * time.Minute
)

// Batching configures dynamic batching.
type Batching struct {
	// Enabled turns batching on for models whose inputs and outputs all
	// have a dynamic batch dimension.
	Enabled bool `yaml:"enabled"`
	// MaxBatchSize caps the rows of one merged run.
	MaxBatchSize int `yaml:"max_batch_size"`
	// MaxQueueDelay lets requests wait for others even when a session is
	// free (0: never).
	MaxQueueDelay Duration `yaml:"max_queue_delay"`
	// Adaptive learns, from the runs, the batch size up to MaxBatchSize
	// that costs least per row (false: merge up to MaxBatchSize always).
	Adaptive bool `yaml:"adaptive"`
}

// Access configures access control: API keys and CORS. Both are off when
// left empty.
type Access struct {
	// APIKeysFile names a file of API keys, one per line; blank lines and
	// lines starting with # are skipped. A relative path is taken from the
	// configuration file's directory.
	APIKeysFile string `yaml:"api_keys_file"`
	// APIKeysEnv names an environment variable holding comma-separated API
	// keys (such as SVC_API_KEYS).
	APIKeysEnv string `yaml:"api_keys_env"`
	// CORS enables cross-origin requests from browsers.
	CORS CORS `yaml:"cors"`
}

// CORS configures cross-origin resource sharing.
type CORS struct {
	// AllowedOrigins lists the origins (scheme://host[:port]) allowed to
	// call the API, or "*" for any; empty turns CORS off.
	AllowedOrigins []string `yaml:"allowed_origins"`
	// MaxAge is how long browsers may cache a preflight answer (0: the
	// browser's default).
	MaxAge Duration `yaml:"max_age"`
}

// Default returns the built-in defaults.
func Default() Config {
	return Config{
		Name: "svc",
		Serve: Serve{
			Host:          "0.0.0.0",
			Port:          8080,
			Workers:       1,
			ShutdownGrace: Duration(30 * time.Second),
			AccessLog:     DefaultAccessLog,
		},
		Runtime:   Runtime{GraphOptimization: "all", WarmUp: true, ReleaseMemoryAfter: Duration(2 * time.Second), MaxModelSize: DefaultMaxModelSize},
		Limits:    defaultLimits(),
		Batching:  Batching{Enabled: true, MaxBatchSize: 32, Adaptive: true},
		Providers: Providers{Settings: defaultSettings()},
		Reload:    Reload{Settle: Duration(500 * time.Millisecond), Interval: Duration(time.Minute), Timeout: Duration(DefaultReloadTimeout)},
		Sequence: Sequence{MaxIdle: Duration(DefaultSequenceMaxIdle), MaxActive: DefaultSequenceMaxActive,
			MaxBatchSize: DefaultSequenceMaxBatch, MaxIDLength: DefaultSequenceMaxIDLength,
			MaxConnections: DefaultSequenceMaxConnections},
	}
}

// Sections hands each fx module its own part of the configuration, so that
// no module sees the whole Config.
type Sections struct {
	fx.Out
	Serve     Serve
	Runtime   Runtime
	Limits    Limits
	Batching  Batching
	Providers Providers
	Access    Access
	Tracing   Tracing
	Sequence  Sequence
}

// Sections splits c into its sections.
func (c Config) Sections() Sections {
	return Sections{Serve: c.Serve, Runtime: c.Runtime, Limits: c.Limits, Batching: c.Batching, Providers: c.Providers, Access: c.Access, Tracing: c.Tracing, Sequence: c.Sequence}
}

// Load reads path over the defaults. When path is the default file name and
// the file does not exist, the defaults are returned without error; a file
// named explicitly must exist.
func Load(path string, explicit bool) (Config, error) {
	c := Default()
	data, err := os.ReadFile(path)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return c, nil
		}
		return c, fmt.Errorf("read config: %w", err)
	}
	if err := c.parse(path, data); err != nil {
		return c, err
	}
	c.Providers.fillDefaults()
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	c.File = abs
	if len(c.Access.CORS.AllowedOrigins) == 0 {
		c.Access.CORS.AllowedOrigins = nil // [] and absent mean the same
	}
	if f := c.Access.APIKeysFile; f != "" && !filepath.IsAbs(f) {
		c.Access.APIKeysFile = filepath.Join(filepath.Dir(abs), f)
	}
	c.resolveMedia(filepath.Dir(abs))
	c.lines = keyLines(data)
	return c, c.Validate()
}

func (c *Config) parse(path string, data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		if errors.Is(err, errEOF) || err.Error() == "EOF" {
			return nil // empty file
		}
		return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return nil
}

var errEOF = errors.New("EOF")

// Validate checks values that YAML types alone cannot.
func (c *Config) Validate() error {
	if key, msg := c.check(); key != "" {
		// A missing key is reported at its parent's line.
		return fmt.Errorf("%s: %s %s", c.where(key), key, msg)
	}
	return nil
}

// Notices are what the server says about keys that are valid but have no
// effect any more, each at its line of File.
func (c *Config) Notices() []string {
	var out []string
	if c.Runtime.AdaptiveThreads {
		out = append(out, c.where("runtime.adaptive_threads")+": runtime.adaptive_threads has no effect any more: a second session with every core for runs that arrive alone measured no faster than runs on their share of the cores (docs/performance.md); remove it")
	}
	return out
}

// where is File and the line of key (or of its nearest parent that has
// one), "configuration" without a file.
func (c *Config) where(key string) string {
	if c.File == "" {
		return "configuration"
	}
	for k := key; k != ""; k = k[:max(strings.LastIndex(k, "."), 0)] {
		if line := c.lines[k]; line > 0 {
			return fmt.Sprintf("%s: line %d", c.File, line)
		}
	}
	return c.File
}

// check returns the first invalid key and what is wrong with it.
func (c *Config) check() (string, string) {
	switch {
	case c.Serve.Port < 0 || c.Serve.Port > 65535:
		return "serve.port", fmt.Sprintf("%d is out of range 0-65535", c.Serve.Port)
	case c.Serve.GRPCPort < 0 || c.Serve.GRPCPort > 65535:
		return "serve.grpc_port", fmt.Sprintf("%d is out of range 0-65535 (0 = off)", c.Serve.GRPCPort)
	case c.Serve.GRPCPort != 0 && c.Serve.GRPCPort == c.Serve.Port:
		return "serve.grpc_port", fmt.Sprintf("%d is also serve.port; gRPC needs a port of its own", c.Serve.GRPCPort)
	case c.Serve.Workers < 1:
		return "serve.workers", fmt.Sprintf("must be at least 1, got %d", c.Serve.Workers)
	case c.Runtime.IntraOpThreads < 0:
		return "runtime.intra_op_threads", "cannot be negative"
	case c.Runtime.InterOpThreads < 0:
		return "runtime.inter_op_threads", "cannot be negative"
	case c.Runtime.GoProcs < 0:
		return "runtime.go_procs", "cannot be negative"
	case c.Batching.MaxBatchSize < 1:
		return "batching.max_batch_size", "must be at least 1"
	case c.Batching.MaxQueueDelay < 0:
		return "batching.max_queue_delay", "cannot be negative"
	case c.Serve.ShutdownGrace < 0:
		return "serve.shutdown_grace", "cannot be negative"
	case c.Reload.Interval <= 0:
		return "reload.interval", "must be positive"
	case c.Serve.DrainDelay < 0:
		return "serve.drain_delay", "cannot be negative"
	case c.Runtime.MaxModelSize <= 0:
		return "runtime.max_model_size", "must be positive"
	case c.Reload.Timeout <= 0:
		return "reload.timeout", "must be positive"
	}
	switch c.Runtime.GraphOptimization {
	case "disabled", "basic", "extended", "all":
	default:
		return "runtime.graph_optimization", fmt.Sprintf("must be one of disabled, basic, extended, all; got %q", c.Runtime.GraphOptimization)
	}
	if msg := c.Runtime.CPUAffinity.check(); msg != "" {
		return "runtime.cpu_affinity", msg
	}
	if _, err := ParseAccessLog(c.Serve.AccessLog); err != nil {
		return "serve.access_log", err.Error()
	}
	if key, msg := c.Limits.check(); key != "" {
		return key, msg
	}
	if key, msg := c.Access.check(); key != "" {
		return key, msg
	}
	if key, msg := c.Tracing.check(); key != "" {
		return key, msg
	}
	if key, msg := c.Sequence.check(); key != "" {
		return key, msg
	}
	for name, m := range c.Models {
		if m.Pipeline != nil {
			if m.Path != "" {
				return "models." + name + ".path", "is set beside pipeline: a pipeline's models are its stages'"
			}
			if key, msg := c.checkPipeline(name, m.Pipeline); key != "" {
				return key, msg
			}
			continue
		}
		if m.Path == "" {
			return "models." + name + ".path", "is required"
		}
		if m.Sequence != nil {
			if key, msg := m.Sequence.check("models." + name + ".sequence"); key != "" {
				return key, msg
			}
		}
		if m.Cache != nil {
			if _, key, msg := m.Cache.check(); key != "" {
				return "models." + name + ".cache." + key, msg
			}
		}
		if m.Logger != nil {
			if key, msg := m.Logger.check(); key != "" {
				return "models." + name + ".logger." + key, msg
			}
		}
	}
	return c.checkMedia()
}

// keyLines maps dotted keys ("serve.port") to their line in the file.
func keyLines(data []byte) map[string]int {
	var root yaml.Node
	lines := map[string]int{}
	if yaml.Unmarshal(data, &root) != nil || len(root.Content) == 0 {
		return lines
	}
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := prefix + n.Content[i].Value
			lines[key] = n.Content[i].Line
			walk(n.Content[i+1], key+".")
		}
	}
	walk(root.Content[0], "")
	return lines
}

// Duration is a time.Duration written as "30s", "1m30s" or a number of seconds.
type Duration time.Duration

// UnmarshalYAML parses a duration string or a number of seconds.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return fmt.Errorf("line %d: want a duration such as 30s", n.Line)
	}
	v, err := ParseDuration(s)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*d = Duration(v)
	return nil
}

// ParseDuration accepts Go durations and plain seconds.
func ParseDuration(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 {
			return 0, fmt.Errorf("invalid duration %q: negative", s)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("invalid duration %q: want e.g. 500ms, 30s, 2m", s)
	}
	return v, nil
}

// Std returns the time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// ByteSize is a size in bytes written as 1024, "512MiB", "2GB" or "1.5G".
type ByteSize int64

// UnmarshalYAML parses a size.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return fmt.Errorf("line %d: want a size such as 512MiB", n.Line)
	}
	v, err := ParseByteSize(s)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*b = ByteSize(v)
	return nil
}

var byteUnits = []struct {
	suffix string
	mult   float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// ParseByteSize parses sizes with optional units (binary for KiB/K, decimal
// for KB).
func ParseByteSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			mult = u.mult
			t = strings.TrimSpace(strings.TrimSuffix(t, u.suffix))
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("invalid size %q: want e.g. 16MiB, 2GB or a number of bytes", s)
	}
	return int64(f * mult), nil
}
