package imports

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// show writes violations one a line, as the tables below expect them:
// "from -> to", "from (test) -> to", or "from: unplaced".
func show(vs []Violation) []string {
	var out []string
	for _, v := range vs {
		switch {
		case v.To == "":
			out = append(out, v.From+": unplaced")
		case v.Test:
			out = append(out, v.From+" (test) -> "+v.To)
		default:
			out = append(out, v.From+" -> "+v.To)
		}
	}
	return out
}

// TestCheck: the real table on synthetic graphs, the two deliberate
// violations of the issue among them: a protocol importing the ONNX
// Runtime boundary, and a codec importing a protocol.
func TestCheck(t *testing.T) {
	tests := []struct {
		name  string
		graph Graph
		want  []string
	}{
		{"allowed edges", Graph{
			"transport/rest":    {Imports: []string{"transport", "core/codec", "core/codec/image", "core/tensor"}},
			"transport/grpcapi": {Imports: []string{"transport/oip", "transport/repository", "transport/access"}},
			"core/codec":        {Imports: []string{"core/codec/decode", "core/budget", "core/config"}},
			"core/session":      {Imports: []string{Runtime, "providers", "core/onnxrt"}},
			"cmd/svc":           {Imports: []string{"cmd/internal/bench", "core/session", "openapi"}, TestImports: []string{"ci/hostile"}},
		}, nil},
		{"a protocol imports the ONNX Runtime boundary", Graph{
			"transport/rest": {Imports: []string{"core/session"}},
		}, []string{"transport/rest -> core/session"}},
		{"a codec imports a protocol", Graph{
			"core/codec": {Imports: []string{"transport/rest"}},
		}, []string{"core/codec -> transport/rest"}},
		{"a codec imports ONNX Runtime", Graph{
			"core/codec/image": {Imports: []string{Runtime}},
		}, []string{"core/codec/image -> " + Runtime}},
		{"a protocol imports another", Graph{
			"transport/oip":  {Imports: []string{"transport/rest"}},
			"transport/rest": {TestImports: []string{"transport/stream"}},
		}, []string{"transport/oip -> transport/rest", "transport/rest (test) -> transport/stream"}},
		{"an exception goes one way only", Graph{
			"transport/oip": {Imports: []string{"transport/grpcapi"}},
		}, []string{"transport/oip -> transport/grpcapi"}},
		{"core imports transport", Graph{
			"core/seq": {Imports: []string{"transport"}},
		}, []string{"core/seq -> transport"}},
		{"a provider imports svc outside providers", Graph{
			"providers/cuda": {Imports: []string{"core/config"}},
		}, []string{"providers/cuda -> core/config"}},
		{"the scheduler's tests import the runtime", Graph{
			"core/sched": {TestImports: []string{"core/session"}},
		}, []string{"core/sched (test) -> core/session"}},
		{"the bench outside cmd", Graph{
			"openapi": {Imports: []string{"cmd/internal/bench"}},
		}, []string{"openapi -> cmd/internal/bench"}},
		{"a package the table does not place", Graph{
			"core/detect": {Imports: []string{"core/tensor"}},
		}, []string{"core/detect: unplaced"}},
		{"a test helper is for tests", Graph{
			"core":     {Imports: []string{"core/registry/hubtest"}},
			"core/seq": {TestImports: []string{"core/registry/hubtest", "ci/hostile"}},
		}, []string{"core -> core/registry/hubtest"}},
	}
	table := DefaultTable()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := show(Check(tt.graph, table)); !slices.Equal(got, tt.want) {
				t.Errorf("violations:\n got  %q\n want %q", got, tt.want)
			}
		})
	}
}

// TestViolationString: a violation says what is wrong and how to mend it.
func TestViolationString(t *testing.T) {
	table := DefaultTable()
	vs := Check(Graph{"transport/rest": {Imports: []string{"core/session"}}, "core/new": {}}, table)
	want := []string{
		"package core/new is in no layer of ci/imports/table.go: place it in the layer it belongs to",
		"transport/rest imports core/session: not allowed: the table does not put core/session (layer runtime) below transport/rest (layer protocols); an import must point down the layers, or be an exception with its reason",
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n got  %q\n want %q", got, want)
	}
}

// TestParseTable: what a malformed table is told.
func TestParseTable(t *testing.T) {
	tests := []struct {
		name, table string
		exceptions  []Exception
		want        string
	}{
		{"no heading", "NONE < a;", nil, "line 1: a rule before the first layer's heading"},
		{"a heading without its doc", "## base\nNONE < a;", nil, "line 1: a layer's heading"},
		{"no <", "## base: b\na, b;", nil, "a rule is"},
		{"used before placed", "## base: b\nx < a;", nil, "x is used before it is placed"},
		{"placed twice", "## base: b\nNONE < a;\nNONE < a;", nil, "a is placed twice"},
		{"unfinished", "## base: b\nNONE < a", nil, "the table ends inside a rule"},
		{"an exception without its reason", "## base: b\nNONE < a, b;", []Exception{{From: "a", To: "b"}}, "gives no reason"},
		{"an exception of an unknown package", "## base: b\nNONE < a;", []Exception{{From: "a", To: "zz", Why: "w"}}, "names a package the table does not place"},
	}
	for _, tt := range tests {
		_, err := ParseTable(tt.table, tt.exceptions, nil, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error holding %q", tt.name, err, tt.want)
		}
	}
	tb, err := ParseTable("## base: b\nNONE < a, b;\na < G;\nG, b < c;", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []struct {
		from, to string
		ok       bool
	}{{"c", "a", true}, {"c", "b", true}, {"a", "b", false}, {"b", "c", false}} {
		if got := tb.Allows(Edge{From: e.from, To: e.to}); got != e.ok {
			t.Errorf("%s -> %s allowed %v, want %v", e.from, e.to, got, e.ok)
		}
	}
}

// TestTableKeepsRules: the rules the layout promises follow from the
// table, whatever edges the code has today.
func TestTableKeepsRules(t *testing.T) {
	tb := DefaultTable()
	var all, protocols []string
	for _, l := range tb.Layers {
		all = append(all, l.Packages...)
		if l.Name == "protocols" {
			protocols = l.Packages
		}
	}
	helper := func(p string) bool { return tb.helpers["\x00"+p] != "" || strings.Contains(p, "providertest") }
	pure := []string{"core", "core/sched", "core/seq", "core/budget", "core/workers", "core/workers/seqroute", "core/internal/loop",
		"core/tensor", "core/tensor/tensorjson", "core/codec/decode", "core/codec/image", "core/codec/tokenizer"}
	for _, p := range pure {
		if tb.May(p, Runtime) || tb.May(p, "core/session") {
			t.Errorf("runtime boundary: %s may reach ONNX Runtime", p)
		}
	}
	for _, p := range all {
		within := func(root string) bool { return p == root || strings.HasPrefix(p, root+"/") }
		for _, q := range all {
			if !tb.May(p, q) {
				continue
			}
			qWithin := func(root string) bool { return q == root || strings.HasPrefix(q, root+"/") }
			switch {
			case within("providers") && !helper(p) && !qWithin("providers") && q != Runtime:
				t.Errorf("providers self-contained: %s may import %s", p, q)
			case within("core") && (qWithin("transport") || qWithin("openapi")):
				t.Errorf("core neutral: %s may import %s", p, q)
			case within("core/codec") && slices.Contains(protocols, q):
				t.Errorf("codecs below the protocols: %s may import %s", p, q)
			case !within("cmd") && qWithin("cmd/internal/bench"):
				t.Errorf("bench in cmd: %s may import %s", p, q)
			case slices.Contains(protocols, p) && slices.Contains(protocols, q) && !within(q) && tb.exceptions[p+"\x00"+q] == "" && !strings.HasPrefix(q, p+"/"):
				t.Errorf("protocols independent: %s may import %s", p, q)
			}
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
	g, module, err := Load(ctx, ".", builds, Runtime)
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
	for _, v := range Check(g, DefaultTable()) {
		t.Errorf("%s", v)
	}
}
