// Package hubtest is a fake Hugging Face Hub for tests: an HTTP server
// with the endpoints svc's puller uses (repository info with the file
// list, sizes and LFS sha256s; file downloads with redirects for LFS files
// and Range requests), gated repositories, and faults to inject (a
// connection cut mid-body, corrupted content, slow bodies, bodies held
// back until released).
package hubtest

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Hub is a fake Hub. Its methods are safe for concurrent use.
type Hub struct {
	*httptest.Server

	mu       sync.Mutex
	repos    map[string]*repo
	blobs    map[string][]byte // LFS content by sha256
	requests []Request
	cuts     map[string][]int // file path → bytes to send before cutting, one entry per cut
	corrupt  map[string]bool  // repo/path → serve flipped bytes
	delay    time.Duration
	held     map[string]chan struct{} // file path → closed when released
	failures []int                    // statuses for the next requests
	commits  int
}

type repo struct {
	token   string // "" = public
	refs    map[string]string
	commits map[string]map[string][]byte
}

// Request is a request the Hub received.
type Request struct {
	Method string
	// Path is the escaped URL path.
	Path string
	// File is the repository file a download is for ("" for other
	// requests).
	File          string
	Range         string
	Authorization string
	Status        int
}

// New starts a fake Hub. Close it when done.
func New() *Hub {
	h := &Hub{
		repos:   map[string]*repo{},
		blobs:   map[string][]byte{},
		cuts:    map[string][]int{},
		corrupt: map[string]bool{},
	}
	api := http.NewServeMux()
	api.HandleFunc("GET /api/models/{org}/{name}", h.info)
	api.HandleFunc("GET /api/models/{org}/{name}/revision/{rev}", h.info)
	api.HandleFunc("GET /cdn/{sha}", h.cdn)
	files := http.NewServeMux()
	files.HandleFunc("GET /{org}/{name}/resolve/{rev}/{file...}", h.resolve)
	h.Server = httptest.NewServer(h.record(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") || strings.HasPrefix(r.URL.Path, "/cdn/") {
			api.ServeHTTP(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})))
	return h
}

// IsLFS reports whether the fake Hub stores a file in LFS: model files and
// their external data.
func IsLFS(name string) bool {
	b := path.Base(name)
	return strings.Contains(b, ".onnx") || strings.HasSuffix(b, ".bin") || strings.HasSuffix(b, ".safetensors")
}

// AddRepo creates a public repository whose main branch holds files, and
// returns the commit.
func (h *Hub) AddRepo(id string, files map[string][]byte) string {
	return h.Commit(id, "main", files)
}

// Commit adds a commit holding files to repository id (created if
// needed), points revision (a branch or tag) at it, and returns it.
func (h *Hub) Commit(id, revision string, files map[string][]byte) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.repos[id]
	if !ok {
		r = &repo{refs: map[string]string{}, commits: map[string]map[string][]byte{}}
		h.repos[id] = r
	}
	h.commits++
	sum := sha1.New()
	fmt.Fprintf(sum, "%s %s %d", id, revision, h.commits)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	snapshot := map[string][]byte{}
	for _, name := range names {
		fmt.Fprintf(sum, "\x00%s\x00%s", name, files[name])
		snapshot[name] = files[name]
		if IsLFS(name) {
			h.blobs[sha256Hex(files[name])] = files[name]
		}
	}
	commit := hex.EncodeToString(sum.Sum(nil))
	r.commits[commit] = snapshot
	r.refs[revision] = commit
	return commit
}

// Gate makes repository id require token: no token is a 401, another
// token a 403.
func (h *Hub) Gate(id, token string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.repos[id].token = token
}

// CutAfter makes the next download of file (its path in the repository,
// in any repository) send n bytes of the body, then drop the connection.
// Each call adds one cut.
func (h *Hub) CutAfter(file string, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cuts[file] = append(h.cuts[file], n)
}

// Corrupt makes downloads of file in repository id return content that
// differs from what the repository info announces.
func (h *Hub) Corrupt(id, file string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.corrupt[id+"/"+file] = true
}

// FailNext answers the next requests with these statuses (a JSON error
// body), one each, before serving normally again.
func (h *Hub) FailNext(statuses ...int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failures = append(h.failures, statuses...)
}

// SlowDown makes every file body take at least d (sent in pieces).
func (h *Hub) SlowDown(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.delay = d
}

// Hold makes every download of file (a path in a repository) stop after
// its header until release is called; release lets them, and later ones,
// go on. Release before closing the Hub: Close waits for the downloads.
func (h *Hub) Hold(file string) (release func()) {
	ch := make(chan struct{})
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil {
		h.held = map[string]chan struct{}{}
	}
	h.held[file] = ch
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// Requests returns the requests received so far. Status is 0 while a
// request's header is not written yet.
func (h *Hub) Requests() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Request(nil), h.requests...)
}

// Downloads returns the requests that sent content of file (a path in
// a repository), whole or from a range: not the redirects to the CDN.
func (h *Hub) Downloads(file string) []Request {
	var out []Request
	for _, r := range h.Requests() {
		if r.File == file && (r.Status == http.StatusOK || r.Status == http.StatusPartialContent) {
			out = append(out, r)
		}
	}
	return out
}

// statusRecorder notes the status in the request log as soon as the
// header is written, so a test sees a download while its body is still
// being sent.
type statusRecorder struct {
	http.ResponseWriter
	h     *Hub
	idx   int
	wrote bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.wrote = true
		s.h.mu.Lock()
		s.h.requests[s.idx].Status = code
		s.h.mu.Unlock()
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if !s.wrote {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (h *Hub) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entry := Request{Method: r.Method, Path: r.URL.EscapedPath(), Range: r.Header.Get("Range"), Authorization: r.Header.Get("Authorization")}
		if strings.HasPrefix(r.URL.Path, "/cdn/") {
			entry.File = r.URL.Query().Get("file")
		} else if parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 5); len(parts) == 5 && parts[2] == "resolve" {
			entry.File = parts[4]
		}
		h.mu.Lock()
		rec := &statusRecorder{ResponseWriter: w, h: h, idx: len(h.requests)}
		h.requests = append(h.requests, entry)
		fail := 0
		if len(h.failures) > 0 {
			fail, h.failures = h.failures[0], h.failures[1:]
		}
		h.mu.Unlock()
		if fail != 0 {
			hubError(rec, fail, "", http.StatusText(fail))
			return
		}
		next.ServeHTTP(rec, r)
	})
}

func (h *Hub) repo(w http.ResponseWriter, r *http.Request) (string, *repo, bool) {
	id := r.PathValue("org") + "/" + r.PathValue("name")
	h.mu.Lock()
	rp, ok := h.repos[id]
	token := ""
	if ok {
		token = rp.token
	}
	h.mu.Unlock()
	if !ok {
		hubError(w, http.StatusNotFound, "RepoNotFound", "Repository not found")
		return "", nil, false
	}
	if token != "" {
		switch r.Header.Get("Authorization") {
		case "Bearer " + token:
		case "":
			hubError(w, http.StatusUnauthorized, "GatedRepo", "Access to model "+id+" is restricted. You must be authenticated to access it.")
			return "", nil, false
		default:
			hubError(w, http.StatusForbidden, "GatedRepo", "Access to model "+id+" is restricted and you are not in the authorized list.")
			return "", nil, false
		}
	}
	return id, rp, true
}

func hubError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	if code != "" {
		w.Header().Set("X-Error-Code", code)
	}
	w.Header().Set("X-Error-Message", msg)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// commitOf resolves a branch, tag or full commit.
func (h *Hub) commitOf(rp *repo, rev string) (string, map[string][]byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := rp.refs[rev]; ok {
		return c, rp.commits[c], true
	}
	if files, ok := rp.commits[rev]; ok {
		return rev, files, true
	}
	return "", nil, false
}

func (h *Hub) info(w http.ResponseWriter, r *http.Request) {
	id, rp, ok := h.repo(w, r)
	if !ok {
		return
	}
	rev := r.PathValue("rev")
	if rev == "" {
		rev = "main"
	}
	commit, files, ok := h.commitOf(rp, rev)
	if !ok {
		hubError(w, http.StatusNotFound, "RevisionNotFound", "Invalid rev id: "+rev)
		return
	}
	blobs := r.URL.Query().Get("blobs") == "true"
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	siblings := []map[string]any{}
	for _, name := range names {
		s := map[string]any{"rfilename": name}
		if blobs {
			data := files[name]
			if IsLFS(name) {
				sum := sha256Hex(data)
				pointer := fmt.Sprintf("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", sum, len(data))
				s["size"] = len(data)
				s["blobId"] = gitBlobID([]byte(pointer))
				s["lfs"] = map[string]any{"sha256": sum, "size": len(data), "pointerSize": len(pointer)}
			} else {
				s["size"] = len(data)
				s["blobId"] = gitBlobID(data)
			}
		}
		siblings = append(siblings, s)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"_id": "fake", "id": id, "modelId": id, "sha": commit, "private": false,
		"gated": rp.token != "", "siblings": siblings,
	})
}

func (h *Hub) resolve(w http.ResponseWriter, r *http.Request) {
	id, rp, ok := h.repo(w, r)
	if !ok {
		return
	}
	commit, files, ok := h.commitOf(rp, r.PathValue("rev"))
	if !ok {
		hubError(w, http.StatusNotFound, "RevisionNotFound", "Invalid rev id: "+r.PathValue("rev"))
		return
	}
	name := r.PathValue("file")
	data, ok := files[name]
	if !ok {
		hubError(w, http.StatusNotFound, "EntryNotFound", name+" does not exist on "+commit)
		return
	}
	w.Header().Set("X-Repo-Commit", commit)
	if IsLFS(name) {
		sum := sha256Hex(data)
		w.Header().Set("X-Linked-Etag", `"`+sum+`"`)
		w.Header().Set("X-Linked-Size", strconv.Itoa(len(data)))
		w.Header().Set("ETag", `"`+gitBlobID(data)+`"`)
		target := "/cdn/" + sum + "?" + url.Values{"repo": {id}, "file": {name}}.Encode()
		http.Redirect(w, r, target, http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+gitBlobID(data)+`"`)
	h.serve(w, r, id, name, data)
}

func (h *Hub) cdn(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	data, ok := h.blobs[r.PathValue("sha")]
	h.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	h.serve(w, r, r.URL.Query().Get("repo"), r.URL.Query().Get("file"), data)
}

// serve writes data, honouring "Range: bytes=N-" and the injected faults.
func (h *Hub) serve(w http.ResponseWriter, r *http.Request, id, name string, data []byte) {
	h.mu.Lock()
	cut := -1
	if c := h.cuts[name]; len(c) > 0 {
		cut, h.cuts[name] = c[0], c[1:]
	}
	if h.corrupt[id+"/"+name] {
		data = append([]byte(nil), data...)
		data[len(data)/2] ^= 0xff
	}
	delay := h.delay
	held := h.held[name]
	h.mu.Unlock()

	start := 0
	status := http.StatusOK
	if rg := r.Header.Get("Range"); rg != "" {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"))
		if err != nil || !strings.HasPrefix(rg, "bytes=") || !strings.HasSuffix(rg, "-") {
			http.Error(w, "only bytes=N- ranges", http.StatusBadRequest)
			return
		}
		if n >= len(data) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", len(data)))
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		start, status = n, http.StatusPartialContent
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", n, len(data)-1, len(data)))
	}
	body := data[start:]
	w.Header().Set("Accept-Ranges", "bytes")
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if held != nil {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		select {
		case <-held:
		case <-r.Context().Done():
			return
		}
	}
	if cut >= 0 && cut < len(body) {
		_, _ = w.Write(body[:cut])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler) // drops the connection mid-body
	}
	if delay <= 0 {
		_, _ = w.Write(body)
		return
	}
	const pieces = 10
	for i := 0; i < pieces; i++ {
		lo, hi := len(body)*i/pieces, len(body)*(i+1)/pieces
		_, _ = w.Write(body[lo:hi])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(delay / pieces):
		}
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// gitBlobID is git's object id of a blob: sha1 of "blob <size>\0" and the
// content.
func gitBlobID(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}
