// Package funclen finds the product functions that are too long to read in
// one go: it parses every non-test, non-generated Go file of a module with
// go/parser and measures each function, method and function literal
// assigned at top level, from its func keyword to its closing brace.
//
// Files of every build constraint count (windows-only providers as well as
// linux ones); _test.go files, generated files (the "Code generated ... DO
// NOT EDIT." header), testdata directories, directories the go command
// ignores (starting with "." or "_") and nested modules (a directory with
// its own go.mod) do not.
package funclen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Func is one function longer than the limit.
type Func struct {
	// File is the file's path relative to the module root, with slashes.
	File string
	// Line is the line of the func keyword.
	Line int
	// Name is "Name" for a function, "Recv.Name" for a method and
	// "var name" for a function literal assigned at top level.
	Name string
	// Lines counts the lines from the func keyword to the closing brace.
	Lines int
}

func (f Func) String() string {
	return fmt.Sprintf("%s:%d: %s is %d lines", f.File, f.Line, f.Name, f.Lines)
}

// Long returns the functions of the module rooted at root that are longer
// than max lines, sorted by file and line.
func Long(root string, max int) ([]Func, error) {
	var long []Func
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDir(path, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("funclen: %w", err)
		}
		if ast.IsGenerated(f) {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return fmt.Errorf("funclen: %w", err)
		}
		for _, fn := range funcs(fset, f) {
			if fn.Lines > max {
				fn.File = filepath.ToSlash(rel)
				long = append(long, fn)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(long, func(i, j int) bool {
		if long[i].File != long[j].File {
			return long[i].File < long[j].File
		}
		return long[i].Line < long[j].Line
	})
	return long, nil
}

// skipDir reports whether the walk leaves out the directory at path, named
// name: what the go command ignores, testdata, and nested modules.
func skipDir(path, name string) bool {
	if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return true
	}
	_, err := os.Stat(filepath.Join(path, "go.mod"))
	return err == nil
}

// funcs measures every function and method of f, and every function
// literal in the value of a top-level var (the outermost one only: a
// literal inside another counts as part of it).
func funcs(fset *token.FileSet, f *ast.File) []Func {
	var out []Func
	measure := func(name string, from, to token.Pos) {
		start := fset.Position(from).Line
		out = append(out, Func{Line: start, Name: name, Lines: fset.Position(to).Line - start + 1})
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Body != nil {
				measure(funcName(d), d.Pos(), d.End())
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				vs, ok := spec.(*ast.ValueSpec)
				if !ok {
					continue
				}
				for i, v := range vs.Values {
					name := "var " + vs.Names[min(i, len(vs.Names)-1)].Name
					ast.Inspect(v, func(n ast.Node) bool {
						lit, ok := n.(*ast.FuncLit)
						if ok {
							measure(name, lit.Pos(), lit.End())
						}
						return !ok
					})
				}
			}
		}
	}
	return out
}

// funcName is "Name" for a function and "Recv.Name" for a method (the
// receiver's type without pointer or type parameters).
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + d.Name.Name
	}
	return d.Name.Name
}
