package transport

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"go.uber.org/zap"
)

// TestDrainListenerAnswersQueued: connections the kernel accepted before
// Drain (and that no Accept had taken) are handed out and answered; once
// drained, Accept waits for Close and the socket's closing resets nobody;
// on Linux, a connection attempted after Drain is not accepted at all.
func TestDrainListenerAnswersQueued(t *testing.T) {
	ln, err := listenTCP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tcp := ln.(*net.TCPListener)
	dl := NewDrainListener(tcp, zap.NewNop())
	defer dl.Close()
	const queued = 5
	clients := make([]net.Conn, 0, queued)
	for range queued {
		c, err := net.Dial("tcp", tcp.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	accepted := make(chan net.Conn)
	acceptErr := make(chan error, 1)
	go func() {
		for {
			c, err := dl.Accept()
			if err != nil {
				acceptErr <- err
				return
			}
			accepted <- c
		}
	}()
	drainErr := make(chan error, 1)
	go func() { drainErr <- dl.Drain(context.Background()) }()
	for range queued {
		c := <-accepted
		buf := make([]byte, 4)
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Errorf("read the queued client's bytes: %v", err)
		}
		_, _ = c.Write([]byte("pong"))
		c.Close()
	}
	if err := <-drainErr; err != nil {
		t.Fatalf("Drain: %v", err)
	}
	if runtime.GOOS == "linux" {
		// The SYN is dropped: no connection until the dial gives up.
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", tcp.Addr().String())
		cancel()
		if err == nil {
			c.Close()
			t.Error("a connection opened after Drain was accepted by the kernel")
		}
	}
	select {
	case err := <-acceptErr:
		t.Fatalf("Accept ended before Close: %v", err)
	default:
	}
	if err := dl.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-acceptErr; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
	}
	for i, c := range clients {
		b, err := io.ReadAll(c)
		if err != nil || string(b) != "pong" {
			t.Errorf("client %d: read %q, %v; want pong and EOF", i, b, err)
		}
	}
}

// TestDrainListenerWithoutDrain: a listener that is only closed (a worker
// stopping alone) ends Accept at once.
func TestDrainListenerWithoutDrain(t *testing.T) {
	ln, err := listenTCP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tcp := ln.(*net.TCPListener)
	dl := NewDrainListener(tcp, zap.NewNop())
	done := make(chan error, 1)
	go func() {
		_, err := dl.Accept()
		done <- err
	}()
	if err := dl.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept: %v, want net.ErrClosed", err)
	}
}
