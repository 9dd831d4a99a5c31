// Package imports guards svc's architecture: it reads the module's package
// import graph with go list and checks every import edge against an
// allow-list by layer (table.go), in the manner of Go's own
// go/build/deps_test.go. Each package belongs to a layer and may import
// only what the table puts below it, plus single exceptions that each
// carry their reason; a package the table does not place fails, and so
// does an edge that points up or sideways. The rules the layout promises
// follow from the table, and TestTableKeepsRules checks that they do:
//
//   - the ONNX Runtime boundary: only core/onnxrt and core/session (and
//     the providers) reach the binding; the lifecycle, the scheduler, the
//     sequences, the budget, the codecs and the protocols do not, their
//     tests neither;
//   - the providers are self-contained: they import nothing of svc
//     outside providers/ (test helpers and _test.go exceptions aside);
//   - the protocols are independent: none imports another's packages,
//     but for the exceptions (transport/grpcapi over transport/oip and
//     transport/repository);
//   - the codecs sit below the protocols: none imports a protocol, and
//     none imports ONNX Runtime;
//   - nothing under core/ imports transport/ or openapi/;
//   - only cmd/ imports the benchmark tooling (cmd/internal/bench).
//
// Check is a pure function of a Graph and a Table, so that the rules can
// be tested on synthetic graphs; Load builds the Graph of the real module.
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

// Runtime is the import path of the ONNX Runtime binding, the one package
// outside the module that the graph records; the table calls it ORT.
const Runtime = "github.com/yalue/onnxruntime_go"

// Package is one node of a Graph: the module packages that the package's
// non-test files import, and those that only its _test.go files (in-package
// or external tests) import.
type Package struct {
	Imports     []string
	TestImports []string
}

// Graph maps a package's path relative to the module root ("core/config")
// to its imports of other packages of the same module, also relative.
// Imports of packages outside the module are not in it, but for Runtime.
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

// Exception is one import edge the layers do not allow, with its reason;
// a test helper is an Exception with no From.
type Exception struct {
	From, To, Why string
}

// Layer is one layer of the table: its name, what it holds, and its
// packages.
type Layer struct {
	Name, Doc string
	Packages  []string
}

// Table is a parsed allow-list.
type Table struct {
	// Layers in the table's order, bottom up.
	Layers []Layer
	// allowed maps each package (and group) to what it may import,
	// closed under "what that may import".
	allowed map[string]map[string]bool
	// layer maps each package to its layer's name.
	layer map[string]string
	// exceptions and testExceptions by "from\x00to"; helpers by package.
	exceptions, testExceptions, helpers map[string]string
}

// ParseTable reads an allow-list: lines "A, B < C, D;" under comments
// "## name: what it holds"; a name in capitals is a group (ORT is
// Runtime, NONE is nothing). exceptions and testExceptions are single
// edges the layers do not allow, helpers the packages any _test.go file
// may import; each needs its reason.
func ParseTable(text string, exceptions, testExceptions, helpers []Exception) (*Table, error) {
	t := &Table{allowed: map[string]map[string]bool{}, layer: map[string]string{},
		exceptions: map[string]string{}, testExceptions: map[string]string{}, helpers: map[string]string{}}
	var stmt strings.Builder
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "## "):
			name, doc, ok := strings.Cut(strings.TrimPrefix(line, "## "), ": ")
			if !ok {
				return nil, fmt.Errorf("line %d: a layer's heading is \"## name: what it holds\"", n+1)
			}
			t.Layers = append(t.Layers, Layer{Name: name, Doc: doc})
			continue
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		}
		stmt.WriteString(" " + line)
		if !strings.HasSuffix(line, ";") {
			continue
		}
		if len(t.Layers) == 0 {
			return nil, fmt.Errorf("line %d: a rule before the first layer's heading", n+1)
		}
		if err := t.rule(strings.TrimSuffix(stmt.String(), ";")); err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		stmt.Reset()
	}
	if strings.TrimSpace(stmt.String()) != "" {
		return nil, fmt.Errorf("the table ends inside a rule: %q", stmt.String())
	}
	for _, set := range []struct {
		into map[string]string
		list []Exception
		from bool
	}{{t.exceptions, exceptions, true}, {t.testExceptions, testExceptions, true}, {t.helpers, helpers, false}} {
		for _, e := range set.list {
			switch {
			case e.Why == "":
				return nil, fmt.Errorf("exception %s -> %s gives no reason", e.From, e.To)
			case set.from && (t.layer[e.From] == "" || t.layer[e.To] == "" && e.To != Runtime):
				return nil, fmt.Errorf("exception %s -> %s names a package the table does not place", e.From, e.To)
			}
			set.into[e.From+"\x00"+e.To] = e.Why
		}
	}
	return t, nil
}

// rule adds one rule "A, B < C, D": C and D may import A and B and what
// those may import.
func (t *Table) rule(stmt string) error {
	lhs, rhs, ok := strings.Cut(stmt, "<")
	if !ok || strings.Contains(rhs, "<") {
		return fmt.Errorf("a rule is \"A, B < C, D;\": %q", strings.TrimSpace(stmt))
	}
	below := names(lhs)
	above := names(rhs)
	if len(above) == 0 || len(below) == 0 {
		return fmt.Errorf("a rule needs names on both sides of <: %q", strings.TrimSpace(stmt))
	}
	layer := &t.Layers[len(t.Layers)-1]
	for _, b := range below {
		if b != "NONE" && b != Runtime && t.allowed[b] == nil {
			return fmt.Errorf("%s is used before it is placed", b)
		}
	}
	for _, a := range above {
		if t.allowed[a] != nil && !isGroup(a) {
			return fmt.Errorf("%s is placed twice", a)
		}
		set := t.allowed[a]
		if set == nil {
			set = map[string]bool{}
			t.allowed[a] = set
		}
		for _, b := range below {
			if b == "NONE" {
				continue
			}
			if !isGroup(b) {
				set[b] = true
			}
			for x := range t.allowed[b] {
				set[x] = true
			}
		}
		if !isGroup(a) {
			t.layer[a] = layer.Name
			layer.Packages = append(layer.Packages, a)
		}
	}
	return nil
}

// names splits a side of a rule into its names, ORT read as Runtime.
func names(side string) []string {
	var out []string
	for _, f := range strings.Split(side, ",") {
		if f = strings.TrimSpace(f); f == "ORT" {
			f = Runtime
		}
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// isGroup reports whether name is a group (in capitals), not a package.
func isGroup(name string) bool {
	return name != "" && strings.ToUpper(name) == name && !strings.Contains(name, "/")
}

// Allows reports whether from may import to: the table puts to below
// from, or an exception allows the edge; a test edge may also go to a
// test helper or be a test exception.
func (t *Table) Allows(e Edge) bool {
	switch {
	case e.From == e.To, t.allowed[e.From][e.To], t.exceptions[e.From+"\x00"+e.To] != "":
		return true
	case e.Test:
		return t.helpers["\x00"+e.To] != "" || t.testExceptions[e.From+"\x00"+e.To] != ""
	}
	return false
}

// May reports whether package from may import to, directly or through
// others, by the table and its exceptions (not test-only ones).
func (t *Table) May(from, to string) bool {
	if t.allowed[from][to] || t.exceptions[from+"\x00"+to] != "" {
		return true
	}
	for x := range t.allowed[from] {
		if t.exceptions[x+"\x00"+to] != "" {
			return true
		}
	}
	return false
}

// LayerOf is the name of the layer that places p ("" if none).
func (t *Table) LayerOf(p string) string { return t.layer[p] }

// DefaultTable is svc's table (table.go). It panics if the table does not
// parse; TestDefaultTable checks that it does.
func DefaultTable() *Table {
	t, err := ParseTable(table, exceptions, testExceptions, testHelpers)
	if err != nil {
		panic("ci/imports: " + err.Error())
	}
	return t
}

// Violation is a package the table does not place (Edge.To empty), or an
// import edge it does not allow.
type Violation struct {
	Edge
	table *Table
}

// String says what is wrong and what would mend it.
func (v Violation) String() string {
	if v.To == "" {
		return fmt.Sprintf("package %s is in no layer of ci/imports/table.go: place it in the layer it belongs to", v.From)
	}
	from, to := v.table.LayerOf(v.From), v.table.LayerOf(v.To)
	if to == "" {
		to = "none"
	}
	return fmt.Sprintf("%s: not allowed: the table does not put %s (layer %s) below %s (layer %s); an import must point down the layers, or be an exception with its reason",
		v.Edge, v.To, to, v.From, from)
}

// Check returns every package of g that t does not place and every edge of
// g that t does not allow, sorted by importing package and imported
// package.
func Check(g Graph, t *Table) []Violation {
	var out []Violation
	for from, p := range g {
		if t.LayerOf(from) == "" {
			out = append(out, Violation{Edge: Edge{From: from}, table: t})
			continue
		}
		for _, to := range p.Imports {
			if e := (Edge{From: from, To: to}); !t.Allows(e) {
				out = append(out, Violation{Edge: e, table: t})
			}
		}
		for _, to := range p.TestImports {
			if e := (Edge{From: from, To: to, Test: true}); !t.Allows(e) {
				out = append(out, Violation{Edge: e, table: t})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.From != b.From {
			return a.From < b.From
		}
		return a.To < b.To
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
