package all_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/svc-dev/svc/providers"
	_ "github.com/svc-dev/svc/providers/all"
	"github.com/svc-dev/svc/providers/internal/providertest"
)

const module = "github.com/svc-dev/svc/providers/"

// Every provider package (a directory of providers/ other than all and
// internal) is imported here, untagged, and declares the provider of its
// name; every declared provider has its package.
func TestEveryProviderIsImportedAndDeclared(t *testing.T) {
	imported := map[string]bool{}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		// The metadata must be known in every build: no constraints, by
		// comment or by file name (x_windows.go).
		if strings.Contains(name, "_") {
			t.Errorf("%s: a file name with _ may carry a build constraint", name)
		}
		for _, c := range f.Comments {
			for _, l := range c.List {
				if strings.HasPrefix(l.Text, "//go:build") {
					t.Errorf("%s has a build constraint (%s)", name, l.Text)
				}
			}
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			imported[strings.TrimPrefix(path, module)] = true
		}
	}
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "all" || e.Name() == "internal" {
			continue
		}
		dirs[e.Name()] = true
		if !imported[e.Name()] {
			t.Errorf("providers/all does not import providers/%s", e.Name())
		}
		if _, ok := providers.Info(e.Name()); !ok {
			t.Errorf("providers/%s declares no provider %q", e.Name(), e.Name())
		}
	}
	for _, k := range providers.KnownProviders() {
		if !dirs[k.Name] {
			t.Errorf("provider %s is declared but there is no providers/%s", k.Name, k.Name)
		}
	}
}

// Every provider compiled into this test binary (cpu, plus whatever the
// build tags add) returns the name, ONNX Runtime name and priority its
// package declared.
func TestCompiledProvidersMatchTheirDeclaration(t *testing.T) {
	set := providers.Registered()
	if len(set) == 0 || len(set) != len(providers.Compiled()) {
		t.Fatalf("Registered() = %v, Compiled() = %v", set.Names(), providers.Compiled())
	}
	for _, p := range set {
		t.Run(p.Name(), func(t *testing.T) { providertest.CheckContract(t, p) })
	}
}
