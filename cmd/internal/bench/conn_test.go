package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-dev/svc/transport/oip"
)

// seen is what a test server saw: each request, and the connections
// opened.
type seen struct {
	mu    sync.Mutex
	reqs  []seenRequest
	conns int
}

type seenRequest struct {
	method, path, contentType, length, headerLen string
	body                                         string
	remote                                       string
}

// recordingServer answers every request with answer, after recording it.
func recordingServer(t *testing.T, answer http.HandlerFunc) (*httptest.Server, *seen) {
	t.Helper()
	s := &seen{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, seenRequest{r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Content-Length"),
			r.Header.Get(oip.HeaderInferenceHeaderLength), string(body), r.RemoteAddr})
		s.mu.Unlock()
		answer(w, r)
	}))
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, s
}

func (s *seen) connCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

func ok(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"y":[1]}`) }

// TestConnLoaderRequests: each worker sends its bodies in turn, with the
// headers net/http's client would send, on one connection of its own.
func TestConnLoaderRequests(t *testing.T) {
	bodies := [][]byte{[]byte(`{"x":[1]}`), []byte(`{"x":[2,3]}`), []byte("header and \x00\x01 binary")}
	tests := []struct {
		name      string
		header    func(k int) http.Header
		path      string
		wantType  string
		headerLen string
	}{
		{"v1", func(int) http.Header { return http.Header{"Content-Type": {"application/json"}} }, "/predict", "application/json", ""},
		{"v2 binary", func(int) http.Header { return oip.RequestHeader(6) }, "/v2/models/m/infer", "application/octet-stream", "6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, s := recordingServer(t, ok)
			const workers, each = 3, 4
			l, err := newConnLoader(srv.URL, tt.path, bodies, tt.header, workers, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer l.close()
			op := l.op()
			for w := range workers {
				for seq := range int64(each) {
					status, err := op(context.Background(), w, seq)
					if status != http.StatusOK || err != nil {
						t.Fatalf("worker %d request %d: %d, %v", w, seq, status, err)
					}
					s.mu.Lock()
					got := s.reqs[len(s.reqs)-1]
					s.mu.Unlock()
					want := bodies[(int64(w)+seq)%int64(len(bodies))]
					if got.method != http.MethodPost || got.path != tt.path || got.contentType != tt.wantType ||
						got.length != fmt.Sprint(len(want)) || got.headerLen != tt.headerLen || got.body != string(want) {
						t.Fatalf("worker %d request %d: server saw %+v, want body %q", w, seq, got, want)
					}
				}
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if c := s.conns; c != workers {
				t.Errorf("%d connections for %d workers", c, workers)
			}
			remotes := map[string]int{}
			for _, r := range s.reqs {
				remotes[r.remote]++
			}
			for r, n := range remotes {
				if n != each {
					t.Errorf("connection %s carried %d requests, want %d", r, n, each)
				}
			}
		})
	}
}

// TestConnLoaderFailures: refused requests are errors with the server's
// detail, a connection the server closes or that times out is replaced,
// and the end of the run's context unblocks a request at once.
func TestConnLoaderFailures(t *testing.T) {
	body := [][]byte{[]byte(`{}`)}
	jsonHeader := func(int) http.Header { return http.Header{"Content-Type": {"application/json"}} }
	send := func(t *testing.T, l *connLoader, ctx context.Context) (int, error) {
		t.Helper()
		return l.op()(ctx, 0, 0)
	}

	// A first request refused, then one answered: the refusal's error
	// carries the server's detail, and its connection is kept or, when
	// the server closes it, replaced.
	for _, tt := range []struct {
		name    string
		refuse  http.HandlerFunc
		status  int
		message string
		conns   int
	}{
		{"refused, JSON detail, connection kept", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"detail": "Missing required input: x"}`)
		}, http.StatusBadRequest, "status 400: Missing required input: x", 1},
		{"refused, plain text, connection closed", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "close")
			http.Error(w, "  overloaded\n  try later ", http.StatusServiceUnavailable)
		}, http.StatusServiceUnavailable, "status 503: overloaded try later", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int32
			srv, s := recordingServer(t, func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) == 1 {
					tt.refuse(w, r)
					return
				}
				ok(w, r)
			})
			l, err := newConnLoader(srv.URL, "/predict", body, jsonHeader, 1, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer l.close()
			status, err := send(t, l, context.Background())
			if status != tt.status || err == nil || err.Error() != tt.message {
				t.Fatalf("got %d, %v; want %d, %q", status, err, tt.status, tt.message)
			}
			if status, err := send(t, l, context.Background()); status != http.StatusOK || err != nil {
				t.Fatalf("after the refusal: %d, %v", status, err)
			}
			if c := s.connCount(); c != tt.conns {
				t.Errorf("%d connections, want %d", c, tt.conns)
			}
		})
	}

	t.Run("timeout, then a new connection", func(t *testing.T) {
		release := make(chan struct{})
		var n atomic.Int32
		srv, s := recordingServer(t, func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) == 1 {
				<-release
			}
			ok(w, r)
		})
		defer close(release)
		l, err := newConnLoader(srv.URL, "/predict", body, jsonHeader, 1, 200*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		defer l.close()
		t0 := time.Now()
		status, err := send(t, l, context.Background())
		var ne net.Error
		if status != 0 || err == nil || !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("got %d, %v; want a timeout", status, err)
		}
		if d := time.Since(t0); d > 5*time.Second {
			t.Fatalf("the timeout took %v", d)
		}
		if status, err := send(t, l, context.Background()); status != http.StatusOK || err != nil {
			t.Fatalf("after the timeout: %d, %v", status, err)
		}
		if c := s.connCount(); c != 2 {
			t.Errorf("%d connections, want a second one after the timeout", c)
		}
	})

	t.Run("cancelled mid-request", func(t *testing.T) {
		release, arrived := make(chan struct{}), make(chan struct{})
		srv, _ := recordingServer(t, func(w http.ResponseWriter, r *http.Request) { close(arrived); <-release; ok(w, r) })
		defer close(release)
		l, err := newConnLoader(srv.URL, "/predict", body, jsonHeader, 1, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		defer l.close()
		ctx, cancel := context.WithCancel(context.Background())
		// Cancelled once the server has the request, which it never answers.
		go func() { <-arrived; cancel() }()
		t0 := time.Now()
		if status, err := send(t, l, ctx); status != 0 || err == nil {
			t.Fatalf("got %d, %v", status, err)
		}
		if d := time.Since(t0); d > 10*time.Second {
			t.Fatalf("the cancelled request took %v", d)
		}
		// A cancelled context sends nothing more.
		if _, err := send(t, l, ctx); err == nil {
			t.Fatal("a request went out after the cancel")
		}
	})

	t.Run("idle connection closed by the server", func(t *testing.T) {
		srv, s := recordingServer(t, ok)
		l, err := newConnLoader(srv.URL, "/predict", body, jsonHeader, 1, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer l.close()
		l.staleAfter = -1 // every idle connection is checked
		if status, err := send(t, l, context.Background()); status != http.StatusOK || err != nil {
			t.Fatalf("first: %d, %v", status, err)
		}
		srv.CloseClientConnections()
		// Wait until the close has reached the worker's connection: its
		// next read finds the end of the stream (a read at the end reads
		// it again, so the loader's check sees it too).
		wc := &l.conns[0]
		_ = wc.c.SetReadDeadline(time.Now().Add(time.Minute))
		if _, err := wc.br.Peek(1); err != io.EOF {
			t.Fatalf("the worker's connection after the server closed it: %v, want EOF", err)
		}
		_ = wc.c.SetReadDeadline(time.Time{})
		if status, err := send(t, l, context.Background()); status != http.StatusOK || err != nil {
			t.Fatalf("after the server closed the idle connection: %d, %v", status, err)
		}
		if c := s.connCount(); c != 2 {
			t.Errorf("%d connections, want 2", c)
		}
	})

	t.Run("idle connection still open is kept", func(t *testing.T) {
		srv, s := recordingServer(t, ok)
		l, err := newConnLoader(srv.URL, "/predict", body, jsonHeader, 1, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer l.close()
		l.staleAfter = -1 // every idle connection is checked
		for i := range 3 {
			if status, err := send(t, l, context.Background()); status != http.StatusOK || err != nil {
				t.Fatalf("request %d: %d, %v", i, status, err)
			}
		}
		if c := s.connCount(); c != 1 {
			t.Errorf("%d connections for three requests on an open one, want 1", c)
		}
	})

	t.Run("nobody listening", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		l, err := newConnLoader("http://"+addr, "/predict", body, jsonHeader, 1, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer l.close()
		if status, err := send(t, l, context.Background()); status != 0 || err == nil || !strings.Contains(err.Error(), "POST /predict: dial tcp") {
			t.Fatalf("got %d, %v", status, err)
		}
	})
}

// TestNewConnLoaderRefuses what it cannot send: another scheme than
// http://, no bodies, a URL that does not parse.
func TestNewConnLoaderRefuses(t *testing.T) {
	header := func(int) http.Header { return nil }
	for _, tt := range []struct {
		name, base string
		bodies     [][]byte
		want       string
	}{
		{"https", "https://127.0.0.1:1", [][]byte{[]byte(`{}`)}, "not an http:// URL"},
		{"no bodies", "http://127.0.0.1:1", nil, "no request bodies"},
		{"bad URL", "http://127.0.0.1:bad port", [][]byte{[]byte(`{}`)}, "invalid port"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if l, err := newConnLoader(tt.base, "/predict", tt.bodies, header, 1, time.Second); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("newConnLoader(%q) = %v, %v; want an error with %q", tt.base, l, err, tt.want)
			}
		})
	}
}
