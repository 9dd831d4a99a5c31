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
	// Providers holds execution-provider options.
	Providers Providers `yaml:"providers"`

	// File is the path the configuration was read from ("" = none).
	File string `yaml:"-"`
}

// Model is a named local model.
type Model struct {
	Path        string            `yaml:"path"`
	Version     string            `yaml:"version"`
	Description string            `yaml:"description"`
	Metadata    map[string]string `yaml:"metadata"`
	// Labels maps output names to class labels.
	Labels map[string][]string `yaml:"labels"`
}

// Serve holds HTTP serving settings.
type Serve struct {
	Host     string `yaml:"host"`
	Port     int    `yaml:"port"`
	Workers  int    `yaml:"workers"`
	Provider string `yaml:"provider"`
	// ShutdownGrace bounds how long in-flight requests may finish on stop.
	ShutdownGrace Duration `yaml:"shutdown_grace"`
}

// Runtime holds ONNX Runtime settings.
type Runtime struct {
	// Library is the path of the ONNX Runtime shared library.
	Library string `yaml:"library"`
	// Timeout bounds one inference (0 = none).
	Timeout Duration `yaml:"timeout"`
	// MemoryLimit caps runtime memory, e.g. "2GiB" (0 = none).
	MemoryLimit ByteSize `yaml:"memory_limit"`
	// IntraOpThreads and InterOpThreads size ONNX Runtime's thread pools
	// (0 = ONNX Runtime's default).
	IntraOpThreads int `yaml:"intra_op_threads"`
	InterOpThreads int `yaml:"inter_op_threads"`
	// GraphOptimization is one of disabled, basic, extended, all.
	GraphOptimization string `yaml:"graph_optimization"`
	// OptimizedModelPath, when set, is where the optimized model is written.
	OptimizedModelPath string `yaml:"optimized_model_path"`
}

// Limits holds request limits.
type Limits struct {
	// MaxBodyBytes caps the /predict request body.
	MaxBodyBytes ByteSize `yaml:"max_body_size"`
}

// Providers holds execution-provider options.
type Providers struct {
	DeviceID int      `yaml:"device_id"`
	TensorRT TensorRT `yaml:"tensorrt"`
	OpenVINO OpenVINO `yaml:"openvino"`
}

// TensorRT options.
type TensorRT struct {
	FP16        bool   `yaml:"fp16"`
	INT8        bool   `yaml:"int8"`
	EngineCache string `yaml:"engine_cache"`
}

// OpenVINO options.
type OpenVINO struct {
	DeviceType string `yaml:"device_type"`
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
		},
		Runtime: Runtime{GraphOptimization: "all"},
		Limits:  Limits{MaxBodyBytes: DefaultMaxBodyBytes},
	}
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
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	c.File = abs
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
	where := c.File
	if where == "" {
		where = "configuration"
	}
	if c.Serve.Port < 0 || c.Serve.Port > 65535 {
		return fmt.Errorf("%s: serve.port %d is out of range 0-65535", where, c.Serve.Port)
	}
	if c.Serve.Workers < 1 {
		return fmt.Errorf("%s: serve.workers must be at least 1, got %d", where, c.Serve.Workers)
	}
	switch c.Runtime.GraphOptimization {
	case "disabled", "basic", "extended", "all":
	default:
		return fmt.Errorf("%s: runtime.graph_optimization must be one of disabled, basic, extended, all; got %q", where, c.Runtime.GraphOptimization)
	}
	if c.Runtime.IntraOpThreads < 0 || c.Runtime.InterOpThreads < 0 {
		return fmt.Errorf("%s: runtime thread counts cannot be negative", where)
	}
	if c.Limits.MaxBodyBytes <= 0 {
		return fmt.Errorf("%s: limits.max_body_size must be positive", where)
	}
	return nil
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
