package config

import (
	"strings"
	"testing"
)

func TestGRPCPort(t *testing.T) {
	c, err := Load(write(t, "serve:\n  grpc_port: 9000\n"), true)
	if err != nil || c.Serve.GRPCPort != 9000 || c.Sections().Serve.GRPCPort != 9000 {
		t.Fatalf("grpc_port 9000: %+v, %v", c.Serve, err)
	}
	if Default().Serve.GRPCPort != 0 {
		t.Fatal("gRPC is on by default")
	}
	for _, tt := range []struct{ body, want string }{
		{"serve:\n  grpc_port: 70000\n", "line 2: serve.grpc_port 70000 is out of range 0-65535 (0 = off)"},
		{"serve:\n  grpc_port: -1\n", "line 2: serve.grpc_port -1 is out of range"},
		{"serve:\n  port: 9000\n  grpc_port: 9000\n", "line 3: serve.grpc_port 9000 is also serve.port; gRPC needs a port of its own"},
	} {
		_, err := Load(write(t, tt.body), true)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.body, err, tt.want)
		}
	}
}
