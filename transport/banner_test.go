package transport

import (
	"strings"
	"testing"
)

func TestBannerWrite(t *testing.T) {
	var sb strings.Builder
	b := Banner{Version: "1.2.3", Model: "demo", ModelVersion: "3", Inputs: 1, Outputs: 2,
		Provider: "CPUExecutionProvider", Host: "0.0.0.0", Port: 8080, Workers: 2,
		Endpoints: []Endpoint{{"POST", "/predict", "Run inference"}, {"GET", "/health", "Health check"}}}
	if err := b.Write(&sb); err != nil {
		t.Fatal(err)
	}
	want := `svc 1.2.3

Model
  name      demo
  version   3
  inputs    1
  outputs   2
  provider  CPUExecutionProvider

Server
  host      0.0.0.0
  port      8080
  workers   2
  URL       http://localhost:8080

Endpoints
  POST  http://localhost:8080/predict  Run inference
  GET   http://localhost:8080/health   Health check

Press Ctrl+C to stop.
`
	if sb.String() != want {
		t.Fatalf("banner:\n%s\nwant:\n%s", sb.String(), want)
	}
}

func TestBannerURL(t *testing.T) {
	tests := []struct {
		host string
		port int
		want string
	}{
		{"0.0.0.0", 8080, "http://localhost:8080"},
		{"", 80, "http://localhost:80"},
		{"::", 9000, "http://localhost:9000"},
		{"127.0.0.1", 8081, "http://127.0.0.1:8081"},
		{"::1", 8082, "http://[::1]:8082"},
	}
	for _, tt := range tests {
		if got := (Banner{Host: tt.host, Port: tt.port}).URL(); got != tt.want {
			t.Errorf("URL(%q, %d) = %q, want %q", tt.host, tt.port, got, tt.want)
		}
	}
}

// The node placement, when known, follows the provider line.
func TestBannerNodes(t *testing.T) {
	var sb strings.Builder
	b := Banner{Provider: "WebGpuExecutionProvider", Nodes: "WebGpuExecutionProvider 175, CPUExecutionProvider 18"}
	if err := b.Write(&sb); err != nil {
		t.Fatal(err)
	}
	want := "  provider  WebGpuExecutionProvider\n  nodes     WebGpuExecutionProvider 175, CPUExecutionProvider 18\n\nServer\n"
	if !strings.Contains(sb.String(), want) {
		t.Errorf("banner:\n%s\nwant it to hold:\n%s", sb.String(), want)
	}
}
