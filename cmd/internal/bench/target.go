package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrRemote is wrapped by CheckURL's error for a host that is not on this
// machine.
var ErrRemote = errors.New("not a loopback address")

// CheckURL parses the server's base URL (http or https, no query) and,
// unless allowRemote, refuses a host that is not a loopback address:
// localhost, 127.0.0.0/8 or ::1. Host names other than localhost are not
// resolved, so they need allowRemote too.
func CheckURL(raw string, allowRemote bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid --url %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("invalid --url %q: want http://HOST:PORT or https://HOST:PORT", raw)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("invalid --url %q: no host", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("invalid --url %q: give the server's base URL, without user, query or fragment", raw)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	if !allowRemote && !IsLoopback(u.Hostname()) {
		return nil, fmt.Errorf("--url %s: %q is %w; svc bench loads only servers on this machine unless --allow-remote is given", raw, u.Hostname(), ErrRemote)
	}
	return u, nil
}

// IsLoopback reports whether host (without port) names this machine:
// localhost (or a name under .localhost) or a loopback IP address.
func IsLoopback(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

// newClient is an HTTP client with its own keep-alive connection: one per
// load-generator worker, so N workers hold N connections.
func newClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			// No proxy from the environment: the load goes to the server.
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        1,
			MaxIdleConnsPerHost: 1,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
	}
}

// maxInfoBytes bounds the GET /info, /health and /metrics answers read.
const maxInfoBytes = 16 << 20

// getJSON GETs base+path and decodes a 200 answer into v.
func getJSON(ctx context.Context, c *http.Client, base, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxInfoBytes))
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s answered %d: %s", path, resp.StatusCode, clip(string(body), 200))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: not the JSON svc answers: %w", path, err)
	}
	return nil
}

// FetchInfo reads GET /info from the server at base.
func FetchInfo(ctx context.Context, c *http.Client, base string) (Info, error) {
	var info Info
	if err := getJSON(ctx, c, base, "/info", &info); err != nil {
		return info, err
	}
	if len(info.Inputs) == 0 {
		return info, fmt.Errorf("GET /info lists no inputs; is %s an svc server?", base)
	}
	return info, nil
}

// FetchProvider reads the execution provider's name from GET /metrics
// ("" when the server does not say).
func FetchProvider(ctx context.Context, c *http.Client, base string) string {
	var m struct {
		Provider struct {
			Name string `json:"name"`
		} `json:"provider"`
	}
	if getJSON(ctx, c, base, "/metrics", &m) != nil {
		return ""
	}
	return m.Provider.Name
}

// WaitHealthy polls GET /health until it answers 200 or ctx ends.
func WaitHealthy(ctx context.Context, c *http.Client, base string) error {
	var last error
	for {
		var h struct {
			Status string `json:"status"`
		}
		last = getJSON(ctx, c, base, "/health", &h)
		if last == nil && h.Status == "healthy" {
			return nil
		}
		select {
		case <-ctx.Done():
			if last == nil {
				last = fmt.Errorf("GET /health: status %q", h.Status)
			}
			return fmt.Errorf("server at %s not healthy: %w", base, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// predictOp posts bodies to base/predict, rotating through them; worker w
// uses clients[w].
func predictOp(base string, bodies [][]byte, clients []*http.Client) Op {
	target := base + "/predict"
	return func(ctx context.Context, w int, seq int64) (int, error) {
		return post(ctx, clients[w], target, bodies[(int64(w)+seq)%int64(len(bodies))])
	}
}

// post sends one /predict request and reads the whole answer. A non-200
// answer is an error carrying the start of its body.
func post(ctx context.Context, c *http.Client, target string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, fmt.Errorf("status %d: %s", resp.StatusCode, clip(errorDetail(msg), 300))
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return resp.StatusCode, fmt.Errorf("read answer: %w", err)
	}
	return resp.StatusCode, nil
}

// errorDetail returns svc's {"detail": …} message, or the body itself.
func errorDetail(body []byte) string {
	var e struct {
		Detail string `json:"detail"`
	}
	if json.Unmarshal(body, &e) == nil && e.Detail != "" {
		return e.Detail
	}
	return strings.TrimSpace(string(body))
}

// clip shortens s to n bytes, on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
