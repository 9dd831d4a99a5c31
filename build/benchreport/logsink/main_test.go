package main

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestReceivers: each receiver answers as it is meant to, and counts.
func TestReceivers(t *testing.T) {
	urls, s, err := start(200 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.serve() }()
	defer func() {
		http.DefaultClient.CloseIdleConnections()
		s.close()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	for _, tt := range []struct {
		name   string
		status int
	}{{"ok", http.StatusAccepted}, {"503", http.StatusServiceUnavailable}, {"slow", http.StatusAccepted}} {
		resp, err := http.Post(urls[tt.name], "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s: %d, want %d", tt.name, resp.StatusCode, tt.status)
		}
		resp, err = http.Get(urls[tt.name] + "count")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if string(b) != "1\n" {
			t.Errorf("%s: count %q, want 1", tt.name, b)
		}
	}
	if _, err := http.Post(urls["down"], "application/json", strings.NewReader(`{}`)); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("down: %v, want connection refused", err)
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
