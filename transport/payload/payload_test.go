package payload

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/protocol"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/svc-dev/svc/core/config"
)

// receiver is a CloudEvents receiver built on the SDK: it answers each
// event with answer's result, and keeps those it accepts.
type receiver struct {
	url    string
	mu     sync.Mutex
	events []cloudevents.Event
	got    chan struct{}
	stop   func()
}

func startReceiver(t *testing.T, answer func(cloudevents.Event) protocol.Result) *receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p, err := cehttp.New(cehttp.WithListener(ln))
	if err != nil {
		t.Fatal(err)
	}
	c, err := cloudevents.NewClient(p)
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{url: "http://" + ln.Addr().String() + "/", got: make(chan struct{}, 1<<16)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- c.StartReceiver(ctx, func(_ context.Context, e cloudevents.Event) protocol.Result {
			res := answer(e)
			if protocol.IsACK(res) {
				r.mu.Lock()
				r.events = append(r.events, e)
				r.mu.Unlock()
				r.got <- struct{}{}
			}
			return res
		})
	}()
	r.stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("receiver: %v", err)
		}
	})
	t.Cleanup(r.stop)
	return r
}

func accept(cloudevents.Event) protocol.Result { return cloudevents.ResultACK }

func settings(t *testing.T, raw string, edit func(*config.LoggerSettings)) config.LoggerSettings {
	t.Helper()
	s, err := config.ModelLogger{URL: raw}.Settings()
	if err != nil {
		t.Fatal(err)
	}
	s.Timeout = time.Minute
	if edit != nil {
		edit(&s)
	}
	return s
}

func newLogger(t *testing.T, s config.LoggerSettings) *Logger {
	t.Helper()
	l, err := New(Options{LoggerSettings: s, Source: "m", Registerer: prometheus.NewRegistry(), backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	return l
}

func event(i int, typ string) *Event {
	return &Event{ID: "id" + strconv.Itoa(i), Type: typ, Source: "m", Time: time.Now(),
		ContentType: "application/json", Data: fmt.Appendf(nil, `{"i":%d}`, i),
		Header: http.Header{"X-Trace": {"t" + strconv.Itoa(i)}}}
}

// TestReceiverGetsEveryEventOnce submits requests and responses from many
// goroutines and checks that the SDK's receiver gets each once, with the
// attributes KServe's logger sends, and the request's headers beside.
func TestReceiverGetsEveryEventOnce(t *testing.T) {
	r := startReceiver(t, accept)
	const n = 300
	l := newLogger(t, settings(t, r.url, nil))
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			l.Submit(event(i, TypeRequest))
			l.Submit(event(i, TypeResponse))
		})
	}
	wg.Wait()
	for range 2 * n {
		<-r.got
	}
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, e := range r.events {
		seen[e.Type()+" "+e.ID()]++
		if e.Source() != "m" || e.SpecVersion() != "1.0" || e.Time().IsZero() || e.DataContentType() != "application/json" {
			t.Fatalf("event %s: source %q specversion %q time %v content type %q", e.ID(), e.Source(), e.SpecVersion(), e.Time(), e.DataContentType())
		}
		var body struct{ I int }
		if err := json.Unmarshal(e.Data(), &body); err != nil || "id"+strconv.Itoa(body.I) != e.ID() {
			t.Fatalf("event %s: data %s (%v)", e.ID(), e.Data(), err)
		}
	}
	for i := range n {
		for _, typ := range []string{TypeRequest, TypeResponse} {
			if c := seen[typ+" id"+strconv.Itoa(i)]; c != 1 {
				t.Fatalf("%s id%d received %d times, want once", typ, i, c)
			}
		}
	}
	if got := counterValue(l.sent); got != 2*n {
		t.Fatalf("svc_logger_sent_total = %v, want %d", got, 2*n)
	}
}

// TestUndeliveredEventsAreCounted: a receiver that refuses, one that is
// down, one that never answers. Submit returns at once in every case, the
// events are dropped with their reason, and Close returns by the drain
// deadline.
func TestUndeliveredEventsAreCounted(t *testing.T) {
	stuck := make(chan struct{})
	defer close(stuck)
	refusing := startReceiver(t, func(cloudevents.Event) protocol.Result {
		return cehttp.NewResult(http.StatusBadRequest, "no")
	})
	failing := startReceiver(t, func(cloudevents.Event) protocol.Result {
		return cehttp.NewResult(http.StatusServiceUnavailable, "later")
	})
	slow := startReceiver(t, func(cloudevents.Event) protocol.Result {
		<-stuck
		return cloudevents.ResultACK
	})
	down, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downURL := "http://" + down.Addr().String() + "/"
	_ = down.Close()
	// A receiver that answers has every event tried to the end: the drain
	// deadline is far off (a busy machine must not turn refusals into
	// shutdown drops); the one that never answers is cut at 50ms.
	tests := []struct {
		name   string
		url    string
		queue  int
		n      int
		drain  time.Duration
		reason string
		want   func(float64) bool
	}{
		{"refusing", refusing.url, 100, 20, time.Minute, ReasonRefused, func(v float64) bool { return v == 20 }},
		{"failing", failing.url, 100, 5, time.Minute, ReasonFailed, func(v float64) bool { return v == 5 }},
		{"down", downURL, 100, 5, time.Minute, ReasonFailed, func(v float64) bool { return v == 5 }},
		// Four senders hold one event each, the queue two: the rest of
		// the 50 are dropped at once, what is held at the deadline then.
		{"slow", slow.url, 2, 50, 50 * time.Millisecond, ReasonQueueFull, func(v float64) bool { return v >= 50-senders-2 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLogger(t, settings(t, tt.url, func(s *config.LoggerSettings) {
				s.Queue, s.Retries, s.Drain = tt.queue, 2, tt.drain
			}))
			for i := range tt.n {
				l.Submit(event(i, TypeRequest))
			}
			if err := l.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if v := l.Dropped(tt.reason); !tt.want(v) {
				t.Fatalf("dropped{reason=%s} = %v", tt.reason, v)
			}
			total := 0.0
			for _, r := range []string{ReasonQueueFull, ReasonRefused, ReasonFailed, ReasonShutdown} {
				total += l.Dropped(r)
			}
			if total+counterValue(l.sent) != float64(tt.n) {
				t.Fatalf("dropped %v + sent %v != %d submitted", total, counterValue(l.sent), tt.n)
			}
			l.Submit(event(0, TypeRequest))
			if l.Dropped(ReasonShutdown) < 1 {
				t.Fatal("an event submitted after Close was not counted as dropped")
			}
		})
	}
}

// TestFileSinkRotates writes events past max_file_size and reads every
// line back, from the file and its rotated predecessors.
func TestFileSinkRotates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payloads.jsonl")
	u := (&url.URL{Scheme: "file", Path: path}).String()
	l := newLogger(t, settings(t, u, func(s *config.LoggerSettings) { s.MaxFileSize, s.MaxFiles = 1024, 100 }))
	const n = 100
	for i := range n {
		l.Submit(event(i, TypeRequest))
	}
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(path + "*")
	if len(files) < 5 {
		t.Fatalf("files %v: want the file rotated past 1024 bytes", files)
	}
	seen := map[string]bool{}
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 1024 {
			t.Fatalf("%s holds %d bytes, over max_file_size 1024", f, st.Size())
		}
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var e struct {
				SpecVersion, ID, Type, Source, DataContentType, Headers string
				Data                                                    struct{ I int }
			}
			var headers map[string][]string
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil || json.Unmarshal([]byte(e.Headers), &headers) != nil {
				t.Fatalf("%s: %q: %v", f, sc.Text(), err)
			}
			if e.SpecVersion != "1.0" || e.Type != TypeRequest || e.Source != "m" || "id"+strconv.Itoa(e.Data.I) != e.ID ||
				headers["X-Trace"][0] != "t"+strconv.Itoa(e.Data.I) {
				t.Fatalf("%s: line %s", f, sc.Text())
			}
			seen[e.ID] = true
		}
		_ = fh.Close()
	}
	if len(seen) != n {
		t.Fatalf("read %d events back, want %d", len(seen), n)
	}
}

// TestHeadersRedacted: the API key's header and the listed ones are never
// logged, whatever their case.
func TestHeadersRedacted(t *testing.T) {
	l := &Logger{redact: redactions([]string{"X-Secret"}, "X-Api-Key")}
	got := l.headers(http.Header{"Authorization": {"Bearer k"}, "X-Secret": {"s"}, "x-api-key": {"k"},
		"Cookie": {"c"}, "Ce-Id": {"forged"}, "X-Kept": {"v"}, "Content-Length": {"3"}})
	if len(got) != 1 || got.Get("X-Kept") != "v" {
		t.Fatalf("logged headers %v, want X-Kept alone", got)
	}
}

// TestDropsWarnedOncePerMinute: many drops in a burst make one warning,
// which counts them.
func TestDropsWarnedOncePerMinute(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	path := filepath.Join(t.TempDir(), "p.jsonl")
	s := settings(t, (&url.URL{Scheme: "file", Path: path}).String(), func(s *config.LoggerSettings) { s.QueueBytes = 1 })
	l, err := New(Options{LoggerSettings: s, Source: "m", Log: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		l.Submit(event(i, TypeRequest)) // each over queue_bytes: dropped
	}
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	warnings := logs.FilterMessage("payload logger dropped events").All()
	if len(warnings) != 1 || l.Dropped(ReasonQueueFull) != 50 {
		t.Fatalf("%d warnings, %v dropped; want one warning for 50", len(warnings), l.Dropped(ReasonQueueFull))
	}
	if n := warnings[0].ContextMap()["dropped"]; n != int64(1) {
		t.Fatalf("the first warning counts %v drops, want 1 (the first)", n)
	}
}

// TestFileSinkCannotOpen: a file sink whose file cannot be opened (its
// folder missing, or the path a folder) fails New with the path, so that
// start-up fails rather than logging nothing; no goroutine is left.
func TestFileSinkCannotOpen(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{filepath.Join(dir, "missing", "payloads.jsonl"), dir} {
		u := (&url.URL{Scheme: "file", Path: path}).String()
		_, err := New(Options{LoggerSettings: settings(t, u, nil), Source: "m", Registerer: prometheus.NewRegistry()})
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("New with %s: %v, want an error naming the path", path, err)
		}
	}
}

// TestFullQueueKeepsNoBodies: while the queue is full (a receiver that
// never answers holds every sender), a request that begins keeps neither
// body (it will be dropped as the queue's), and one that begins with room
// in the queue keeps both.
func TestFullQueueKeepsNoBodies(t *testing.T) {
	stuck := make(chan struct{})
	defer close(stuck)
	slow := startReceiver(t, func(cloudevents.Event) protocol.Result {
		<-stuck
		return cloudevents.ResultACK
	})
	request := func(l *Logger) *capture {
		c := &capture{l: l}
		c.Inference()
		if _, err := io.ReadAll(&teeBody{ReadCloser: io.NopCloser(strings.NewReader(`{"x": [1, 2, 3]}`)), c: c}); err != nil {
			t.Fatal(err)
		}
		if _, err := (&teeWriter{ResponseWriter: httptest.NewRecorder(), c: c}).Write([]byte(`{"y": [4]}`)); err != nil {
			t.Fatal(err)
		}
		return c
	}
	l := newLogger(t, settings(t, slow.url, func(s *config.LoggerSettings) {
		s.Queue, s.Drain = 1, 50*time.Millisecond
	}))
	if c := request(l); !c.armed || c.over || c.in.String() != `{"x": [1, 2, 3]}` || c.out.String() != `{"y": [4]}` {
		t.Fatalf("with room in the queue: armed %v, over %v, kept %q and %q", c.armed, c.over, c.in.String(), c.out.String())
	}
	// Every sender holds one event and the queue one more: then it stays
	// full until the receiver answers.
	deadline := time.Now().Add(time.Minute)
	for submitted := 0; submitted-int(l.Dropped(ReasonQueueFull)) < senders+1; submitted++ {
		if time.Now().After(deadline) {
			t.Fatalf("the queue did not fill: %d submitted, %v dropped", submitted, l.Dropped(ReasonQueueFull))
		}
		l.Submit(event(submitted, TypeRequest))
	}
	if c := request(l); !c.armed || !c.over || c.in.Len() != 0 || c.out.Len() != 0 {
		t.Fatalf("with the queue full: armed %v, over %v, kept %d and %d bytes", c.armed, c.over, c.in.Len(), c.out.Len())
	}
}
