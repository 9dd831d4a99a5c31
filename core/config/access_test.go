package config

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLoadAccess(t *testing.T) {
	p := write(t, `
access:
  api_keys_file: keys.txt
  api_keys_env: SVC_API_KEYS
  cors:
    allowed_origins: ["https://app.example.com", "http://localhost:3000", "https://*.example.org"]
    max_age: 10m
`)
	c, err := Load(p, true)
	if err != nil {
		t.Fatal(err)
	}
	want := Access{
		// Relative to the configuration file's directory.
		APIKeysFile: filepath.Join(filepath.Dir(p), "keys.txt"),
		APIKeysEnv:  "SVC_API_KEYS",
		CORS: CORS{
			AllowedOrigins: []string{"https://app.example.com", "http://localhost:3000", "https://*.example.org"},
			MaxAge:         Duration(10 * time.Minute),
		},
	}
	if !reflect.DeepEqual(c.Access, want) {
		t.Fatalf("got  %+v\nwant %+v", c.Access, want)
	}
	if got := c.Sections().Access; !reflect.DeepEqual(got, want) {
		t.Fatalf("Sections().Access = %+v", got)
	}

	c, err = Load(write(t, "access:\n  api_keys_file: /etc/svc/keys\n  cors:\n    allowed_origins: ['*']\n"), true)
	if err != nil || c.Access.APIKeysFile != "/etc/svc/keys" || c.Access.CORS.AllowedOrigins[0] != "*" {
		t.Fatalf("absolute path, any origin: %+v %v", c.Access, err)
	}
	if d := Default().Access; !reflect.DeepEqual(d, Access{}) {
		t.Fatalf("access is not off by default: %+v", d)
	}
}

func TestLoadAccessErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{"unknown key", "access:\n  api_keys: [a]\n", "line 2: field api_keys not found"},
		{"env name", "name: x\naccess:\n  api_keys_env: $SVC_KEYS\n", `svc.yml: line 3: access.api_keys_env must be an environment variable name (letters, digits, _), got "$SVC_KEYS"`},
		{"env digit first", "access:\n  api_keys_env: 1KEYS\n", `line 2: access.api_keys_env must be an environment variable name`},
		{"origin without scheme", "access:\n  cors:\n    allowed_origins: [app.example.com]\n", `svc.yml: line 3: access.cors.allowed_origins "app.example.com" is not an origin (scheme://host[:port], or *)`},
		{"origin with path", "access:\n  cors:\n    allowed_origins:\n      - https://app.example.com/ui\n", `svc.yml: line 3: access.cors.allowed_origins "https://app.example.com/ui" must be scheme://host[:port] alone`},
		{"two stars", "access:\n  cors:\n    allowed_origins: ['https://*.*.example.com']\n", `may hold at most one *`},
		{"bad max age", "access:\n  cors:\n    max_age: -1s\n", "svc.yml: line 3: invalid duration \"-1s\""},
		{"origins not a list", "access:\n  cors:\n    allowed_origins: 3\n", "line 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(write(t, tt.body), true)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
