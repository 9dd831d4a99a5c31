package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// The payload logger's defaults (models.NAME.logger).
const (
	DefaultLoggerQueue       = 1000
	DefaultLoggerQueueBytes  = 64 << 20
	DefaultLoggerDrain       = 5 * time.Second
	DefaultLoggerTimeout     = 5 * time.Second
	DefaultLoggerRetries     = 3
	DefaultLoggerMaxFileSize = 100 << 20
	DefaultLoggerMaxFiles    = 5
)

// ModelLogger configures the payload logger (models.NAME.logger;
// transport/payload): each inference's request and response sent as a
// CloudEvent to URL. Off unless present.
type ModelLogger struct {
	// Mode is what is logged: all (the default), request or response.
	Mode string `yaml:"mode"`
	// URL is where events go: http:// or https:// (a CloudEvents receiver,
	// binary mode), or file:///ABSOLUTE/PATH or file:RELATIVE/PATH (from
	// the working directory; JSON lines). Required.
	URL string `yaml:"url"`
	// Sample is the share of requests logged, in [0, 1] (absent: 1).
	Sample *float64 `yaml:"sample"`
	// Queue bounds the events waiting to be delivered (absent: 1000);
	// past it, events are dropped and counted.
	Queue *int `yaml:"queue"`
	// QueueBytes bounds the bytes of the events waiting (absent: 64MiB).
	QueueBytes string `yaml:"queue_bytes"`
	// Redact lists the request headers never logged, beside those always
	// left out (Authorization, Cookie, Proxy-Authorization and the API
	// key's header).
	Redact []string `yaml:"redact"`
	// Retries is how many times a failed delivery is retried, with
	// exponential backoff (absent: 3).
	Retries *int `yaml:"retries"`
	// Timeout bounds one delivery (absent: 5s).
	Timeout string `yaml:"timeout"`
	// Drain bounds how long events still queued at shutdown are delivered
	// (absent: 5s); what is left then is dropped and counted.
	Drain string `yaml:"drain"`
	// MaxFileSize rotates a file sink's file past this size (absent: 100MiB).
	MaxFileSize string `yaml:"max_file_size"`
	// MaxFiles is how many rotated files are kept beside the current one
	// (absent: 5).
	MaxFiles *int `yaml:"max_files"`
}

// LoggerSettings is ModelLogger resolved: defaults filled, sizes and
// durations parsed.
type LoggerSettings struct {
	Mode        string
	URL         *url.URL
	Sample      float64
	Queue       int
	QueueBytes  int64
	Redact      []string
	Retries     int
	Timeout     time.Duration
	Drain       time.Duration
	MaxFileSize int64
	MaxFiles    int
}

// Settings resolves the logger's settings; an error names the key.
func (m ModelLogger) Settings() (LoggerSettings, error) {
	s, key, msg := m.resolve()
	if key != "" {
		return s, fmt.Errorf("logger.%s %s", key, msg)
	}
	return s, nil
}

// check returns the first invalid key under logger and what is wrong.
func (m ModelLogger) check() (string, string) {
	_, key, msg := m.resolve()
	return key, msg
}

func (m ModelLogger) resolve() (LoggerSettings, string, string) {
	s := LoggerSettings{Mode: m.Mode, Sample: 1, Queue: DefaultLoggerQueue, QueueBytes: DefaultLoggerQueueBytes,
		Redact: m.Redact, Retries: DefaultLoggerRetries, Timeout: DefaultLoggerTimeout, Drain: DefaultLoggerDrain,
		MaxFileSize: DefaultLoggerMaxFileSize, MaxFiles: DefaultLoggerMaxFiles}
	switch m.Mode {
	case "":
		s.Mode = "all"
	case "all", "request", "response":
	default:
		return s, "mode", fmt.Sprintf("must be all, request or response, got %q", m.Mode)
	}
	u, msg := loggerURL(m.URL)
	if msg != "" {
		return s, "url", msg
	}
	s.URL = u
	if m.Sample != nil {
		if v := *m.Sample; !(v >= 0 && v <= 1) {
			return s, "sample", fmt.Sprintf("must be within [0, 1], got %v", v)
		}
		s.Sample = *m.Sample
	}
	if m.Queue != nil {
		if *m.Queue <= 0 {
			return s, "queue", fmt.Sprintf("must be positive, got %d (remove logger to turn it off)", *m.Queue)
		}
		s.Queue = *m.Queue
	}
	if m.Retries != nil {
		if *m.Retries < 0 {
			return s, "retries", fmt.Sprintf("must not be negative, got %d", *m.Retries)
		}
		s.Retries = *m.Retries
	}
	if m.MaxFiles != nil {
		if *m.MaxFiles < 0 {
			return s, "max_files", fmt.Sprintf("must not be negative, got %d", *m.MaxFiles)
		}
		s.MaxFiles = *m.MaxFiles
	}
	for _, b := range []struct {
		key, v string
		to     *int64
	}{{"queue_bytes", m.QueueBytes, &s.QueueBytes}, {"max_file_size", m.MaxFileSize, &s.MaxFileSize}} {
		if b.v == "" {
			continue
		}
		n, err := ParseByteSize(b.v)
		if err != nil {
			return s, b.key, err.Error()
		}
		if n <= 0 {
			return s, b.key, fmt.Sprintf("must be positive, got %q", b.v)
		}
		*b.to = n
	}
	for _, d := range []struct {
		key, v string
		to     *time.Duration
	}{{"timeout", m.Timeout, &s.Timeout}, {"drain", m.Drain, &s.Drain}} {
		if d.v == "" {
			continue
		}
		v, err := ParseDuration(d.v)
		if err != nil {
			return s, d.key, err.Error()
		}
		if v <= 0 {
			return s, d.key, fmt.Sprintf("must be positive, got %q", d.v)
		}
		*d.to = v
	}
	return s, "", ""
}

// loggerURL parses a logger's url: http(s) with a host, or file with an
// absolute path.
func loggerURL(raw string) (*url.URL, string) {
	if raw == "" {
		return nil, "is required: a CloudEvents receiver (http://HOST/PATH) or file:///PATH"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Sprintf("is malformed: %v", err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return nil, fmt.Sprintf("has no host: %q", raw)
		}
	case "file":
		if u.Opaque != "" {
			// file:payloads.jsonl: relative to svc's working directory.
			abs, err := filepath.Abs(u.Opaque)
			if err != nil {
				return nil, fmt.Sprintf("names a path that cannot be resolved: %v", err)
			}
			return &url.URL{Scheme: "file", Path: abs}, ""
		}
		if u.Host != "" && u.Host != "localhost" || !filepath.IsAbs(u.Path) {
			return nil, fmt.Sprintf("must name a path, as file:///var/log/svc/payloads.jsonl or file:payloads.jsonl, got %q", raw)
		}
	default:
		return nil, fmt.Sprintf("must be http://, https:// or file:///, got %q", raw)
	}
	return u, ""
}
