package transport

import (
	"errors"
	"net"
	"testing"
)

func TestBindAll(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port

	ls, err := BindAll([]Binding{{Name: "http", Host: "127.0.0.1"}, {Name: "grpc", Host: "127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := ls.Names(); len(got) != 2 || got[0] != "grpc" || got[1] != "http" {
		t.Errorf("names %v", got)
	}
	if _, err := ls.Get("metrics"); err == nil {
		t.Error("Get of a listener that was not bound succeeded")
	}
	httpLn, _ := ls.Get("http")
	if err := ls.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ls.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	tests := []struct {
		name string
		give []Binding
		want error // nil: any error
	}{
		{"busy port", []Binding{{Name: "http", Host: "127.0.0.1"}, {Name: "grpc", Host: "127.0.0.1", Port: busyPort}}, ErrPortInUse},
		{"same name twice", []Binding{{Name: "http", Host: "127.0.0.1"}, {Name: "http", Host: "127.0.0.1"}}, nil},
		{"bad host", []Binding{{Name: "http", Host: "256.0.0.1"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls, err := BindAll(tt.give)
			if err == nil {
				ls.Close()
				t.Fatal("no error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
		})
	}
	// Close released the ports: the http listener's address binds again.
	ln, err := net.Listen("tcp", httpLn.Addr().String())
	if err != nil {
		t.Fatalf("closed listener's port still taken: %v", err)
	}
	ln.Close()
}
