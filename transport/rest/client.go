package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client calls the v1 API of an svc server: the tests and svc bench use it.
type Client struct {
	base string
	hc   *http.Client
}

// NewClient returns a client of the server at baseURL (http://host:port).
// A nil hc means http.DefaultClient.
func NewClient(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: strings.TrimSuffix(baseURL, "/"), hc: hc}
}

// StatusError is a non-200 answer: its status and the {"detail"} message
// (or the start of the body when it has none).
type StatusError struct {
	Method, Path string
	Status       int
	Detail       string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s answered %d: %s", e.Method, e.Path, e.Status, e.Detail)
}

// maxDescriptionBytes bounds the /info, /health and /metrics answers read.
const maxDescriptionBytes = 16 << 20

// Predict posts body to /predict and copies a 200 answer to dst (nil:
// discard). It returns the status; a non-200 answer is a *StatusError.
func (c *Client) Predict(ctx context.Context, body []byte, dst io.Writer) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+PathPredict, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, statusError(http.MethodPost, PathPredict, resp)
	}
	if dst == nil {
		dst = io.Discard
	}
	if _, err := io.Copy(dst, resp.Body); err != nil {
		return resp.StatusCode, fmt.Errorf("read the /predict answer: %w", err)
	}
	return resp.StatusCode, nil
}

// Health reads GET /health.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	return h, c.get(ctx, PathHealth, &h)
}

// Info reads GET /info.
func (c *Client) Info(ctx context.Context) (Info, error) {
	var i Info
	return i, c.get(ctx, PathInfo, &i)
}

// Metrics reads the JSON record of GET /metrics.
func (c *Client) Metrics(ctx context.Context) (Metrics, error) {
	var m Metrics
	return m, c.get(ctx, PathMetrics, &m)
}

// WaitReady polls until the model is loaded (/info answers 200), ctx ends,
// or the server answers something other than "not yet" (503).
func (c *Client) WaitReady(ctx context.Context) error {
	for {
		_, err := c.Info(ctx)
		var se *StatusError
		if err == nil {
			return nil
		}
		if errors.As(err, &se) && se.Status != http.StatusServiceUnavailable {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server at %s not ready: %w", c.base, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *Client) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return statusError(http.MethodGet, path, resp)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDescriptionBytes))
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: not the JSON svc answers: %w", path, err)
	}
	return nil
}

// MaxErrorBody bounds how much of an error answer is read for its detail.
const MaxErrorBody = 4096

// statusError reads the error body of resp.
func statusError(method, path string, resp *http.Response) error {
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
	_, _ = io.Copy(io.Discard, resp.Body)
	return &StatusError{Method: method, Path: path, Status: resp.StatusCode, Detail: ErrorDetail(msg)}
}

// ErrorDetail is the "detail" of an error answer's JSON body, or the body
// itself, trimmed, when it has none.
func ErrorDetail(body []byte) string {
	var e struct {
		Detail string `json:"detail"`
	}
	if json.Unmarshal(body, &e) == nil && e.Detail != "" {
		return e.Detail
	}
	return strings.TrimSpace(string(body))
}
