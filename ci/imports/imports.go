// Package imports guards svc's architecture: it reads the module's package
// import graph with go list and checks every import edge against the
// layering that the repository's layout promises.
//
//   - core/... is the protocol-neutral runtime: it imports nothing under
//     transport/ or openapi/.
//   - core/session is the ONNX Runtime boundary: the model's lifecycle
//     (core itself), the scheduler (core/sched) and what they build on
//     (core/internal/..., core/tensor/...) depend on onnxruntime_go neither
//     directly nor through another package, in their tests neither, so
//     that they are pure Go, tested without the runtime. So does
//     transport/meaning, which every protocol shares.
//   - providers/... holds the execution providers and imports no svc package
//     outside providers/, apart from the test helper
//     providers/internal/providertest and _test.go files.
//   - transport/ is shared HTTP plumbing with one package per protocol under
//     it (transport/rest, transport/oip, ...). A protocol, with its
//     subpackages, imports no other protocol; the plumbing packages
//     (transport itself and the Config.Plumbing children such as
//     transport/supervisor) are not protocols and may be imported by all.
//     The exceptions are single edges (Config.ProtocolImports): the gRPC
//     codec of the Open Inference Protocol, transport/grpc, imports the
//     protocol's model in transport/oip, and the model-repository
//     extension's handler in transport/repository, whose RPCs it serves.
//   - the codecs of what users hold (Config.Codecs: transport/codec,
//     transport/image, transport/meaning, transport/text) sit beside the
//     protocols, over core: every protocol may import them, and they import
//     no protocol.
//     transport/image, transport/meaning and transport/text are pure Go,
//     like core.
//   - the benchmark tooling left in the module (cmd/internal/bench: svc
//     bench, and BenchmarkRaw, the in-process baseline of make bench) is
//     imported only from cmd/. The rest of the tooling is in modules of its
//     own that svc's go.mod does not require, so no package of svc can
//     import it: build/benchreport (BENCHMARKS.md's tables, the soak) and
//     ci/browser (the browser test).
//
// The rules (Check) are a pure function of a Graph, so that they can be
// tested on synthetic graphs; Load builds the Graph of the real module.
// A _test.go import of a test helper package (Config.TestHelpers) breaks no
// rule.
package imports

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Package is one node of a Graph: the module packages that the package's
// non-test files import, and those that only its _test.go files (in-package
// or external tests) import.
type Package struct {
	Imports     []string
	TestImports []string
}

// Graph maps a package's path relative to the module root ("core/config")
// to its imports of other packages of the same module, also relative.
// Imports of packages outside the module are not in it.
type Graph map[string]Package

// Edge is one import: From imports To. Test is set when only _test.go files
// of From import To.
type Edge struct {
	From, To string
	Test     bool
}

func (e Edge) String() string {
	if e.Test {
		return e.From + " (in _test.go files) imports " + e.To
	}
	return e.From + " imports " + e.To
}

// Import is one import edge by its packages: From imports To.
type Import struct {
	From, To string
}

// Config holds the names that the rules depend on. DefaultConfig is svc's.
type Config struct {
	// Plumbing lists the direct children of transport/ that are shared
	// plumbing rather than a protocol. Every other child of transport/,
	// together with its subpackages, is one protocol.
	Plumbing []string
	// Codecs lists the children of transport/ that turn what users hold
	// into tensors and tensors into meaning: shared by the protocols,
	// importing none.
	Codecs []string
	// ProtocolImports lists the imports of one protocol's package by
	// another's that the rules allow: exactly these two packages, not
	// their subpackages.
	ProtocolImports []Import
	// TestHelpers lists packages written for tests: a _test.go import of
	// one breaks no rule, and one under providers/ may itself import
	// outside providers/.
	TestHelpers []string
	// BenchTooling lists the roots of the benchmark tooling, which only
	// packages under cmd/ may import.
	BenchTooling []string
	// Runtime is the import path of the ONNX Runtime binding, the one
	// package outside the module that the graph records.
	Runtime string
	// Pure lists the packages that must not depend on Runtime, directly or
	// through other packages, tests included: a name, or a name followed
	// by "/..." for it and everything below it.
	Pure []string

	// bound holds the packages whose non-test imports reach Runtime; Check
	// works it out from the graph.
	bound map[string]bool
}

// DefaultConfig returns svc's configuration of the rules.
func DefaultConfig() Config {
	return Config{
		Plumbing: []string{"supervisor", "metrics", "access", "tracing"},
		Codecs:   []string{"codec", "image", "meaning", "text"},
		// The gRPC codec decodes into the protocol's model, and serves the
		// model-repository extension's RPCs over its REST routes' handler.
		ProtocolImports: []Import{{From: "transport/grpc", To: "transport/oip"}, {From: "transport/grpc", To: "transport/repository"}},
		TestHelpers:     []string{"providers/internal/providertest", "core/registry/hubtest"},
		BenchTooling:    []string{"cmd/internal/bench"},
		Runtime:         "github.com/yalue/onnxruntime_go",
		Pure:            []string{"core", "core/sched/...", "core/seq/...", "core/internal/...", "core/tensor/...", "transport/meaning/...", "transport/image/...", "transport/text/..."},
	}
}

// pure reports whether p is one of c.Pure.
func (c Config) pure(p string) bool {
	for _, q := range c.Pure {
		if root, ok := strings.CutSuffix(q, "/..."); ok && within(p, root) || p == q {
			return true
		}
	}
	return false
}

// reachRuntime returns the packages of g whose non-test imports reach
// runtime, directly or through other packages of g.
func reachRuntime(g Graph, runtime string) map[string]bool {
	bound := map[string]bool{runtime: true}
	for changed := true; changed; {
		changed = false
		for from, p := range g {
			if bound[from] {
				continue
			}
			for _, to := range p.Imports {
				if bound[to] {
					bound[from], changed = true, true
					break
				}
			}
		}
	}
	return bound
}

// Rule is one architectural constraint, checked on every import edge.
type Rule struct {
	// Name identifies the rule in violations.
	Name string
	// Doc states the rule in one sentence.
	Doc string
	// breaks reports whether e breaks the rule under c.
	breaks func(c Config, e Edge) bool
}

// Rules are the architecture's rules, in the order they are checked.
var Rules = []Rule{
	{
		Name: "core-neutral",
		Doc:  "packages under core/ must not import anything under transport/ or openapi/",
		breaks: func(_ Config, e Edge) bool {
			return within(e.From, "core") && (within(e.To, "transport") || within(e.To, "openapi"))
		},
	},
	{
		Name: "providers-self-contained",
		Doc:  "packages under providers/ (test helpers and _test.go files aside) must not import svc packages outside providers/",
		breaks: func(c Config, e Edge) bool {
			return within(e.From, "providers") && !e.Test && !slices.Contains(c.TestHelpers, e.From) &&
				!within(e.To, "providers") && e.To != c.Runtime
		},
	},
	{
		Name: "protocols-independent",
		Doc:  "a protocol package under transport/ must not import another protocol's packages (transport/ itself and its plumbing children are shared; Config.ProtocolImports lists the allowed edges)",
		breaks: func(c Config, e Edge) bool {
			from, to := c.protocol(e.From), c.protocol(e.To)
			return from != "" && to != "" && from != to &&
				!slices.Contains(c.ProtocolImports, Import{From: e.From, To: e.To})
		},
	},
	{
		Name: "codecs-over-core",
		Doc:  "a codec package under transport/ (Config.Codecs) must not import a protocol's packages: the protocols build on the codecs, not the other way round",
		breaks: func(c Config, e Edge) bool {
			return c.codec(e.From) && c.protocol(e.To) != ""
		},
	},
	{
		Name: "bench-in-cmd",
		Doc:  "only packages under cmd/ may import the benchmark tooling",
		breaks: func(c Config, e Edge) bool {
			if within(e.From, "cmd") {
				return false
			}
			for _, b := range c.BenchTooling {
				if within(e.To, b) {
					return true
				}
			}
			return false
		},
	},
	{
		Name: "runtime-boundary",
		Doc:  "the lifecycle (core), the scheduler (core/sched), their building blocks and the pure codecs (transport/image, transport/meaning, transport/text) must not depend on the ONNX Runtime binding, directly or through another package; only core/session and the packages beside it may",
		breaks: func(c Config, e Edge) bool {
			return c.pure(e.From) && c.bound[e.To]
		},
	},
}

// protocol returns the protocol that package p belongs to
// ("transport/rest" for transport/rest/...), or "" when p is not part of a
// protocol (outside transport/, transport itself, or plumbing).
func (c Config) protocol(p string) string {
	rest, ok := strings.CutPrefix(p, "transport/")
	if !ok {
		return ""
	}
	child, _, _ := strings.Cut(rest, "/")
	if slices.Contains(c.Plumbing, child) || slices.Contains(c.Codecs, child) {
		return ""
	}
	return "transport/" + child
}

// codec reports whether package p is one of the codecs or below one.
func (c Config) codec(p string) bool {
	for _, name := range c.Codecs {
		if within(p, "transport/"+name) {
			return true
		}
	}
	return false
}

// within reports whether package p is root or below it.
func within(p, root string) bool {
	return p == root || strings.HasPrefix(p, root+"/")
}

// Violation is an import edge that breaks a rule.
type Violation struct {
	Edge
	Rule Rule
}

// String names both packages, the rule and what the rule says.
func (v Violation) String() string {
	return fmt.Sprintf("%s: breaks rule %s: %s", v.Edge, v.Rule.Name, v.Rule.Doc)
}

// Check returns every edge of g that breaks one of Rules under c, sorted by
// importing package, imported package and rule. A package importing itself
// (an external test) and a _test.go import of a test helper are never
// violations.
func Check(g Graph, c Config) []Violation {
	c.bound = reachRuntime(g, c.Runtime)
	var out []Violation
	seen := map[string]bool{}
	check := func(e Edge) {
		if e.From == e.To || (e.Test && slices.Contains(c.TestHelpers, e.To)) {
			return
		}
		for _, r := range Rules {
			key := e.From + "\x00" + e.To + "\x00" + r.Name
			if seen[key] || !r.breaks(c, e) {
				continue
			}
			seen[key] = true
			out = append(out, Violation{Edge: e, Rule: r})
		}
	}
	for from, p := range g {
		for _, to := range p.Imports {
			check(Edge{From: from, To: to})
		}
		for _, to := range p.TestImports {
			check(Edge{From: from, To: to, Test: true})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.From != b.From {
			return a.From < b.From
		}
		if a.To != b.To {
			return a.To < b.To
		}
		return a.Rule.Name < b.Rule.Name
	})
	return out
}

// Build is one build configuration whose files go list reads: the target
// OS and build tags. cgo is on, so cgo-only files count too.
type Build struct {
	GOOS string
	Tags []string
}

func (b Build) String() string {
	s := "GOOS=" + b.GOOS
	if len(b.Tags) > 0 {
		s += " -tags " + strings.Join(b.Tags, ",")
	}
	return s
}

// DefaultBuilds cover every file of svc: the host build without tags, and
// each provider tag on the OS that its provider is compiled for (the same
// tags as ci/check-tags.sh).
func DefaultBuilds(hostGOOS string) []Build {
	return []Build{
		{GOOS: hostGOOS},
		{GOOS: "linux", Tags: []string{"cuda", "tensorrt", "rocm", "openvino"}},
		{GOOS: "windows", Tags: []string{"directml"}},
		{GOOS: "darwin", Tags: []string{"coreml"}},
	}
}

// Load lists the packages of the module containing dir under each build
// with go list and returns the union of their graphs, with the module's
// path. Imports of runtime (Config.Runtime), the one package outside the
// module it records, are kept under their full import path.
func Load(ctx context.Context, dir string, builds []Build, runtime string) (Graph, string, error) {
	gomod, err := goCmd(ctx, dir, nil, "env", "GOMOD")
	if err != nil {
		return nil, "", err
	}
	gomod = strings.TrimSpace(gomod)
	if gomod == "" || gomod == os.DevNull {
		return nil, "", fmt.Errorf("%s is not inside a Go module", dir)
	}
	root := filepath.Dir(gomod)
	module, err := goCmd(ctx, root, nil, "list", "-m")
	if err != nil {
		return nil, "", err
	}
	module = strings.TrimSpace(module)
	g := Graph{}
	for _, b := range builds {
		args := []string{"list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports,Error"}
		if len(b.Tags) > 0 {
			args = append(args, "-tags", strings.Join(b.Tags, ","))
		}
		args = append(args, "./...")
		out, err := goCmd(ctx, root, []string{"GOOS=" + b.GOOS, "CGO_ENABLED=1"}, args...)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", b, err)
		}
		if err := addList(g, strings.NewReader(out), module, runtime); err != nil {
			return nil, "", fmt.Errorf("go list with %s: %w", b, err)
		}
	}
	return g, module, nil
}

// listed is the part of go list -json's output that Load reads.
type listed struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
}

// addList decodes go list -json output from r and adds its packages of
// module to g, merging with what g already holds, with their imports of
// module's packages and of runtime. A package that go list could not load
// is an error: its imports would be missing from the check.
func addList(g Graph, r io.Reader, module, runtime string) error {
	var errs []error
	dec := json.NewDecoder(r)
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("decode go list output: %w", err)
		}
		if p.Error != nil {
			errs = append(errs, fmt.Errorf("%s: %s", p.ImportPath, p.Error.Err))
			continue
		}
		from, ok := relative(p.ImportPath, module)
		if !ok {
			continue
		}
		node := g[from]
		for _, imp := range p.Imports {
			if to, ok := relative(imp, module); ok {
				node.Imports = appendNew(node.Imports, to)
			} else if imp == runtime {
				node.Imports = appendNew(node.Imports, imp)
			}
		}
		for _, imp := range slices.Concat(p.TestImports, p.XTestImports) {
			if to, ok := relative(imp, module); ok {
				node.TestImports = appendNew(node.TestImports, to)
			} else if imp == runtime {
				node.TestImports = appendNew(node.TestImports, imp)
			}
		}
		g[from] = node
	}
	// An import made by non-test files in one build is not test-only.
	for from, node := range g {
		node.TestImports = slices.DeleteFunc(node.TestImports, func(to string) bool {
			return slices.Contains(node.Imports, to)
		})
		g[from] = node
	}
	return errors.Join(errs...)
}

// relative returns path relative to module ("." for the module's root
// package), and false when path is not in module.
func relative(path, module string) (string, bool) {
	if path == module {
		return ".", true
	}
	rel, ok := strings.CutPrefix(path, module+"/")
	return rel, ok
}

func appendNew(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// goCmd runs the go command in dir with extra environment variables and
// returns its standard output.
func goCmd(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
