package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/svc-dev/svc/transport/rest"
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

// FetchInfo reads GET /info from the server at base.
func FetchInfo(ctx context.Context, c *http.Client, base string) (Info, error) {
	ri, err := rest.NewClient(base, c).Info(ctx)
	if err != nil {
		return Info{}, err
	}
	info := Info{Name: ri.Name, Version: ri.Version, Path: ri.Path}
	for _, in := range ri.Inputs {
		x := Input{Name: in.Name, Type: in.Type, Required: in.Required}
		if in.Shape != nil {
			x.Shape = *in.Shape
		}
		info.Inputs = append(info.Inputs, x)
	}
	for _, o := range ri.Outputs {
		info.Outputs = append(info.Outputs, struct {
			Name string `json:"name"`
			Type string `json:"type"`
		}{o.Name, o.Type})
	}
	if len(info.Inputs) == 0 {
		return info, fmt.Errorf("GET /info lists no inputs; is %s an svc server?", base)
	}
	return info, nil
}

// FetchProvider reads the execution provider's name from GET /metrics
// ("" when the server does not say).
func FetchProvider(ctx context.Context, c *http.Client, base string) string {
	m, err := rest.NewClient(base, c).Metrics(ctx)
	if err != nil {
		return ""
	}
	return m.Provider.Name
}

// WaitReady polls the server until its model is loaded or ctx ends.
func WaitReady(ctx context.Context, c *http.Client, base string) error {
	return rest.NewClient(base, c).WaitReady(ctx)
}

// predictOp posts bodies to /predict, rotating through them; worker w
// uses clients[w].
func predictOp(base string, bodies [][]byte, clients []*http.Client) Op {
	rc := make([]*rest.Client, len(clients))
	for i, c := range clients {
		rc[i] = rest.NewClient(base, c)
	}
	return func(ctx context.Context, w int, seq int64) (int, error) {
		return post(ctx, rc[w], bodies[(int64(w)+seq)%int64(len(bodies))])
	}
}

// rawPredictOp posts bodies as they are, with media type ct, to /predict
// (a picture: --input with --content-type), like predictOp.
func rawPredictOp(base string, bodies [][]byte, ct string, clients []*http.Client) Op {
	target := strings.TrimSuffix(base, "/") + rest.PathPredict
	return func(ctx context.Context, w int, seq int64) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(bodies[(int64(w)+seq)%int64(len(bodies))]))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", ct)
		resp, err := clients[w].Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			return resp.StatusCode, fmt.Errorf("status %d: %s", resp.StatusCode, clip(string(b), 300))
		}
		_, err = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, err
	}
}

// post sends one /predict request and reads the whole answer. A non-200
// answer is an error carrying the start of its detail.
func post(ctx context.Context, c *rest.Client, body []byte) (int, error) {
	status, err := c.Predict(ctx, body, nil)
	var se *rest.StatusError
	if errors.As(err, &se) {
		return status, fmt.Errorf("status %d: %s", se.Status, clip(se.Detail, 300))
	}
	return status, err
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
