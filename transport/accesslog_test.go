package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/svc-dev/svc/core/config"
	svclog "github.com/svc-dev/svc/transport/log"
)

// accessTestHandler answers /ok with 200, /empty with nothing (so 200),
// /missing with 404 and /boom with a panic (so 500).
func accessTestHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write([]byte("ok"))
		case "/empty":
		case "/missing":
			http.Error(w, "no", http.StatusNotFound)
		case "/boom":
			panic("boom")
		}
	})
}

func mustPolicy(t testing.TB, s string) config.AccessLog {
	t.Helper()
	p, err := config.ParseAccessLog(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAccessLogModes(t *testing.T) {
	paths := []string{"/ok", "/empty", "/missing", "/boom"}
	tests := []struct {
		mode string
		want []string // "path status" of the request lines written
	}{
		{"all", []string{"/ok 200", "/empty 200", "/missing 404", "/boom 500"}},
		{"errors", []string{"/missing 404", "/boom 500"}},
		{"sampled:1", []string{"/ok 200", "/empty 200", "/missing 404", "/boom 500"}},
		// A rate this small logs no success in a test's lifetime (about
		// one in 10^12); errors are always logged.
		{"sampled:1e-12", []string{"/missing 404", "/boom 500"}},
		{"off", nil},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			core, logs := observer.New(zapcore.InfoLevel)
			h := Chain(accessTestHandler(), AccessLog(zap.New(core), nil, mustPolicy(t, tt.mode)))
			for _, p := range paths {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
				if rec.Header().Get(RequestIDHeader) == "" {
					t.Errorf("%s: no %s in any mode", p, RequestIDHeader)
				}
			}
			var got []string
			for _, e := range logs.FilterMessage("request").All() {
				m := e.ContextMap()
				got = append(got, m["path"].(string)+" "+itoa(m["status"]))
				for _, k := range []string{"method", "duration", "bytes", "request_id", "remote"} {
					if _, ok := m[k]; !ok {
						t.Errorf("line %v lacks %q", m, k)
					}
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("request lines %q, want %q", got, tt.want)
			}
			// A panic is an error of the server: logged in every mode.
			if n := logs.FilterMessage("handler panic").Len(); n != 1 {
				t.Errorf("%d panic lines, want 1", n)
			}
		})
	}
}

func itoa(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestAccessLogSampledRate(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	h := Chain(accessTestHandler(), AccessLog(zap.New(core), nil, mustPolicy(t, "sampled:0.5")))
	const n = 4000
	for range n {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/ok", nil))
	}
	// Binomial(4000, 0.5): the mean ± 10 standard deviations (±316).
	if got := logs.Len(); got < 1684 || got > 2316 {
		t.Fatalf("sampled:0.5 logged %d of %d requests", got, n)
	}
}

// blockingWriter blocks every Write until release is closed, then keeps
// what it is given.
type blockingWriter struct {
	release chan struct{}
	mu      sync.Mutex
	buf     bytes.Buffer
	calls   int
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	<-b.release
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	return b.buf.Write(p)
}

func (b *blockingWriter) lines(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b.buf.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a written line is not JSON (%v): %q", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func jsonLogger(w zapcore.WriteSyncer) *zap.Logger {
	return zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), w, zapcore.InfoLevel))
}

// A log destination that never accepts data holds up no request: the lines
// that do not fit in the buffer are dropped and counted, and once the
// destination accepts data again the buffered ones reach it whole.
func TestAccessLogBlockedWriter(t *testing.T) {
	dst := &blockingWriter{release: make(chan struct{})}
	out := svclog.NewWriter(dst, 4096)
	srv := httptest.NewServer(Chain(accessTestHandler(), AccessLog(jsonLogger(out), nil, mustPolicy(t, "all"))))
	defer srv.Close()
	// The timeout only turns a hang into a failure.
	client := &http.Client{Timeout: time.Minute}
	const n = 300
	for i := range n {
		resp, err := client.Get(srv.URL + "/ok")
		if err != nil {
			t.Fatalf("request %d with the log blocked: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: status %d", i, resp.StatusCode)
		}
	}
	srv.Close() // every handler has returned, so every line is written or dropped
	dropped := out.Dropped()
	if dropped == 0 || dropped >= n {
		t.Fatalf("%d of %d lines dropped with a 4 KiB buffer and a blocked destination", dropped, n)
	}
	close(dst.release)
	if err := out.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := dst.lines(t)
	if uint64(len(lines))+dropped != n {
		t.Fatalf("%d lines written + %d dropped, want %d", len(lines), dropped, n)
	}
	for _, l := range lines {
		if l["msg"] != "request" || l["path"] != "/ok" {
			t.Fatalf("line %v", l)
		}
	}
}

func TestLogWriter(t *testing.T) {
	t.Run("lines in order, flushed", func(t *testing.T) {
		dst := &blockingWriter{release: make(chan struct{})}
		close(dst.release)
		out := svclog.NewWriter(dst, 0)
		log := jsonLogger(out)
		for i := range 1000 {
			log.Info("line", zap.Int("i", i))
		}
		if err := out.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		lines := dst.lines(t)
		if len(lines) != 1000 {
			t.Fatalf("%d lines after Flush, want 1000", len(lines))
		}
		for i, l := range lines {
			if l["i"] != float64(i) {
				t.Fatalf("line %d is %v", i, l)
			}
		}
		if err := out.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		// After Close, lines are dropped and counted, never written.
		log.Info("late")
		if out.Dropped() != 1 || len(dst.lines(t)) != 1000 {
			t.Fatalf("after Close: %d dropped, %d lines", out.Dropped(), len(dst.lines(t)))
		}
	})

	t.Run("drops reported once the destination recovers", func(t *testing.T) {
		dst := &blockingWriter{release: make(chan struct{})}
		out := svclog.NewWriter(dst, 64)
		reported := make(chan uint64, 10)
		out.OnDrop(func(n uint64) { reported <- n })
		for range 20 {
			_, _ = out.Write([]byte("0123456789abcdef\n"))
		}
		// Flush cannot finish while the destination blocks.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := out.Flush(ctx); err == nil {
			t.Fatal("Flush returned nil with the destination blocked")
		}
		dropped := out.Dropped()
		// Three 17-byte writes fit in 64 bytes. The goroutine takes the
		// first one to three (then blocks on the destination) whenever it
		// gets to run, and three more fit behind them: 3 to 6 are kept.
		if dropped < 14 || dropped > 17 {
			t.Fatalf("%d of 20 writes dropped", dropped)
		}
		close(dst.release)
		if got := <-reported; got != dropped {
			t.Fatalf("OnDrop got %d, want %d", got, dropped)
		}
		if err := out.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := uint64(bytes.Count(dst.buf.Bytes(), []byte("\n"))); got+dropped != 20 {
			t.Fatalf("%d written + %d dropped, want 20", got, dropped)
		}
	})

	t.Run("access lines formatted in the buffer keep its bound", func(t *testing.T) {
		dst := &blockingWriter{release: make(chan struct{})}
		out := svclog.NewWriter(dst, 1000)
		h := Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
			AccessLog(zap.New(svclog.NewJSONCore(out, zapcore.InfoLevel)), nil, mustPolicy(t, "all")))
		const sent = 40
		for range sent {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/predict", nil))
		}
		dropped := out.Dropped()
		// A line is about 190 bytes: the goroutine holds at most the
		// 1000 bytes it took before blocking, and as many wait behind.
		if dropped < sent-12 || dropped > sent-4 {
			t.Fatalf("%d of %d lines dropped with the destination blocked", dropped, sent)
		}
		close(dst.release)
		if err := out.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		lines := dst.lines(t)
		if uint64(len(lines))+dropped != sent {
			t.Fatalf("%d lines written + %d dropped, want %d", len(lines), dropped, sent)
		}
		for _, l := range lines {
			if l["msg"] != "request" || l["path"] != "/predict" || l["status"] != float64(200) {
				t.Fatalf("line %v", l)
			}
		}
		// Closed: a line is dropped and counted, never written.
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/predict", nil))
		if out.Dropped() != dropped+1 || len(dst.lines(t)) != len(lines) {
			t.Fatalf("after Close: %d dropped, %d lines", out.Dropped(), len(dst.lines(t)))
		}
	})

	t.Run("close gives up on a blocked destination", func(t *testing.T) {
		dst := &blockingWriter{release: make(chan struct{})}
		out := svclog.NewWriter(dst, 0)
		_, _ = out.Write([]byte("stuck\n"))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := out.Close(ctx); err == nil {
			t.Fatal("Close returned nil with the destination blocked")
		}
		// The goroutine ends once the destination returns.
		close(dst.release)
		if err := out.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := dst.buf.String(); got != "stuck\n" {
			t.Fatalf("destination got %q", got)
		}
	})
}

// take returns what b holds and empties it.
func take(b *zaptest.Buffer) string {
	out := b.String()
	b.Reset()
	return out
}

// TestJSONCoreAccessLineMatchesZap: the access-log line svc's JSON core
// formats itself is byte for byte the line zap's JSON encoder writes for
// the same entry and fields, for awkward methods, paths, ids and remote
// addresses, durations from zero to hours, and logger context added by
// With (as workers add "worker").
func TestJSONCoreAccessLineMatchesZap(t *testing.T) {
	type request struct {
		method, path, id, remote string
		status, bytes            int
		took                     time.Duration
	}
	requests := []request{
		{"POST", "/predict", "0123456789abcdef01234567", "127.0.0.1:40000", 200, 21, 183 * time.Microsecond},
		{"GET", "/", "x", "[::1]:8080", 404, 0, 0},
		{"PUT", `/a"b\c`, `id"with\quotes`, "10.0.0.1:1", 405, 9, time.Nanosecond},
		{"DELETE", "/tab\there/nl\nthere/cr\r/bell\x07/del\x7f", "~!@#$%^&*()_+{}|:<>?", "", 500, 1 << 40, 90 * time.Minute},
		{"PATCH", "/ünïcödé/日本語/😀", "id", "remote\x01", 413, -1, 1500 * time.Millisecond},
		{"OPTIONS", "/bad\xff\xfeutf8", "id", "r", 204, 0, 12345678901 * time.Nanosecond},
		{"GET", "/" + strings.Repeat("long/", 100), strings.Repeat("i", 128), strings.Repeat("r", 5000), 200, 7, 999 * time.Millisecond},
	}
	contexts := [][][]zap.Field{
		nil,
		{{zap.Int("worker", 3)}},
		{{zap.Int("worker", 1)}, {zap.String("odd \"key\"", "v\\al\nue"), zap.Duration("d", time.Second)}},
		{{}, {zap.Bool("b", true)}},
	}
	start := time.Date(2026, 11, 24, 4, 30, 15, 123456789, time.Local)
	for ci, ctx := range contexts {
		var want, got, buffered zaptest.Buffer
		zapCore := zapcore.NewCore(zapcore.NewJSONEncoder(svclog.EncoderConfig()), &want, zapcore.InfoLevel)
		ourCore := svclog.NewJSONCore(&got, zapcore.InfoLevel)
		// Into a Writer, as svc serve logs, the line is formatted in
		// the writer's buffer instead: the same bytes.
		lw := svclog.NewWriter(&buffered, 0)
		t.Cleanup(func() { _ = lw.Close(context.Background()) })
		lwCore := svclog.NewJSONCore(lw, zapcore.InfoLevel)
		for _, fields := range ctx {
			zapCore = zapCore.With(fields)
			ourCore = ourCore.With(fields)
			lwCore = lwCore.With(fields)
		}
		fast, ok := ourCore.(*svclog.JSONCore)
		lwFast, lwOK := lwCore.(*svclog.JSONCore)
		if !ok || !lwOK {
			t.Fatalf("context %d: With returned %T and %T, not the JSON core", ci, ourCore, lwCore)
		}
		for _, q := range requests {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Method, r.URL.Path, r.RemoteAddr = q.method, q.path, q.remote
			end := start.Add(q.took)
			zapAccessLine(zapCore, "", r, q.status, q.bytes, start, end, q.id)
			al := accessLineOf(r, q.status, q.bytes, start, end, q.id)
			fast.WriteAccess(&al)
			lwFast.WriteAccess(&al)
			if err := lw.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			w, g, b := take(&want), take(&got), take(&buffered)
			if w != g || w != b {
				t.Errorf("context %d, %q %q:\n zap: %s ours: %s in a Writer: %s", ci, q.method, q.path, w, g, b)
				continue
			}
			var line map[string]any
			if err := json.Unmarshal([]byte(g), &line); err != nil {
				t.Errorf("context %d: line is not JSON: %v: %s", ci, err, g)
			}
		}
		// Any other line still goes through zap, context included.
		zapCore.Write(zapcore.Entry{Level: zapcore.WarnLevel, Time: start, Message: "other"}, []zap.Field{zap.Int("n", 1)})
		ourCore.Write(zapcore.Entry{Level: zapcore.WarnLevel, Time: start, Message: "other"}, []zap.Field{zap.Int("n", 1)})
		if w, g := take(&want), take(&got); w != g {
			t.Errorf("context %d: other line:\n zap: %s ours: %s", ci, w, g)
		}
	}
}

// TestAccessLogFastPathChoice: the middleware uses the JSON core's own
// formatting only where its line is zap's line: not for a named logger
// (whose lines carry "logger"), and not for another core.
func TestAccessLogFastPathChoice(t *testing.T) {
	var out zaptest.Buffer
	cases := []struct {
		name string
		log  *zap.Logger
		want string // a fragment of the line
	}{
		{"json core", zap.New(svclog.NewJSONCore(&out, zapcore.InfoLevel)).With(zap.Int("worker", 2)), `"msg":"request","worker":2,"method":"POST"`},
		{"named", zap.New(svclog.NewJSONCore(&out, zapcore.InfoLevel)).Named("http"), `"logger":"http","msg":"request","method":"POST"`},
		{"console", zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(svclog.EncoderConfig()), &out, zapcore.InfoLevel)), "\trequest\t{\"method\": \"POST\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusTeapot)
			}), AccessLog(c.log, nil, mustPolicy(t, "all")))
			r := httptest.NewRequest(http.MethodPost, "/predict", nil)
			r.Header.Set(RequestIDHeader, "given-id")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			line := take(&out)
			if !strings.Contains(line, c.want) || !strings.Contains(line, "given-id") || !strings.Contains(line, "418") {
				t.Errorf("line %q lacks %q, the request id or the status", line, c.want)
			}
			if got := rec.Header().Get(RequestIDHeader); got != "given-id" {
				t.Errorf("X-Request-ID answered %q, want the one given", got)
			}
		})
	}
}
