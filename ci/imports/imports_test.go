package imports

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// ort is the ONNX Runtime binding's import path.
const ort = "github.com/yalue/onnxruntime_go"

// key writes a violation the way the table expects it:
// "rule: from -> to".
func key(v Violation) string { return v.Rule.Name + ": " + v.From + " -> " + v.To }

func TestCheck(t *testing.T) {
	custom := DefaultConfig()
	custom.Plumbing = []string{"supervisor"} // transport/metrics becomes a protocol
	custom.ProtocolImports = nil             // and transport/grpc may not import transport/oip
	tests := []struct {
		name   string
		config *Config // nil: DefaultConfig
		graph  Graph
		want   []string
	}{
		{
			name: "allowed edges",
			graph: Graph{
				"core":                            {Imports: []string{"core/tensor"}},
				"core/sched":                      {Imports: []string{"core", "core/internal/loop", "core/tensor"}},
				"core/session":                    {Imports: []string{"core", "core/config", "core/onnxrt", "core/internal/loop", ort}, TestImports: []string{"core/sched"}},
				"core/onnxrt":                     {Imports: []string{ort}},
				"core/registry":                   {Imports: []string{"core"}, TestImports: []string{"core/registry/hubtest"}},
				"providers":                       {Imports: []string{"providers/internal/sysprobe"}, TestImports: []string{"core", "core/config", "providers/internal/providertest"}},
				"providers/cuda":                  {Imports: []string{"providers", "providers/internal/nvidia"}},
				"providers/internal/providertest": {Imports: []string{"core/onnxrt", "providers"}},
				"transport":                       {Imports: []string{"core", "core/config", "transport/supervisor"}},
				"transport/rest":                  {Imports: []string{"transport", "core", "core/tensor", "transport/supervisor", "transport/metrics", "transport/access", "transport/meaning"}},
				"transport/oip":                   {Imports: []string{"transport", "core/tensor", "transport/meaning"}},
				"transport/meaning":               {Imports: []string{"core/tensor"}},
				"transport/grpc":                  {Imports: []string{"transport", "transport/grpc/inferencepb", "transport/oip"}, TestImports: []string{"transport/oip"}},
				"transport/grpc/inferencepb":      {Imports: []string{"transport/grpc"}},
				"openapi":                         {Imports: []string{"core", "transport"}},
				"cmd/internal/bench":              {Imports: []string{"core", "core/session", "transport/rest"}, TestImports: []string{"providers/all"}},
				"cmd/svc": {Imports: []string{"core", "core/config", "providers", "providers/all", "transport", "transport/rest",
					"transport/grpc", "transport/oip", "openapi", "cmd/internal/bench"}},
				"cmd/svc/x": {TestImports: []string{"cmd/svc/x"}}, // an external test imports its own package
			},
		},
		{
			name:  "the scheduler imports the binding",
			graph: Graph{"core/sched": {Imports: []string{"core", ort}}},
			want:  []string{"runtime-boundary: core/sched -> " + ort},
		},
		{
			name: "the lifecycle reaches the binding through other packages",
			graph: Graph{
				"core":         {Imports: []string{"core/config"}},
				"core/config":  {Imports: []string{"providers"}},
				"providers":    {Imports: []string{ort}},
				"core/tensor":  {},
				"core/session": {Imports: []string{"core", ort}},
			},
			want: []string{"runtime-boundary: core -> core/config"},
		},
		{
			name:  "a scheduler test runs a real session",
			graph: Graph{"core/sched": {TestImports: []string{"core/session"}}, "core/session": {Imports: []string{ort}}},
			want:  []string{"runtime-boundary: core/sched -> core/session"},
		},
		{
			name:  "a building block of the scheduler imports the binding",
			graph: Graph{"core/internal/loop": {TestImports: []string{ort}}},
			want:  []string{"runtime-boundary: core/internal/loop -> " + ort},
		},
		{
			name:  "the shared output decoding reaches the binding",
			graph: Graph{"transport/meaning": {Imports: []string{"core/config"}}, "core/config": {Imports: []string{ort}}},
			want:  []string{"runtime-boundary: transport/meaning -> core/config"},
		},
		{
			name:  "core imports a protocol",
			graph: Graph{"core/x": {Imports: []string{"core", "transport/rest"}}},
			want:  []string{"core-neutral: core/x -> transport/rest"},
		},
		{
			name:  "core imports the transport root and openapi",
			graph: Graph{"core": {Imports: []string{"transport", "openapi"}}},
			want:  []string{"core-neutral: core -> openapi", "core-neutral: core -> transport"},
		},
		{
			name:  "core test imports transport",
			graph: Graph{"core/tensor": {TestImports: []string{"transport"}}},
			want:  []string{"core-neutral: core/tensor -> transport"},
		},
		{
			name:  "a provider imports core",
			graph: Graph{"providers/cuda": {Imports: []string{"providers", "core/config"}}},
			want:  []string{"providers-self-contained: providers/cuda -> core/config"},
		},
		{
			name:  "the providers root imports transport",
			graph: Graph{"providers": {Imports: []string{"transport"}}},
			want:  []string{"providers-self-contained: providers -> transport"},
		},
		{
			name:  "a provider test imports core",
			graph: Graph{"providers/cuda": {TestImports: []string{"core/config", "core/onnxrt"}}},
		},
		{
			name:  "a protocol imports another",
			graph: Graph{"transport/rest": {Imports: []string{"transport", "transport/oip"}}},
			want:  []string{"protocols-independent: transport/rest -> transport/oip"},
		},
		{
			name:  "a protocol's subpackage imports another protocol's subpackage",
			graph: Graph{"transport/grpc/inferencepb": {Imports: []string{"transport/oip/v2"}}},
			want:  []string{"protocols-independent: transport/grpc/inferencepb -> transport/oip/v2"},
		},
		{
			name:  "the gRPC codec imports the protocol's model",
			graph: Graph{"transport/grpc": {Imports: []string{"transport/oip"}}},
		},
		{
			name: "the allowed edge is one edge",
			graph: Graph{
				"transport/oip":            {Imports: []string{"transport/grpc"}},
				"transport/grpc/inference": {Imports: []string{"transport/oip"}},
				"transport/grpc":           {Imports: []string{"transport/oip/model"}},
				"transport/rest":           {Imports: []string{"transport/oip"}},
			},
			want: []string{
				"protocols-independent: transport/grpc -> transport/oip/model",
				"protocols-independent: transport/grpc/inference -> transport/oip",
				"protocols-independent: transport/oip -> transport/grpc",
				"protocols-independent: transport/rest -> transport/oip",
			},
		},
		{
			name:   "allowed edges are configurable",
			config: &custom,
			graph:  Graph{"transport/grpc": {Imports: []string{"transport/oip"}}},
			want:   []string{"protocols-independent: transport/grpc -> transport/oip"},
		},
		{
			name: "every protocol imports the codecs",
			graph: Graph{
				"transport/rest":    {Imports: []string{"transport/codec", "transport/image"}},
				"transport/oip":     {Imports: []string{"transport/codec"}},
				"transport/codec":   {Imports: []string{"transport/image", "transport/meaning", "core"}},
				"transport/meaning": {Imports: []string{"core/tensor"}},
			},
		},
		{
			name: "a codec imports a protocol",
			graph: Graph{
				"transport/codec":      {Imports: []string{"transport/rest"}},
				"transport/image/exif": {TestImports: []string{"transport/oip"}},
			},
			want: []string{
				"codecs-over-core: transport/codec -> transport/rest",
				"codecs-over-core: transport/image/exif -> transport/oip",
			},
		},
		{
			name:  "a protocol test imports another",
			graph: Graph{"transport/oip": {TestImports: []string{"transport/rest"}}},
			want:  []string{"protocols-independent: transport/oip -> transport/rest"},
		},
		{
			name:   "plumbing is configurable",
			config: &custom,
			graph:  Graph{"transport/rest": {Imports: []string{"transport/supervisor", "transport/metrics"}}},
			want:   []string{"protocols-independent: transport/rest -> transport/metrics"},
		},
		{
			name:  "openapi imports the bench",
			graph: Graph{"openapi": {Imports: []string{"core", "cmd/internal/bench"}}},
			want:  []string{"bench-in-cmd: openapi -> cmd/internal/bench"},
		},
		{
			name:  "transport imports a bench subpackage",
			graph: Graph{"transport": {Imports: []string{"cmd/internal/bench/stats"}}},
			want:  []string{"bench-in-cmd: transport -> cmd/internal/bench/stats"},
		},
		{
			name:  "a session test imports the bench",
			graph: Graph{"core/session": {TestImports: []string{"cmd/internal/bench"}}},
			want:  []string{"bench-in-cmd: core/session -> cmd/internal/bench"},
		},
		{
			name:  "a non-test import of a test helper is checked",
			graph: Graph{"core": {Imports: []string{"transport/rest/resttest"}}},
			want:  []string{"core-neutral: core -> transport/rest/resttest"},
		},
		{
			name:   "a test import of a test helper is not",
			config: &Config{TestHelpers: []string{"transport/rest/resttest"}},
			graph:  Graph{"core": {TestImports: []string{"transport/rest/resttest"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			if tt.config != nil {
				c = *tt.config
			}
			var got []string
			for _, v := range Check(tt.graph, c) {
				got = append(got, key(v))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("violations:\n got  %q\n want %q", got, tt.want)
			}
		})
	}
}

func TestViolationString(t *testing.T) {
	tests := []struct {
		graph Graph
		want  string
	}{
		{
			graph: Graph{"core/x": {Imports: []string{"transport/rest"}}},
			want:  "core/x imports transport/rest: breaks rule core-neutral: packages under core/ must not import anything under transport/ or openapi/",
		},
		{
			graph: Graph{"transport/rest": {TestImports: []string{"transport/oip"}}},
			want:  "transport/rest (in _test.go files) imports transport/oip: breaks rule protocols-independent: ",
		},
	}
	for _, tt := range tests {
		vs := Check(tt.graph, DefaultConfig())
		if len(vs) != 1 {
			t.Fatalf("Check(%v) = %v, want one violation", tt.graph, vs)
		}
		if got := vs[0].String(); !strings.HasPrefix(got, tt.want) {
			t.Errorf("String() = %q, want it to start with %q", got, tt.want)
		}
	}
}

func TestAddList(t *testing.T) {
	const module = "example.com/m"
	// Two builds' worth of go list -json output: the second adds an import
	// and turns a test-only import into a non-test one.
	builds := []string{`
{"ImportPath": "example.com/m/core", "Imports": ["fmt", "example.com/m/core/config"],
 "TestImports": ["testing", "example.com/m/core/config"], "XTestImports": ["example.com/m/core", "example.com/m/core/tensor"]}
{"ImportPath": "example.com/m/providers", "XTestImports": ["example.com/m/core"]}
{"ImportPath": "example.com/other", "Imports": ["example.com/m/core"]}
`, `
{"ImportPath": "example.com/m/core", "Imports": ["example.com/m/core/tensor", "example.com/m/providers"]}
{"ImportPath": "example.com/m/session", "Imports": ["example.com/rt", "example.com/rt/sub"], "TestImports": ["example.com/rt"]}
`}
	g := Graph{}
	for _, b := range builds {
		if err := addList(g, strings.NewReader(b), module, "example.com/rt"); err != nil {
			t.Fatal(err)
		}
	}
	want := Graph{
		"core":      {Imports: []string{"core/config", "core/tensor", "providers"}, TestImports: []string{"core"}},
		"providers": {TestImports: []string{"core"}},
		"session":   {Imports: []string{"example.com/rt"}},
	}
	if len(g) != len(want) {
		t.Fatalf("graph = %v, want %v", g, want)
	}
	for p, w := range want {
		if !slices.Equal(g[p].Imports, w.Imports) || !slices.Equal(g[p].TestImports, w.TestImports) {
			t.Errorf("%s = %+v, want %+v", p, g[p], w)
		}
	}

	err := addList(Graph{}, strings.NewReader(`{"ImportPath": "example.com/m/bad", "Error": {"Err": "no Go files"}}`), module, "example.com/rt")
	if err == nil || !strings.Contains(err.Error(), "example.com/m/bad: no Go files") {
		t.Errorf("a package go list could not load: err = %v", err)
	}
}

// TestModule checks the real module's import graph, across every build
// configuration that selects different files.
func TestModule(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	builds := DefaultBuilds(runtime.GOOS)
	c := DefaultConfig()
	g, module, err := Load(ctx, ".", builds, c.Runtime)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g["core"]; !ok {
		t.Fatalf("go list found no package core in %s: %v", module, g)
	}
	edges := 0
	for _, p := range g {
		edges += len(p.Imports) + len(p.TestImports)
	}
	t.Logf("%s: %d packages, %d internal import edges, builds %v", module, len(g), edges, builds)
	for _, v := range Check(g, c) {
		t.Errorf("%s", v)
	}
	// The boundary is where it should be: the check would see a crossing.
	if bound := reachRuntime(g, c.Runtime); !bound["core/session"] || bound["core/sched"] || bound["core"] {
		t.Errorf("packages reaching %s: core/session %v, core/sched %v, core %v; want only core/session",
			c.Runtime, bound["core/session"], bound["core/sched"], bound["core"])
	}
}
