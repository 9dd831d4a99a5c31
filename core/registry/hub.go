package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultEndpoint is the Hugging Face Hub.
const DefaultEndpoint = "https://huggingface.co"

// Hub is a client of the Hugging Face Hub's model API (or of a mirror
// that implements it).
type Hub struct {
	// Endpoint is the Hub's base URL, without a trailing slash.
	Endpoint string
	// Token is sent as a bearer token when set (gated and private
	// repositories).
	Token string
	// UserAgent is sent with every request.
	UserAgent string
	// Client makes the requests; nil uses a client with connection and
	// header timeouts but no overall timeout (downloads can be long).
	Client *http.Client
	// StallTimeout aborts a download when no byte arrives for this long
	// (60 s when zero).
	StallTimeout time.Duration
}

// HubFromEnv configures a Hub from HF_ENDPOINT (a mirror; default
// https://huggingface.co) and HF_TOKEN.
func HubFromEnv(getenv func(string) string) *Hub {
	ep := strings.TrimRight(getenv("HF_ENDPOINT"), "/")
	if ep == "" {
		ep = DefaultEndpoint
	}
	return &Hub{Endpoint: ep, Token: getenv("HF_TOKEN")}
}

var defaultClient = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	TLSHandshakeTimeout:   30 * time.Second,
	ResponseHeaderTimeout: 60 * time.Second,
	IdleConnTimeout:       90 * time.Second,
	ForceAttemptHTTP2:     true,
	MaxIdleConnsPerHost:   4,
}}

func (h *Hub) client() *http.Client {
	if h.Client != nil {
		return h.Client
	}
	return defaultClient
}

// RepoInfo is the Hub's description of a repository at a revision.
type RepoInfo struct {
	ID string `json:"id"`
	// SHA is the commit the revision resolved to.
	SHA      string    `json:"sha"`
	Siblings []Sibling `json:"siblings"`
}

// Sibling is one file of a repository.
type Sibling struct {
	RFilename string `json:"rfilename"`
	Size      int64  `json:"size"`
	// BlobID is the git blob id (sha1 of "blob <size>\0" and the content)
	// of a regular file, or of the LFS pointer of an LFS file.
	BlobID string   `json:"blobId"`
	LFS    *LFSInfo `json:"lfs"`
}

// LFSInfo describes a file stored in LFS.
type LFSInfo struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// size is the file's size, -1 when the Hub did not say.
func (s Sibling) size() int64 {
	if s.LFS != nil && s.LFS.Size > 0 {
		return s.LFS.Size
	}
	if s.Size > 0 || s.BlobID != "" {
		return s.Size
	}
	return -1
}

// AuthError is a 401 or 403 from the Hub: the repository is gated or
// private (or, unauthenticated, does not exist: the Hub does not tell).
type AuthError struct {
	Repo     string
	Endpoint string
	Status   int
	TokenSet bool
	// Message is the Hub's own explanation, if any.
	Message string
}

func (e *AuthError) Error() string {
	var s string
	switch {
	case !e.TokenSet:
		s = fmt.Sprintf("%s answered %d for %s: the repository is gated or private (or does not exist); set HF_TOKEN to an access token that can read it (%s/settings/tokens)",
			e.Endpoint, e.Status, e.Repo, e.Endpoint)
	case e.Status == http.StatusForbidden:
		s = fmt.Sprintf("%s answered 403 for %s: the account of HF_TOKEN has no access; for a gated model, accept its conditions at %s/%s",
			e.Endpoint, e.Repo, e.Endpoint, e.Repo)
	default:
		s = fmt.Sprintf("%s answered %d for %s with HF_TOKEN set: the token is invalid or cannot read this repository; check it at %s/settings/tokens",
			e.Endpoint, e.Status, e.Repo, e.Endpoint)
	}
	if e.Message != "" {
		s += fmt.Sprintf(" (the Hub says: %s)", e.Message)
	}
	return s
}

// NotFoundError is a 404 for a repository, a revision or a file.
type NotFoundError struct {
	Repo     string
	Revision string
	File     string
	Endpoint string
}

func (e *NotFoundError) Error() string {
	switch {
	case e.File != "":
		return fmt.Sprintf("file %s of %s at %s not found on %s", e.File, e.Repo, e.Revision, e.Endpoint)
	case e.Revision != "":
		return fmt.Sprintf("revision %q of %s not found on %s; check the branch, tag or commit", e.Revision, e.Repo, e.Endpoint)
	default:
		return fmt.Sprintf("repository %s not found on %s; check the name", e.Repo, e.Endpoint)
	}
}

// HTTPError is any other unexpected status.
type HTTPError struct {
	URL     string
	Status  int
	Message string
}

func (e *HTTPError) Error() string {
	s := fmt.Sprintf("GET %s: %d %s", e.URL, e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// temporary reports whether retrying may help: server errors, rate
// limits, and transport failures.
func temporary(err error) bool {
	if errors.Is(err, errStalled) {
		return true
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Status >= 500 || he.Status == http.StatusTooManyRequests || he.Status == http.StatusRequestTimeout
	}
	var ae *AuthError
	var nf *NotFoundError
	if errors.As(err, &ae) || errors.As(err, &nf) || errors.Is(err, context.Canceled) {
		return false
	}
	return true
}

func (h *Hub) newRequest(ctx context.Context, u string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if h.Token != "" {
		// net/http drops this header when a redirect leaves the host (the
		// Hub redirects LFS files to a CDN with signed URLs).
		req.Header.Set("Authorization", "Bearer "+h.Token)
	}
	if h.UserAgent != "" {
		req.Header.Set("User-Agent", h.UserAgent)
	}
	return req, nil
}

// Info fetches a repository's file list at revision ("" = the default
// branch) with sizes and LFS sha256s.
func (h *Hub) Info(ctx context.Context, repo, revision string) (*RepoInfo, error) {
	u := h.Endpoint + "/api/models/" + repo
	if revision != "" {
		u += "/revision/" + url.PathEscape(revision)
	}
	u += "?blobs=true"
	req, err := h.newRequest(ctx, u)
	if err != nil {
		return nil, err
	}
	resp, err := h.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("reach the Hub: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, h.statusError(resp, repo, revision, "")
	}
	var info RepoInfo
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&info); err != nil {
		return nil, fmt.Errorf("read the Hub's answer for %s: %w", repo, err)
	}
	if !isCommit(info.SHA) {
		return nil, fmt.Errorf("the Hub's answer for %s has no commit (sha %q)", repo, info.SHA)
	}
	return &info, nil
}

func (h *Hub) statusError(resp *http.Response, repo, revision, file string) error {
	msg := hubMessage(resp)
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return &AuthError{Repo: repo, Endpoint: h.Endpoint, Status: resp.StatusCode, TokenSet: h.Token != "", Message: msg}
	case http.StatusNotFound:
		nf := &NotFoundError{Repo: repo, Endpoint: h.Endpoint}
		switch code := resp.Header.Get("X-Error-Code"); {
		case file != "":
			nf.Revision, nf.File = revision, file
		case code == "RepoNotFound":
		case code == "RevisionNotFound" || revision != "":
			nf.Revision = revision
		}
		return nf
	}
	u := *resp.Request.URL
	u.User, u.RawQuery = nil, "" // signed CDN URLs carry credentials in the query
	return &HTTPError{URL: u.String(), Status: resp.StatusCode, Message: msg}
}

// hubMessage extracts the Hub's error text: X-Error-Message, or the JSON
// body's "error", kept short.
func hubMessage(resp *http.Response) string {
	msg := resp.Header.Get("X-Error-Message")
	if msg == "" {
		var body struct {
			Error string `json:"error"`
		}
		if json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&body) == nil {
			msg = body.Error
		}
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return msg
}

// Download is an open file download.
type Download struct {
	// Body yields the file from Offset on.
	Body io.ReadCloser
	// Offset is where Body starts: the requested offset when the server
	// honoured the range, else 0.
	Offset int64
	// Total is the file's size, -1 when unknown.
	Total int64
	// LinkedETag is the sha256 the Hub announced for an LFS file
	// (X-Linked-Etag), "" when none.
	LinkedETag string
}

// errStalled is a download that stopped sending data.
var errStalled = errors.New("download stalled")

// errRangeDone is returned when the server says the range starts at or
// past the end of the file (416): the partial file is already complete.
var errRangeDone = errors.New("range not satisfiable")

// Open starts downloading file of repo at commit from offset (a Range
// request when offset > 0). Redirects are followed.
func (h *Hub) Open(ctx context.Context, repo, commit, file string, offset int64) (*Download, error) {
	segs := strings.Split(file, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	u := h.Endpoint + "/" + repo + "/resolve/" + url.PathEscape(commit) + "/" + strings.Join(segs, "/")

	ctx, cancel := context.WithCancel(ctx)
	req, err := h.newRequest(ctx, u)
	if err != nil {
		cancel()
		return nil, err
	}
	if offset > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(offset, 10)+"-")
	}
	// The first response of a redirect chain carries the Hub's headers.
	var linked string
	c := *h.client()
	next := c.CheckRedirect
	c.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if linked == "" && r.Response != nil {
			linked = linkedETag(r.Response.Header)
		}
		if next != nil {
			return next(r, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	resp, err := c.Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("download %s: %w", file, err)
	}
	if linked == "" {
		linked = linkedETag(resp.Header)
	}
	d := &Download{Total: -1, LinkedETag: linked}
	switch resp.StatusCode {
	case http.StatusOK:
		d.Offset = 0
		d.Total = resp.ContentLength
	case http.StatusPartialContent:
		start, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != offset {
			resp.Body.Close()
			cancel()
			return nil, fmt.Errorf("download %s: the server answered range %q to a request from byte %d", file, resp.Header.Get("Content-Range"), offset)
		}
		d.Offset, d.Total = start, total
	case http.StatusRequestedRangeNotSatisfiable:
		resp.Body.Close()
		cancel()
		return nil, errRangeDone
	default:
		err := h.statusError(resp, repo, commit, file)
		resp.Body.Close()
		cancel()
		return nil, err
	}
	stall := h.StallTimeout
	if stall <= 0 {
		stall = 60 * time.Second
	}
	d.Body = newStallReader(resp.Body, stall, cancel)
	return d, nil
}

// linkedETag returns the sha256 an LFS response announces.
func linkedETag(h http.Header) string {
	for _, k := range []string{"X-Linked-Etag", "ETag"} {
		v := strings.TrimPrefix(strings.Trim(h.Get(k), `"`), "W/")
		v = strings.Trim(v, `"`)
		if len(v) == 64 && isHex(v) {
			return v
		}
	}
	return ""
}

// parseContentRange parses "bytes START-END/TOTAL" (TOTAL may be "*").
func parseContentRange(s string) (start, total int64, ok bool) {
	s, found := strings.CutPrefix(s, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, tot, found := strings.Cut(s, "/")
	if !found {
		return 0, 0, false
	}
	first, _, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	start, err := strconv.ParseInt(first, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	total = -1
	if tot != "*" {
		if total, err = strconv.ParseInt(tot, 10, 64); err != nil {
			return 0, 0, false
		}
	}
	return start, total, true
}

// stallReader cancels the request when no byte arrives for a while.
type stallReader struct {
	r       io.ReadCloser
	timer   *time.Timer
	stall   time.Duration
	cancel  context.CancelFunc
	mu      sync.Mutex
	stalled bool
}

func newStallReader(r io.ReadCloser, stall time.Duration, cancel context.CancelFunc) *stallReader {
	s := &stallReader{r: r, stall: stall, cancel: cancel}
	s.timer = time.AfterFunc(stall, func() {
		s.mu.Lock()
		s.stalled = true
		s.mu.Unlock()
		cancel()
	})
	return s
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.timer.Reset(s.stall)
	}
	if err != nil && err != io.EOF {
		s.mu.Lock()
		stalled := s.stalled
		s.mu.Unlock()
		if stalled {
			err = fmt.Errorf("%w: no data for %s", errStalled, s.stall)
		}
	}
	return n, err
}

func (s *stallReader) Close() error {
	s.timer.Stop()
	err := s.r.Close()
	s.cancel()
	return err
}
