package transport

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Banner is what svc prints once it is serving.
type Banner struct {
	Version             string
	Model, ModelVersion string
	Inputs, Outputs     int
	Provider            string
	ProviderNote        string
	// Nodes says where the model's nodes run, by provider (e.g.
	// "WebGpuExecutionProvider 175, CPUExecutionProvider 18"; "" = not
	// shown).
	Nodes string
	Host  string
	Port  int
	// GRPCPort is the gRPC service's port (0: off).
	GRPCPort int
	Workers  int
	// Endpoints is the table of routes (see Endpoints).
	Endpoints []Endpoint
}

// URL is the address to reach the server at; a wildcard host is shown as
// localhost.
func (b Banner) URL() string {
	host := b.Host
	if host == "" || host == "0.0.0.0" || host == "::" || host == "[::]" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(b.Port))
}

// GRPCAddr is host:port of the gRPC service, with a wildcard host shown as
// localhost; "" when gRPC is off.
func (b Banner) GRPCAddr() string {
	if b.GRPCPort == 0 {
		return ""
	}
	host := b.Host
	if host == "" || host == "0.0.0.0" || host == "::" || host == "[::]" {
		host = "localhost"
	}
	return net.JoinHostPort(host, strconv.Itoa(b.GRPCPort))
}

// Write prints the banner: model, server configuration, endpoint table.
func (b Banner) Write(w io.Writer) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "svc %s\n\n", b.Version)
	row := func(k string, v any) { fmt.Fprintf(&sb, "  %-9s %v\n", k, v) }
	provider := b.Provider
	if b.ProviderNote != "" {
		provider += " (" + b.ProviderNote + ")"
	}
	sb.WriteString("Model\n")
	row("name", b.Model)
	row("version", b.ModelVersion)
	row("inputs", b.Inputs)
	row("outputs", b.Outputs)
	row("provider", provider)
	if b.Nodes != "" {
		row("nodes", b.Nodes)
	}
	sb.WriteString("\nServer\n")
	row("host", b.Host)
	row("port", b.Port)
	row("workers", b.Workers)
	row("URL", b.URL())
	if b.GRPCPort != 0 {
		row("gRPC", b.GRPCAddr()+" (inference.GRPCInferenceService, grpc.health.v1, reflection)")
	}
	fmt.Fprintf(&sb, "\nEndpoints\n")
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	for _, e := range b.Endpoints {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", e.Method, b.URL()+e.Path, e.Purpose)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	sb.WriteString("\nPress Ctrl+C to stop.\n")
	_, err := io.WriteString(w, sb.String())
	return err
}
