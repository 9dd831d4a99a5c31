// Command logsink is the payload logger's receivers for
// build/bench-logger.sh: real HTTP servers on 127.0.0.1, each a way a
// CloudEvents receiver can be. "ok" answers every POST 202 at once; "503"
// answers 503 (svc retries, then drops); "slow" answers 202 after -slow
// (or when the request is cancelled, svc's logger.timeout); "down" is an
// address where nothing listens (its port was bound and closed: the
// connection is refused). Each counts the POSTs it answered, GET /count
// on it says how many. It prints {"ok": URL, "503": URL, "slow": URL,
// "down": URL} on its first line, and serves until it is killed.
//
// Only the standard library; built by build/bench-logger.sh with go build
// ./logsink in the module build/benchreport.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

func main() {
	slow := flag.Duration("slow", 3*time.Second, "how long the slow receiver takes to answer")
	flag.Parse()
	urls, s, err := start(*slow)
	if err != nil {
		fmt.Fprintln(os.Stderr, "logsink:", err)
		os.Exit(1)
	}
	b, _ := json.Marshal(urls)
	fmt.Println(string(b))
	if err := s.serve(); err != nil {
		fmt.Fprintln(os.Stderr, "logsink:", err)
		os.Exit(1)
	}
}

// receiver answers each POST with status after delay (cut short when the
// request is cancelled), and counts them.
type receiver struct {
	status int
	delay  time.Duration
	posts  atomic.Int64
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/count" {
		fmt.Fprintln(w, rc.posts.Load())
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST events, GET /count", http.StatusMethodNotAllowed)
		return
	}
	_, _ = io.Copy(io.Discard, r.Body)
	if rc.delay > 0 {
		t := time.NewTimer(rc.delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
	}
	rc.posts.Add(1)
	w.WriteHeader(rc.status)
}

// sinks are the receivers' servers.
type sinks struct {
	srvs []*http.Server
	lns  []net.Listener
}

// serve serves the receivers until one fails or close is called.
func (s *sinks) serve() error {
	errs := make(chan error, len(s.srvs))
	for i, srv := range s.srvs {
		go func() { errs <- srv.Serve(s.lns[i]) }()
	}
	var first error
	for range s.srvs {
		if err := <-errs; err != nil && !errors.Is(err, http.ErrServerClosed) && first == nil {
			first = err
			s.close()
		}
	}
	return first
}

// close stops every receiver.
func (s *sinks) close() {
	for _, srv := range s.srvs {
		_ = srv.Close()
	}
}

// start binds the receivers and the down address.
func start(slow time.Duration) (urls map[string]string, s *sinks, err error) {
	recvs := map[string]*receiver{
		"ok":   {status: http.StatusAccepted},
		"503":  {status: http.StatusServiceUnavailable},
		"slow": {status: http.StatusAccepted, delay: slow},
	}
	urls, s = map[string]string{}, &sinks{}
	for name, rc := range recvs {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, fmt.Errorf("listen for %s: %w", name, err)
		}
		s.lns = append(s.lns, ln)
		s.srvs = append(s.srvs, &http.Server{Handler: rc, ReadHeaderTimeout: 10 * time.Second})
		urls[name] = "http://" + ln.Addr().String() + "/"
	}
	down, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("listen for down: %w", err)
	}
	urls["down"] = "http://" + down.Addr().String() + "/"
	if err := down.Close(); err != nil {
		return nil, nil, fmt.Errorf("close down: %w", err)
	}
	return urls, s, nil
}
