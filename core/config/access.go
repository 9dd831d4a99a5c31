package config

import (
	"fmt"
	"net/url"
	"strings"
)

// check returns the first invalid access key and what is wrong with it.
func (a Access) check() (string, string) {
	if a.APIKeysEnv != "" && !validEnvName(a.APIKeysEnv) {
		return "access.api_keys_env", fmt.Sprintf("must be an environment variable name (letters, digits, _), got %q", a.APIKeysEnv)
	}
	if a.CORS.MaxAge < 0 {
		return "access.cors.max_age", "cannot be negative"
	}
	for _, o := range a.CORS.AllowedOrigins {
		if o == "*" {
			continue
		}
		if msg := checkOrigin(o); msg != "" {
			return "access.cors.allowed_origins", fmt.Sprintf("%q %s", o, msg)
		}
	}
	return "", ""
}

func validEnvName(s string) bool {
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// checkOrigin says what is wrong with an origin, or "". A single * inside
// the host (https://*.example.com) is allowed, as rs/cors accepts it.
func checkOrigin(o string) string {
	u, err := url.Parse(o)
	switch {
	case err != nil || u.Scheme == "" || u.Host == "":
		return "is not an origin (scheme://host[:port], or *)"
	case u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return "must be scheme://host[:port] alone, without a path"
	case strings.Count(o, "*") > 1:
		return "may hold at most one *"
	}
	return ""
}
