package access

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/transport"
)

const (
	fileKey = "file-key-0123456789"
	envKey  = "env-key-abcdef"
)

func writeKeys(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

// served answers 200 "ok" on every path, as the router would.
var served = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })

func TestIsOpen(t *testing.T) {
	tests := []struct {
		give string
		want bool
	}{
		{"/health", true},
		{"/info", true},
		{"/docs", true},
		{"/docs/assets/swagger-ui.css", true},
		{"/redoc", true},
		{"/openapi.json", true},
		{"/v2", true},
		{"/v2/health/live", true},
		{"/v2/health/ready", true},
		{"/v2/models/iris", true},
		{"/v2/models/iris/ready", true},
		{"/v2/models/iris/versions/1", true},
		{"/v2/models/iris/versions/1/ready", true},
		{"/predict", false},
		{"/metrics", false},
		{"/v2/models/iris/infer", false},
		{"/v2/models/iris/versions/1/infer", false},
		{"/v2/models/iris/stats", false},
		{"/v2/models/iris/versions/1/stats", false},
		{"/v2/models//ready", false},
		{"/v2/models/", false},
		{"/v2/", false},
		{"/health/x", false},
		{"/healthz", false},
		{"/docs/x", false},
		{"/", false},
		{"/nope", false},
		{"/docs/assets/../../predict", false},
		{"/docs/assets//x", false},
		{"//health", false},
		{"/v2/models/./ready", false},
	}
	for _, tt := range tests {
		if got := IsOpen(tt.give); got != tt.want {
			t.Errorf("IsOpen(%q) = %v, want %v", tt.give, got, tt.want)
		}
	}
}

// TestRequireKey: each path with no key, a wrong key, a malformed header and
// each source's key, with keys from a file, the environment or both.
func TestRequireKey(t *testing.T) {
	file := writeKeys(t, "# svc keys\n\n  "+fileKey+"  \n# retired-key\n")
	sources := []struct {
		name string
		cfg  config.Access
		good []string // keys accepted
		bad  []string // keys refused
	}{
		{"file", config.Access{APIKeysFile: file}, []string{fileKey}, []string{envKey, "retired-key", "# svc keys"}},
		{"env", config.Access{APIKeysEnv: "SVC_API_KEYS"}, []string{envKey, "second"}, []string{fileKey}},
		{"both", config.Access{APIKeysFile: file, APIKeysEnv: "SVC_API_KEYS"}, []string{fileKey, envKey, "second"}, []string{"retired-key"}},
	}
	paths := []struct {
		method, path string
		open         bool
		field        string
	}{
		{"POST", "/predict", false, "detail"},
		{"GET", "/metrics", false, "detail"},
		{"POST", "/v2/models/m/infer", false, "error"},
		{"POST", "/v2/models/m/versions/1/infer", false, "error"},
		{"GET", "/v2/models/m/stats", false, "error"},
		{"GET", "/nope", false, "detail"},
		{"GET", "/health", true, ""},
		{"GET", "/info", true, ""},
		{"GET", "/v2/health/ready", true, ""},
		{"GET", "/v2/models/m", true, ""},
		{"GET", "/openapi.json", true, ""},
	}
	for _, src := range sources {
		mw, err := New(src.cfg, env(map[string]string{"SVC_API_KEYS": " " + envKey + ", ,second"}))
		if err != nil {
			t.Fatalf("%s: %v", src.name, err)
		}
		h := mw(served)
		for _, p := range paths {
			type attempt struct {
				auth string
				ok   bool
				msg  string
			}
			attempts := []attempt{
				{"", p.open, MsgMissing},
				{"Basic " + src.good[0], p.open, MsgMissing},
				{"Bearer ", p.open, MsgMissing},
			}
			for _, k := range src.good {
				attempts = append(attempts, attempt{"Bearer " + k, true, ""}, attempt{"bearer " + k, true, ""})
			}
			for _, k := range src.bad {
				attempts = append(attempts, attempt{"Bearer " + k, p.open, MsgInvalid})
			}
			attempts = append(attempts, attempt{"Bearer " + src.good[0] + "x", p.open, MsgInvalid})
			for _, a := range attempts {
				req := httptest.NewRequest(p.method, p.path, nil)
				if a.auth != "" {
					req.Header.Set("Authorization", a.auth)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				name := src.name + " " + p.method + " " + p.path + " [" + a.auth + "]"
				if a.ok {
					if rec.Code != 200 || rec.Body.String() != "ok" {
						t.Errorf("%s: %d %q, want 200 ok", name, rec.Code, rec.Body)
					}
					continue
				}
				if rec.Code != http.StatusUnauthorized {
					t.Errorf("%s: status %d, want 401", name, rec.Code)
					continue
				}
				if got := rec.Header().Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
					t.Errorf("%s: WWW-Authenticate %q", name, got)
				}
				var body map[string]string
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || len(body) != 1 || body[p.field] != a.msg {
					t.Errorf("%s: body %q, want {%q: %q}", name, rec.Body, p.field, a.msg)
				}
				if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
					t.Errorf("%s: Content-Type %q", name, ct)
				}
			}
		}
	}
}

// TestValidComparesEveryKey: Valid compares with every key through the
// constant-time compare, whichever key (if any) matches.
func TestValidComparesEveryKey(t *testing.T) {
	k := NewKeys([]string{"a", "b", "c"})
	for _, give := range []string{"a", "b", "c", "", "d", strings.Repeat("a", 1000)} {
		calls := 0
		k.equal = func(x, y []byte) int {
			calls++
			if len(x) != len(y) {
				t.Fatalf("compared %d with %d bytes", len(x), len(y))
			}
			return NewKeys(nil).equal(x, y)
		}
		want := give == "a" || give == "b" || give == "c"
		if got := k.Valid(give); got != want {
			t.Errorf("Valid(%q) = %v", give, got)
		}
		if calls != 3 {
			t.Errorf("Valid(%q): %d comparisons, want 3", give, calls)
		}
	}
}

func TestLoadKeysErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent")
	comments := writeKeys(t, "# only a comment\n\n")
	spaced := writeKeys(t, "good\nsecret with-space\n")
	tests := []struct {
		name string
		cfg  config.Access
		env  map[string]string
		want string
		is   error
	}{
		{"missing file", config.Access{APIKeysFile: missing}, nil, "access.api_keys_file: open " + missing + ": no such file or directory", fs.ErrNotExist},
		{"empty file", config.Access{APIKeysFile: comments}, nil, "access: no API keys in file " + comments, ErrNoKeys},
		{"unset env", config.Access{APIKeysEnv: "SVC_API_KEYS"}, nil, "access: no API keys in environment variable SVC_API_KEYS", ErrNoKeys},
		{"blank env", config.Access{APIKeysEnv: "SVC_API_KEYS"}, map[string]string{"SVC_API_KEYS": " , "}, "access: no API keys in environment variable SVC_API_KEYS", ErrNoKeys},
		{"both empty", config.Access{APIKeysFile: comments, APIKeysEnv: "K"}, nil, "access: no API keys in file " + comments + " or environment variable K", ErrNoKeys},
		{"space in key", config.Access{APIKeysFile: spaced}, nil, "access.api_keys_file: " + spaced + ": line 2: a key cannot contain spaces", nil},
	}
	for _, tt := range tests {
		_, err := New(tt.cfg, env(tt.env))
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
			continue
		}
		if tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("%s: %v is not %v", tt.name, err, tt.is)
		}
		if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error holds a key or spans lines: %q", tt.name, err)
		}
	}
}

func TestOff(t *testing.T) {
	mw, err := New(config.Access{}, env(nil))
	if err != nil || mw != nil {
		t.Fatalf("New(empty) = %v, %v; want nil, nil", mw != nil, err)
	}
}

// TestCORS: preflights from allowed and denied origins, with and without
// keys (a preflight never needs one), and the headers on actual requests.
func TestCORS(t *testing.T) {
	const allowed, denied = "https://app.example.com", "https://evil.example.net"
	for _, withKeys := range []bool{false, true} {
		cfg := config.Access{CORS: config.CORS{AllowedOrigins: []string{allowed, "https://*.internal.example"}, MaxAge: config.Duration(600e9)}}
		if withKeys {
			cfg.APIKeysEnv = "K"
		}
		mw, err := New(cfg, env(map[string]string{"K": envKey}))
		if err != nil {
			t.Fatal(err)
		}
		h := mw(served)
		tests := []struct {
			origin, path, method, headers string
			allow                         bool
		}{
			{allowed, "/predict", "POST", "authorization,content-type,x-request-id", true},
			{allowed, "/v2/models/m/infer", "POST", "authorization,inference-header-content-length", true},
			{allowed, "/metrics", "GET", "authorization", true},
			{"https://a.internal.example", "/predict", "POST", "content-type", true},
			{denied, "/predict", "POST", "authorization", false},
			{denied, "/health", "GET", "", false},
			{allowed, "/predict", "POST", "x-other", false},
			{allowed, "/predict", "DELETE", "", false},
		}
		for _, tt := range tests {
			req := httptest.NewRequest(http.MethodOptions, tt.path, nil)
			req.Header.Set("Origin", tt.origin)
			req.Header.Set("Access-Control-Request-Method", tt.method)
			if tt.headers != "" {
				req.Header.Set("Access-Control-Request-Headers", tt.headers)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			name := tt.origin + " " + tt.method + " " + tt.path + " " + tt.headers
			if rec.Code != http.StatusNoContent {
				t.Errorf("keys=%v %s: preflight status %d, want 204", withKeys, name, rec.Code)
			}
			got := rec.Header().Get("Access-Control-Allow-Origin")
			if tt.allow && got != tt.origin || !tt.allow && got != "" {
				t.Errorf("keys=%v %s: Access-Control-Allow-Origin %q", withKeys, name, got)
			}
			if tt.allow && rec.Header().Get("Access-Control-Max-Age") != "600" {
				t.Errorf("keys=%v %s: Access-Control-Max-Age %q", withKeys, name, rec.Header().Get("Access-Control-Max-Age"))
			}
		}

		// An actual request: the CORS headers, on a 401 too.
		req := httptest.NewRequest(http.MethodPost, "/predict", nil)
		req.Header.Set("Origin", allowed)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		wantCode := 200
		if withKeys {
			wantCode = 401
		}
		if rec.Code != wantCode || rec.Header().Get("Access-Control-Allow-Origin") != allowed {
			t.Errorf("keys=%v: POST from allowed origin: %d, allow-origin %q", withKeys, rec.Code, rec.Header().Get("Access-Control-Allow-Origin"))
		}
		exposed := rec.Header().Get("Access-Control-Expose-Headers")
		for _, h := range ExposedHeaders {
			if !strings.Contains(strings.ToLower(exposed), strings.ToLower(h)) {
				t.Errorf("keys=%v: Access-Control-Expose-Headers %q lacks %s", withKeys, exposed, h)
			}
		}
	}
}

var _ transport.AccessControl = transport.AccessControl(RequireKey(NewKeys([]string{"k"})))
