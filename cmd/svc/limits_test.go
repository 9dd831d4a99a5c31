package main_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRequestLimits checks the request limits of svc.yml's limits section
// through the binary: values per request, string length, nesting depth,
// and the defaults.
func TestRequestLimits(t *testing.T) {
	t.Parallel()
	sequential(t)
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte("limits:\n  max_elements: 1000\n  max_string_length: 16\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	classifier := startServer(t, model("classifier.onnx"), "-c", cfg)
	multi := startServer(t, model("multi_input.onnx"), "-c", cfg)
	defaults := startServer(t, model("classifier.onnx"))

	rows := func(n int) string {
		return `{"input": [` + strings.TrimSuffix(strings.Repeat("[1,2,3,4],", n), ",") + `]}`
	}
	multiBody := func(text string) string {
		return `{"features": [[1,2,3],[4,5,6]], "ids": [[1,2],[3,4]], "mask": [[true,false],[false,true]], "text": ["ok", ` + text + `]}`
	}
	tests := []struct {
		name   string
		srv    *server
		body   string
		status int
		detail string // exact, or a prefix when it ends in "..."
	}{
		{"1000 values", classifier, rows(250), 200, ""},
		{"1001 values", classifier, `{"input": [` + strings.Repeat("[1,2,3,4],", 250) + `[1]]}`, 413,
			"Too many elements: input 'input' takes the request past the limit of 1000 values"},
		{"many values in strings do not count", multi, multiBody(`"` + strings.Repeat(",", 16) + `"`), 200, ""},
		{"string at the limit", multi, multiBody(`"0123456789abcdef"`), 200, ""},
		{"string over the limit", multi, multiBody(`"0123456789abcdefg"`), 400,
			"Invalid value for 'text' at [1]: string of 17 bytes is longer than the limit of 16 bytes"},
		{"escaped string over the limit", multi, multiBody(`"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"`), 400,
			"Invalid value for 'text' at [1]: string of 18 bytes is longer than the limit of 16 bytes"},
		{"nesting depth 64", classifier, `{"input": ` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}`, 400,
			"Invalid shape for 'input': ..."},
		{"nesting depth 65", classifier, `{"input": ` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`, 400,
			"Invalid JSON body: nesting depth exceeds 64..."},
		{"100000 brackets", classifier, `{"input": ` + strings.Repeat("[", 100000) + `}`, 400, "Invalid JSON body: ..."},
		{"100000 balanced brackets", classifier, `{"input": ` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, 400, "Invalid JSON body: ..."},
		// The defaults: 16 MiB bodies, a quarter as many values.
		{"default: 10 MB of 0,", defaults, `{"input": [` + strings.Repeat("0,", 5<<20) + `0]}`, 413,
			"Too many elements: input 'input' takes the request past the limit of 4194304 values"},
		{"default: 4M values are decoded", defaults, `{"input": [` + strings.Repeat("0,", 4<<20-1) + `0]}`, 400,
			"Invalid shape for 'input': expected [-1, 4], got [1, 4194304]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.srv.predict(tt.body)
			if r.Status != tt.status {
				t.Fatalf("status = %d, want %d; body %.300s", r.Status, tt.status, r.Body)
			}
			if tt.status == 200 {
				return
			}
			d := r.Detail(t)
			if p, ok := strings.CutSuffix(tt.detail, "..."); ok {
				if !strings.HasPrefix(d, p) {
					t.Fatalf("detail = %q, want prefix %q", d, p)
				}
			} else if d != tt.detail {
				t.Fatalf("detail = %q, want %q", d, tt.detail)
			}
		})
	}
	// After all that, a valid request still works.
	if r := classifier.predict(rows(1)); r.Status != 200 {
		t.Fatalf("valid request after the limits: %d %s", r.Status, r.Body)
	}
	for _, s := range []*server{classifier, multi, defaults} {
		s.stopNoPanic()
	}
}

// TestSlowClient: a client that trickles its request is answered 408 or
// disconnected once limits.read_timeout has passed, and the server keeps
// serving others.
func TestSlowClient(t *testing.T) {
	t.Parallel()
	const timeout = time.Second
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte("limits:\n  read_timeout: 1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, model("classifier.onnx"), "-c", cfg)
	tests := []struct {
		name    string
		head    string // sent at once
		trickle string // then one byte every 100ms
		want    string // the status line, or "" for a plain disconnect
	}{
		{"slow headers", "POST /predict HTTP/1.1\r\n", "Host: x\r\nContent-Type: application/json\r\nX-Slow: " + strings.Repeat("a", 1000), ""},
		{"slow body", "POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
			`{"input": [[` + strings.Repeat("1,", 500), "HTTP/1.1 408 Request Timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := s.dial(t)
			if _, err := io.WriteString(conn, tt.head); err != nil {
				t.Fatal(err)
			}
			// The trickler stops when the server closes the connection
			// (its write fails) or when the test ends.
			stop := make(chan struct{})
			trickled := make(chan struct{})
			go func() {
				defer close(trickled)
				for i := 0; i < len(tt.trickle); i++ {
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond):
					}
					if _, err := conn.Write([]byte{tt.trickle[i]}); err != nil {
						return
					}
				}
			}()
			defer func() { close(stop); <-trickled }()
			// The answer must come within the timeout plus a generous
			// margin; the trickle alone would take 100 s.
			_ = conn.SetReadDeadline(time.Now().Add(timeout + 15*time.Second))
			status, err := bufio.NewReader(conn).ReadString('\n')
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the server still holds the connection after %v", timeout+15*time.Second)
			}
			status = strings.TrimSpace(status)
			if tt.want == "" {
				if status != "" && !strings.HasPrefix(status, "HTTP/1.1 408") {
					t.Fatalf("got %q, want a disconnect or a 408", status)
				}
				return
			}
			if status != tt.want {
				t.Fatalf("status line %q (err %v), want %q", status, err, tt.want)
			}
		})
	}
	if r := s.predict(`{"input": [[1,2,3,4]]}`); r.Status != 200 {
		t.Fatalf("valid request after slow clients: %d %s", r.Status, r.Body)
	}
	s.stopNoPanic()
}
