package transport

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
)

func TestServeBindings(t *testing.T) {
	if bs := ServeBindings("127.0.0.1", 8080, 0); len(bs) != 1 || bs[0].Name != ListenerHTTP {
		t.Fatalf("gRPC off: %+v", bs)
	}
	bs := ServeBindings("127.0.0.1", 8080, 9000)
	if len(bs) != 2 || bs[1] != (Binding{Name: ListenerGRPC, Host: "127.0.0.1", Port: 9000, Flag: "--grpc-port"}) {
		t.Fatalf("gRPC on: %+v", bs)
	}
	// A busy gRPC port names its own flag.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port
	_, err = BindAll(ServeBindings("127.0.0.1", 0, port))
	if !errors.Is(err, ErrPortInUse) || !strings.HasSuffix(err.Error(), "127.0.0.1:"+strconv.Itoa(port)+" is taken by another process; stop it or choose another port with --grpc-port") {
		t.Fatalf("busy gRPC port: %v", err)
	}
	ls, err := BindAll(ServeBindings("127.0.0.1", 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	if !ls.Has(ListenerHTTP) || ls.Has(ListenerGRPC) {
		t.Fatalf("Has: %v", ls.Names())
	}
}

func TestBannerGRPC(t *testing.T) {
	var sb strings.Builder
	b := Banner{Version: "v", Host: "0.0.0.0", Port: 8080, GRPCPort: 9000}
	if err := b.Write(&sb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "  gRPC      localhost:9000 (inference.GRPCInferenceService, grpc.health.v1, reflection)\n") {
		t.Fatalf("banner:\n%s", sb.String())
	}
	sb.Reset()
	b.GRPCPort = 0
	_ = b.Write(&sb)
	if strings.Contains(sb.String(), "gRPC") || b.GRPCAddr() != "" {
		t.Fatalf("gRPC off, yet the banner shows it:\n%s", sb.String())
	}
	if got := (Banner{Host: "10.0.0.5", GRPCPort: 8001}).GRPCAddr(); got != "10.0.0.5:8001" {
		t.Fatalf("GRPCAddr = %q", got)
	}
}
