package repository

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type runner struct{ version string }

func (r runner) Info() core.ModelInfo { return core.ModelInfo{Version: r.version} }
func (runner) Specs() []tensor.Spec   { return nil }
func (runner) Predict(context.Context, []*tensor.Tensor) (core.Result, error) {
	return nil, errors.New("not for running")
}

// reloader answers every load with err.
type reloader struct{ err error }

func (r reloader) Reload(context.Context) (core.ReloadResult, error) {
	return core.ReloadResult{Version: "9"}, r.err
}

func serve(h *Handler, path, body string) (int, string) {
	rec := httptest.NewRecorder()
	transport.NewRouter(h.Routes(), writeError).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	return rec.Code, rec.Body.String()
}

// TestIndexStates: the index in each state of the model and of its
// reloads.
func TestIndexStates(t *testing.T) {
	gate := make(chan struct{})
	loads := 0
	load := func() (core.Loaded, error) {
		loads++
		switch loads {
		case 1:
			<-gate
			return core.Loaded{Runner: runner{"1"}}, nil
		case 2:
			return core.Loaded{}, errors.New("no such file")
		default:
			<-gate
			return core.Loaded{Runner: runner{"3"}}, nil
		}
	}
	m := core.NewModel("m")
	h := New(m, nil, nil)
	index := func() string {
		_, body := serve(h, PathIndex, "")
		return body
	}
	if got := index(); got != `[{"name":"m","version":"","state":"LOADING","reason":"loading"}]` {
		t.Errorf("before the load: %s", got)
	}
	m.Start(load, nil, nil, nil)
	gate <- struct{}{}
	<-m.Done()
	if got := index(); got != `[{"name":"m","version":"1","state":"READY","reason":""}]` {
		t.Errorf("ready: %s", got)
	}
	if code, body := serve(h, "/v2/repository/models/m/load", ""); code != http.StatusBadRequest || !strings.Contains(body, "no such file") {
		t.Errorf("failed load: %d %s", code, body)
	}
	want := `[{"name":"m","version":"1","state":"READY","reason":""},{"name":"m","version":"","state":"UNAVAILABLE","reason":"reload of model 'm' failed; the previous version keeps serving: no such file"}]`
	if got := index(); got != want {
		t.Errorf("after a failed reload: %s", got)
	}
	if _, body := serve(h, PathIndex, `{"ready": true}`); body != `[{"name":"m","version":"1","state":"READY","reason":""}]` {
		t.Errorf("ready only: %s", body)
	}
	done := make(chan string)
	go func() {
		_, body := serve(h, "/v2/repository/models/m/load", "")
		done <- body
	}()
	for !m.ReloadStatus().Loading {
		// The load request's reload has begun once the status says so.
		select {
		case body := <-done:
			t.Fatalf("load ended early: %s", body)
		default:
			runtime.Gosched()
		}
	}
	if got := index(); !strings.Contains(got, `"state":"LOADING","reason":"reloading"`) {
		t.Errorf("while reloading: %s", got)
	}
	gate <- struct{}{}
	if body := <-done; body != `{"name":"m","version":"3","state":"READY"}` {
		t.Errorf("load: %s", body)
	}
	if got := index(); got != `[{"name":"m","version":"3","state":"READY","reason":""}]` {
		t.Errorf("after the reload: %s", got)
	}
	m.Drain()
	if got := index(); got != `[{"name":"m","version":"3","state":"UNAVAILABLE","reason":"draining: the server is shutting down"}]` {
		t.Errorf("draining: %s", got)
	}
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	failed := core.NewModel("f")
	failed.Start(func() (core.Loaded, error) { return core.Loaded{}, errors.New("bad file") }, nil, nil, nil)
	<-failed.Done()
	if _, body := serve(New(failed, nil, nil), PathIndex, ""); body != `[{"name":"f","version":"","state":"UNAVAILABLE","reason":"bad file"}]` {
		t.Errorf("failed: %s", body)
	}
}

// TestLoadAnswers: each way a reload can end, as the load answers it.
func TestLoadAnswers(t *testing.T) {
	m := core.NewModel("m")
	m.Start(func() (core.Loaded, error) { return core.Loaded{Runner: runner{"1"}}, nil }, nil, nil, nil)
	<-m.Done()
	defer m.Close(context.Background())
	tests := []struct {
		name   string
		err    error
		status int
		want   string
	}{
		{"success", nil, http.StatusOK, `{"name":"m","version":"9","state":"READY"}`},
		{"the model fails", &core.ReloadError{Model: "m", Err: errors.New("warm-up: boom")}, http.StatusBadRequest, "warm-up: boom"},
		{"not ready", &core.NotReadyError{Model: "m", State: core.StateLoading}, http.StatusServiceUnavailable, "is loading"},
		{"shutting down", core.ErrReloadClosed, http.StatusServiceUnavailable, "shutting down"},
		{"request ended", context.Canceled, http.StatusServiceUnavailable, "The reload goes on"},
		{"supervisor unreachable", errors.New("ask supervisor.sock to reload: connection refused"), http.StatusServiceUnavailable, "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := serve(New(m, reloader{tt.err}, nil), "/v2/repository/models/m/load", "")
			if code != tt.status || !strings.Contains(body, tt.want) {
				t.Fatalf("%d %s, want %d with %q", code, body, tt.status, tt.want)
			}
			if tt.err != nil {
				var e struct{ Error string }
				if json.Unmarshal([]byte(body), &e) != nil || e.Error == "" {
					t.Fatalf("not an {\"error\"} body: %s", body)
				}
			}
		})
	}
}

// TestRequestBodies: the routes read their bodies as every frontend does:
// gzip and a byte order mark are taken, a body over the limit, one in an
// encoding svc does not decode and one that is not JSON are refused, each
// with its status and the protocol's {"error"}.
func TestRequestBodies(t *testing.T) {
	m := core.NewModel("m")
	m.Start(func() (core.Loaded, error) { return core.Loaded{Runner: runner{"1"}}, nil }, nil, nil, nil)
	<-m.Done()
	defer m.Close(context.Background())
	h := transport.NewRouter(New(m, reloader{}, nil).Routes(), writeError)
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write([]byte(`{"ready": true}`))
	_ = zw.Close()
	tests := []struct {
		name, path, encoding, body string
		status                     int
		want                       string
	}{
		{"gzip", PathIndex, "gzip", zipped.String(), http.StatusOK, `"state":"READY"`},
		{"byte order mark", "/v2/repository/models/m/load", "", "\ufeff{}", http.StatusOK, `"version":"9"`},
		{"over the limit", PathIndex, "", `{"ready": true, "pad": "` + strings.Repeat("x", maxRequest) + `"}`, http.StatusRequestEntityTooLarge, "the limit is 64 KiB"},
		{"unknown encoding", "/v2/repository/models/m/load", "br", "{}", http.StatusUnsupportedMediaType, "Unsupported Content-Encoding 'br'"},
		{"broken gzip", PathIndex, "gzip", "{}", http.StatusBadRequest, "gzip"},
		{"not JSON", PathIndex, "", "ready", http.StatusBadRequest, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, tt.path, strings.NewReader(tt.body))
			if tt.encoding != "" {
				req.Header.Set("Content-Encoding", tt.encoding)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.want) {
				t.Fatalf("%d %s, want %d with %q", rec.Code, rec.Body, tt.status, tt.want)
			}
			var e struct{ Error string }
			if tt.status != http.StatusOK && (json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error == "") {
				t.Fatalf("not an {\"error\"} body: %s", rec.Body)
			}
		})
	}
}
