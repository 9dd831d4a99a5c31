package transport

import (
	"context"
	"encoding/json"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
)

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
		zapCore := zapcore.NewCore(zapcore.NewJSONEncoder(LogEncoderConfig()), &want, zapcore.InfoLevel)
		ourCore := NewJSONCore(&got, zapcore.InfoLevel)
		// Into a LogWriter, as svc serve logs, the line is formatted in
		// the writer's buffer instead: the same bytes.
		lw := NewLogWriter(&buffered, 0)
		t.Cleanup(func() { _ = lw.Close(context.Background()) })
		lwCore := NewJSONCore(lw, zapcore.InfoLevel)
		for _, fields := range ctx {
			zapCore = zapCore.With(fields)
			ourCore = ourCore.With(fields)
			lwCore = lwCore.With(fields)
		}
		fast, ok := ourCore.(*jsonCore)
		lwFast, lwOK := lwCore.(*jsonCore)
		if !ok || !lwOK {
			t.Fatalf("context %d: With returned %T and %T, not the JSON core", ci, ourCore, lwCore)
		}
		for _, q := range requests {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Method, r.URL.Path, r.RemoteAddr = q.method, q.path, q.remote
			end := start.Add(q.took)
			zapAccessLine(zapCore, "", r, q.status, q.bytes, start, end, q.id)
			fast.writeAccess(r, q.status, q.bytes, start, end, q.id)
			lwFast.writeAccess(r, q.status, q.bytes, start, end, q.id)
			if err := lw.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			w, g, b := take(&want), take(&got), take(&buffered)
			if w != g || w != b {
				t.Errorf("context %d, %q %q:\n zap: %s ours: %s in a LogWriter: %s", ci, q.method, q.path, w, g, b)
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

// TestAppendJSONStringMatchesZap: random byte strings, weighted towards the
// bytes that need escaping and towards multi-byte and broken UTF-8, are
// escaped exactly as zap escapes them.
func TestAppendJSONStringMatchesZap(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(1, 2))
	alphabet := []string{"a", "Z", "0", " ", `"`, `\`, "\n", "\r", "\t", "\x00", "\x1f", "\x7f", "é", "日", "😀", "\xff", "\xe6\x97", "\xf0\x9f"}
	enc := zapcore.NewJSONEncoder(zapcore.EncoderConfig{LineEnding: "\n"})
	for i := 0; i < 5000; i++ {
		var sb strings.Builder
		for n := rng.IntN(12); n > 0; n-- {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := sb.String()
		buf, err := enc.EncodeEntry(zapcore.Entry{}, []zap.Field{zap.String("k", s)})
		if err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(buf.String()), `{"k":`), "}")
		buf.Free()
		if got := string(appendJSONString(nil, s)); got != want {
			t.Fatalf("%q: got %s, zap writes %s", s, got, want)
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
		{"json core", zap.New(NewJSONCore(&out, zapcore.InfoLevel)).With(zap.Int("worker", 2)), `"msg":"request","worker":2,"method":"POST"`},
		{"named", zap.New(NewJSONCore(&out, zapcore.InfoLevel)).Named("http"), `"logger":"http","msg":"request","method":"POST"`},
		{"console", zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(LogEncoderConfig()), &out, zapcore.InfoLevel)), "\trequest\t{\"method\": \"POST\""},
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

// TestAppendSecondsMatchesStrconv: durations are written as zap writes
// them, strconv's shortest form of the seconds, across the integer path
// (under a second) and the float path around it.
func TestAppendSecondsMatchesStrconv(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(3, 4))
	ds := []time.Duration{0, 1, 9, 10, 100, time.Microsecond, 183 * time.Microsecond, time.Millisecond,
		999999999, 100000000, 120000000, time.Second, time.Second + 1, -1, -time.Second, 90 * time.Minute, 1<<63 - 1}
	for i := 0; i < 200000; i++ {
		ds = append(ds, time.Duration(rng.Int64N(int64(time.Second))))
	}
	for i := 0; i < 2000; i++ {
		ds = append(ds, time.Duration(rng.Int64N(int64(3*time.Second))), time.Duration(rng.Int64N(1000))*time.Millisecond)
	}
	for _, d := range ds {
		want := strconv.AppendFloat(nil, d.Seconds(), 'f', -1, 64)
		if got := appendSeconds(nil, d); string(got) != string(want) {
			t.Fatalf("%d ns: got %s, strconv writes %s", int64(d), got, want)
		}
	}
}
