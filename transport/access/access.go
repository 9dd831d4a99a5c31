// Package access is svc's HTTP access control: optional API keys
// (Authorization: Bearer <key>) and optional CORS. It is plumbing: it knows
// paths, not protocols, and no protocol package imports it.
//
// Which paths need a key is decided in one place, the table openPaths: the
// spec's /health and /info, the Open Inference Protocol's health, server and
// model metadata endpoints, and the documentation pages are open; everything
// else (POST /predict, the v2 infer endpoints, /metrics in both formats,
// /v2/models/{name}/stats, and paths no route serves) needs a key. A
// frontend that adds an open route adds a row to openPaths.
package access

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// Rule matches request paths. Pattern is a path in which a segment written
// {x} matches any one non-empty segment; with Prefix, every path below
// Pattern matches too.
type Rule struct {
	Pattern string
	Prefix  bool
}

// openPaths lists the paths that need no key, whatever the method.
var openPaths = []Rule{
	{Pattern: "/health"},
	{Pattern: "/info"},
	{Pattern: "/docs"},
	{Pattern: "/docs/assets/", Prefix: true},
	{Pattern: "/redoc"},
	{Pattern: "/openapi.json"},
	{Pattern: "/v2"},
	{Pattern: "/v2/health/live"},
	{Pattern: "/v2/health/ready"},
	{Pattern: "/v2/models/{name}"},
	{Pattern: "/v2/models/{name}/ready"},
	{Pattern: "/v2/models/{name}/versions/{version}"},
	{Pattern: "/v2/models/{name}/versions/{version}/ready"},
}

// Match reports whether path matches the rule.
func (r Rule) Match(path string) bool {
	pat := r.Pattern
	for pat != "" {
		if !strings.HasPrefix(pat, "{") {
			i := strings.IndexByte(pat, '{')
			if i < 0 {
				i = len(pat)
			}
			if !strings.HasPrefix(path, pat[:i]) {
				return false
			}
			path, pat = path[i:], pat[i:]
			continue
		}
		end := strings.IndexByte(pat, '}')
		if end < 0 {
			return false
		}
		pat = pat[end+1:]
		seg := strings.IndexByte(path, '/')
		if seg < 0 {
			seg = len(path)
		}
		if seg == 0 {
			return false
		}
		path = path[seg:]
	}
	return path == "" || r.Prefix
}

// IsOpen reports whether path needs no key. A path that is not clean
// (dot segments, doubled slashes) is never open: the router would redirect
// it elsewhere, and a prefix rule must not vouch for where it leads.
func IsOpen(path string) bool {
	if strings.Contains(path, "/.") || strings.Contains(path, "//") {
		return false
	}
	for _, r := range openPaths {
		if r.Match(path) {
			return true
		}
	}
	return false
}

// Keys is a set of API keys, held as SHA-256 digests so that every
// comparison has the same length and the keys themselves are not kept.
type Keys struct {
	digests [][sha256.Size]byte
	// equal compares two digests in constant time; a field so that a test
	// can see it is used.
	equal func(a, b []byte) int
}

// NewKeys builds a key set from keys (empty strings are skipped).
func NewKeys(keys []string) *Keys {
	k := &Keys{equal: subtle.ConstantTimeCompare}
	for _, key := range keys {
		if key != "" {
			k.digests = append(k.digests, sha256.Sum256([]byte(key)))
		}
	}
	return k
}

// Len is the number of keys.
func (k *Keys) Len() int { return len(k.digests) }

// Valid reports whether key is one of the keys. It compares key with every
// key, each in constant time, so that the time taken says nothing about
// which key (or how much of one) matched.
func (k *Keys) Valid(key string) bool {
	d := sha256.Sum256([]byte(key))
	match := 0
	for i := range k.digests {
		match |= k.equal(d[:], k.digests[i][:])
	}
	return match == 1
}

// ReadKeysFile reads keys from a file: one per line, surrounding spaces
// trimmed, blank lines and lines starting with # skipped. The error never
// holds a key.
func ReadKeysFile(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err // *fs.PathError: the path and the reason
	}
	var keys []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if strings.ContainsAny(s, " \t") {
			return nil, fmt.Errorf("%s: line %d: a key cannot contain spaces", path, line)
		}
		keys = append(keys, s)
	}
	return keys, sc.Err()
}

// ParseKeysEnv splits a comma-separated list of keys, trimming spaces.
func ParseKeysEnv(v string) []string {
	var keys []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			keys = append(keys, s)
		}
	}
	return keys
}

// ErrNoKeys is returned when keys were asked for and none were found.
var ErrNoKeys = errors.New("no API keys")

// bearer returns the token of an Authorization: Bearer header.
func bearer(h string) (string, bool) {
	const scheme = "bearer "
	if len(h) <= len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return "", false
	}
	tok := strings.TrimSpace(h[len(scheme):])
	return tok, tok != ""
}

// Messages of the 401 answers.
const (
	MsgMissing = "Not authenticated"
	MsgInvalid = "Invalid API key"
)

// RequireKey rejects requests to paths that are not open unless they carry
// one of keys as a bearer token. The 401 answer has WWW-Authenticate:
// Bearer and an error body in the form of the path's protocol: {"error"}
// below /v2, {"detail"} elsewhere.
func RequireKey(keys *Keys) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if IsOpen(r.URL.Path) {
				next.ServeHTTP(w, r)
				return
			}
			tok, ok := bearer(r.Header.Get("Authorization"))
			switch {
			case !ok:
				reject(w, r.URL.Path, `Bearer realm="svc"`, MsgMissing)
			case !keys.Valid(tok):
				reject(w, r.URL.Path, `Bearer realm="svc", error="invalid_token"`, MsgInvalid)
			default:
				next.ServeHTTP(w, r)
			}
		})
	}
}

func reject(w http.ResponseWriter, path, challenge, msg string) {
	h := w.Header()
	h.Set("WWW-Authenticate", challenge)
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	field := "detail"
	if path == "/v2" || strings.HasPrefix(path, "/v2/") {
		field = "error"
	}
	_, _ = fmt.Fprintf(w, "{%q:%q}", field, msg)
}
