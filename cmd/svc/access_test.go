package main_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

const (
	itFileKey = "it-file-key-7f3c9a1e5b"
	itEnvKey  = "it-env-key-2d8b6f0c4a"
)

// TestAccessControl runs svc with API keys from a file and the environment
// and CORS on: every listed endpoint needs a key, the open ones do not, the
// 401s have the protocol's body and WWW-Authenticate, a preflight needs no
// key, and no key reaches the log.
func TestAccessControl(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keys.txt"), []byte("# svc API keys\n"+itFileKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "svc.yml")
	yml := "access:\n  api_keys_file: keys.txt\n  api_keys_env: SVC_API_KEYS\n  cors:\n    allowed_origins: [https://app.example.com]\n"
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServerEnv(t, []string{"SVC_API_KEYS=" + itEnvKey + ",another-env-key"}, model("classifier.onnx"), "--config", cfg)

	const (
		v1Body    = `{"input": [[5.1, 3.5, 1.4, 0.2]]}`
		v2Body    = `{"inputs":[{"name":"input","shape":[1,4],"datatype":"FP32","data":[5.1,3.5,1.4,0.2]}]}`
		promText  = "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
		openMetrc = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
	)
	type endpoint struct {
		method, path, body, accept string
		protected                  bool
		field                      string // the 401 body's field
	}
	endpoints := []endpoint{
		{"POST", "/predict", v1Body, "", true, "detail"},
		{"GET", "/metrics", "", "", true, "detail"},
		{"GET", "/metrics", "", promText, true, "detail"},
		{"GET", "/metrics", "", openMetrc, true, "detail"},
		{"POST", "/v2/models/classifier/infer", v2Body, "", true, "error"},
		{"POST", "/v2/models/classifier/versions/3/infer", v2Body, "", true, "error"},
		{"GET", "/v2/models/classifier/stats", "", "", true, "error"},
		{"GET", "/health", "", "", false, ""},
		{"GET", "/info", "", "", false, ""},
		{"GET", "/v2", "", "", false, ""},
		{"GET", "/v2/health/live", "", "", false, ""},
		{"GET", "/v2/health/ready", "", "", false, ""},
		{"GET", "/v2/models/classifier", "", "", false, ""},
		{"GET", "/v2/models/classifier/ready", "", "", false, ""},
		{"GET", "/v2/models/classifier/versions/3/ready", "", "", false, ""},
		{"GET", "/docs", "", "", false, ""},
		{"GET", "/redoc", "", "", false, ""},
		{"GET", "/openapi.json", "", "", false, ""},
	}
	if testing.Short() {
		// The fast tier has no documentation assets (make assets), without
		// which the pages answer 503: make test checks them.
		endpoints = slices.DeleteFunc(endpoints, func(e endpoint) bool { return e.path == "/docs" || e.path == "/redoc" })
	}
	for _, e := range endpoints {
		for _, auth := range []string{"", "Bearer wrong-key", "Bearer " + itFileKey, "Bearer " + itEnvKey, "Bearer another-env-key"} {
			name := e.method + " " + e.path + " " + e.accept + " [" + auth + "]"
			headers := []string{"Accept", e.accept}
			if auth != "" {
				headers = append(headers, "Authorization", auth)
			}
			ct := ""
			if e.body != "" {
				ct = "application/json"
			}
			r := s.do(e.method, e.path, ct, strings.NewReader(e.body), headers...)
			keyed := strings.HasPrefix(auth, "Bearer ") && auth != "Bearer wrong-key"
			if !e.protected || keyed {
				if r.Status != http.StatusOK {
					t.Errorf("%s: %d %s, want 200", name, r.Status, r.Body)
				}
				continue
			}
			if r.Status != http.StatusUnauthorized {
				t.Errorf("%s: %d %s, want 401", name, r.Status, r.Body)
				continue
			}
			want := "Not authenticated"
			if auth != "" {
				want = "Invalid API key"
			}
			var body map[string]string
			if err := json.Unmarshal(r.Body, &body); err != nil || len(body) != 1 || body[e.field] != want {
				t.Errorf("%s: body %s, want {%q: %q}", name, r.Body, e.field, want)
			}
			if wa := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(wa, "Bearer") {
				t.Errorf("%s: WWW-Authenticate %q", name, wa)
			}
		}
	}
	// A keyed Prometheus scrape gets the exposition.
	if r := s.do("GET", "/metrics", "", nil, "Accept", promText, "Authorization", "Bearer "+itFileKey); !strings.Contains(string(r.Body), "# TYPE") {
		t.Errorf("keyed scrape: %d %.200s", r.Status, r.Body)
	}

	// CORS preflight: no key needed; the allowed origin gets the headers,
	// the denied one does not.
	preflight := func(origin, path string) response {
		return s.do(http.MethodOptions, path, "", nil, "Origin", origin,
			"Access-Control-Request-Method", "POST",
			"Access-Control-Request-Headers", "authorization,content-type,inference-header-content-length,x-request-id")
	}
	for _, path := range []string{"/predict", "/v2/models/classifier/infer"} {
		r := preflight("https://app.example.com", path)
		if r.Status != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
			!strings.Contains(strings.ToLower(r.Header.Get("Access-Control-Allow-Headers")), "authorization") {
			t.Errorf("allowed preflight %s: %d %v", path, r.Status, r.Header)
		}
		r = preflight("https://evil.example.net", path)
		if r.Status != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("denied preflight %s: %d %v", path, r.Status, r.Header)
		}
	}
	r := s.do("POST", "/predict", "application/json", strings.NewReader(v1Body), "Origin", "https://app.example.com", "Authorization", "Bearer "+itEnvKey)
	if r.Status != 200 || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "X-Request-Id") {
		t.Errorf("CORS request: %d %v", r.Status, r.Header)
	}

	// Rejected requests are logged; no key is. (The access log is
	// written in batches: all of it is out once svc has exited.)
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("exit code %d", code)
	}
	var rejected int
	for _, l := range s.accessLogs() {
		if l["status"] == float64(401) {
			rejected++
		}
	}
	if rejected == 0 {
		t.Error("no 401 in the access log")
	}
	for _, key := range []string{itFileKey, itEnvKey, "another-env-key", "wrong-key"} {
		if strings.Contains(s.stderr.String(), key) || strings.Contains(s.stdout.String(), key) {
			t.Errorf("the key %q is in svc's output", key)
		}
	}
}

// TestAccessStartupErrors: keys asked for but missing fail start-up with
// one line; no keys configured means no check.
func TestAccessStartupErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty-keys")
	if err := os.WriteFile(empty, []byte("# none yet\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, yml string
		env       []string
		want      string
	}{
		{"missing file", "access:\n  api_keys_file: " + filepath.Join(dir, "absent") + "\n", nil,
			"access.api_keys_file: open " + filepath.Join(dir, "absent") + ": no such file or directory"},
		{"empty file", "access:\n  api_keys_file: " + empty + "\n", nil, "access: no API keys in file " + empty},
		{"unset env", "access:\n  api_keys_env: SVC_TEST_NO_SUCH_KEYS\n", nil, "access: no API keys in environment variable SVC_TEST_NO_SUCH_KEYS"},
		{"blank env", "access:\n  api_keys_env: SVC_API_KEYS\n", []string{"SVC_API_KEYS= , "}, "access: no API keys in environment variable SVC_API_KEYS"},
		{"bad env name", "access:\n  api_keys_env: $KEYS\n", nil, `line 2: access.api_keys_env must be an environment variable name`},
		{"bad origin", "access:\n  cors:\n    allowed_origins: [example.com]\n", nil, `line 3: access.cors.allowed_origins "example.com" is not an origin`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "svc.yml")
			if err := os.WriteFile(cfg, []byte(tt.yml), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := runSvc(t, tt.env, "serve", model("classifier.onnx"), "--config", cfg, "--host", "127.0.0.1", "--port", "0")
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code == 0 || len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant one line containing %q", code, stderr, tt.want)
			}
		})
	}
}

// TestAccessOffByDefault: without an access section nothing asks for a key
// and no CORS header is sent.
func TestAccessOffByDefault(t *testing.T) {
	t.Parallel()
	s := startServer(t, model("classifier.onnx"))
	for _, path := range []string{"/metrics", "/v2/models/classifier/stats"} {
		if r := s.get(path); r.Status != 200 {
			t.Errorf("%s: %d %s", path, r.Status, r.Body)
		}
	}
	if r := s.predict(`{"input": [[5.1, 3.5, 1.4, 0.2]]}`); r.Status != 200 {
		t.Errorf("/predict: %d %s", r.Status, r.Body)
	}
	r := s.do(http.MethodOptions, "/predict", "", nil, "Origin", "https://app.example.com", "Access-Control-Request-Method", "POST")
	if r.Header.Get("Access-Control-Allow-Origin") != "" || r.Status != http.StatusMethodNotAllowed {
		t.Errorf("preflight without CORS: %d %v", r.Status, r.Header)
	}
}

// TestAccessWithWorkers: every worker process checks keys (a 401 names the
// worker that refused it), and keys missing fail start-up with one line,
// not one per worker.
func TestAccessWithWorkers(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte("access:\n  api_keys_env: SVC_API_KEYS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServerEnv(t, []string{"SVC_API_KEYS=" + itEnvKey}, model("classifier.onnx"), "--config", cfg, "--workers", "2")
	body := `{"input": [[5.1, 3.5, 1.4, 0.2]]}`
	for i := 0; i < 4; i++ {
		r := s.predict(body)
		if r.Status != http.StatusUnauthorized || r.Detail(t) != "Not authenticated" || r.Header.Get("X-Worker-Id") == "" {
			t.Fatalf("no key: %d %s %v", r.Status, r.Body, r.Header)
		}
		if r := s.do("POST", "/predict", "application/json", strings.NewReader(body), "Authorization", "Bearer "+itEnvKey); r.Status != 200 {
			t.Fatalf("key: %d %s", r.Status, r.Body)
		}
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if strings.Contains(s.stderr.String(), itEnvKey) {
		t.Error("the key is in svc's output")
	}

	code, _, stderr := runSvc(t, nil, "serve", model("classifier.onnx"), "--config", cfg, "--workers", "2", "--host", "127.0.0.1", "--port", "0")
	oneLineError(t, code, stderr, 1, "access: no API keys in environment variable SVC_API_KEYS")
}
