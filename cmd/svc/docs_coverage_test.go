package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/svc-dev/svc/ci/imports"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/providers"
	_ "github.com/svc-dev/svc/providers/all"
)

// readPage returns a page of docs/.
func readPage(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDocsNameEveryOption: docs/cli.md has a section for every command
// 'svc --help' lists, naming every option its --help lists.
func TestDocsNameEveryOption(t *testing.T) {
	t.Parallel()
	sequential(t)
	page := readPage(t, "cli.md")
	sections := map[string]string{} // heading → body
	for _, s := range strings.Split(page, "\n## ")[1:] {
		heading, body, _ := strings.Cut(s, "\n")
		sections[heading] = body
	}
	commands := helpEntries(t, nil, `(?m)^   ([a-z]+)  `, "COMMANDS:")
	if len(commands) < 8 {
		t.Fatalf("svc --help lists %d commands: %q", len(commands), commands)
	}
	for _, cmd := range commands {
		if cmd == "help" {
			continue
		}
		var body string
		for heading, b := range sections {
			if strings.Contains(heading, "`svc "+cmd+"`") {
				body = b
			}
		}
		if body == "" {
			t.Errorf("docs/cli.md has no section headed `svc %s`", cmd)
			continue
		}
		for _, flag := range helpEntries(t, []string{cmd}, `(?m)^   (--[a-z-]+|--\[no-\][a-z-]+)`, "OPTIONS:") {
			names := []string{flag}
			if rest, ok := strings.CutPrefix(flag, "--[no-]"); ok {
				names = []string{"--" + rest, "--no-" + rest}
			}
			for _, name := range names {
				if name != "--help" && !strings.Contains(body, "`"+name) {
					t.Errorf("docs/cli.md, section `svc %s`, does not name %s", cmd, name)
				}
			}
		}
	}
}

// helpEntries runs 'svc ARGS --help' and returns the first group of each
// match of pattern after the line marker.
func helpEntries(t *testing.T, args []string, pattern, marker string) []string {
	t.Helper()
	code, out, errOut := runSvc(t, nil, append(args, "--help")...)
	_, after, ok := strings.Cut(out, marker)
	if code != 0 || !ok {
		t.Fatalf("svc %v --help: exit %d, no %s\n%s%s", args, code, marker, out, errOut)
	}
	var got []string
	for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(after, -1) {
		got = append(got, m[1])
	}
	return got
}

// TestDocsNameEveryKey: docs/configuration.md names every key of svc.yml,
// the providers' sections included.
func TestDocsNameEveryKey(t *testing.T) {
	t.Parallel()
	sequential(t)
	page := readPage(t, "configuration.md")
	keys := yamlKeys("", reflect.TypeFor[config.Config]())
	for _, k := range providers.KnownProviders() {
		if k.NewSettings != nil {
			keys = append(keys, yamlKeys("providers."+k.Name+".", reflect.TypeOf(k.NewSettings()).Elem())...)
		}
	}
	for _, want := range []string{"runtime.timeout", "models.NAME.path", "access.cors.max_age", "providers.device_id", "providers.tensorrt.engine_cache"} {
		if !slices.Contains(keys, want) {
			t.Fatalf("the keys found lack %s: %q", want, keys)
		}
	}
	for _, key := range keys {
		if !strings.Contains(page, "`"+key+"`") {
			t.Errorf("docs/configuration.md does not name `%s`", key)
		}
	}
}

// yamlKeys lists the dotted keys of a configuration type: a struct's yaml
// fields, a map of structs as NAME.
func yamlKeys(prefix string, typ reflect.Type) []string {
	var keys []string
	for f := range typ.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		switch ft := f.Type; {
		case ft.Kind() == reflect.Struct:
			keys = append(keys, yamlKeys(prefix+name+".", ft)...)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			keys = append(keys, yamlKeys(prefix+name+".NAME.", ft.Elem())...)
		default:
			keys = append(keys, prefix+name)
		}
	}
	return keys
}

// TestDocsNameEveryImportRule: docs/design.md names every layer of
// ci/imports' table.
func TestDocsNameEveryImportRule(t *testing.T) {
	t.Parallel()
	page := readPage(t, "design.md")
	for _, l := range imports.DefaultTable().Layers {
		if !strings.Contains(page, "| `"+l.Name+"` |") {
			t.Errorf("docs/design.md's import rules do not name the layer `%s` (%s)", l.Name, l.Doc)
		}
	}
}

// TestDocsLayoutListsEveryPackage: docs/design.md's layout lists exactly
// the packages go list finds, each once.
func TestDocsLayoutListsEveryPackage(t *testing.T) {
	t.Parallel()
	page := readPage(t, "design.md")
	_, layout, _ := strings.Cut(page, "\n## Layout\n")
	_, block, _ := strings.Cut(layout, "```text\n")
	block, _, _ = strings.Cut(block, "```")
	listed := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		listed[strings.Fields(line)[0]]++
	}
	list := exec.Command("go", "list", "./...")
	list.Dir = repoRoot
	out, err := list.Output()
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/svc-dev/svc/"
	for _, p := range strings.Fields(string(out)) {
		p = strings.TrimPrefix(p, module)
		if listed[p] != 1 {
			t.Errorf("docs/design.md's layout lists %s %d times, want once", p, listed[p])
		}
		delete(listed, p)
	}
	for p := range listed {
		t.Errorf("docs/design.md's layout lists %s, which go list does not find", p)
	}
}

// TestDocLinks: every relative link of README.md and docs/*.md reaches a
// file, and every #anchor a heading of the page it points to.
func TestDocLinks(t *testing.T) {
	t.Parallel()
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range docPages(t) {
		text, err := os.ReadFile(filepath.Join(repoRoot, page))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range proseLines(string(text)) {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				path := filepath.Join(repoRoot, page)
				if file != "" {
					path = filepath.Join(filepath.Dir(path), file)
				}
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link %s: %v", page, i+1, target, err)
					continue
				}
				if anchor != "" && !slices.Contains(headingAnchors(t, path), anchor) {
					t.Errorf("%s:%d: link %s: no heading #%s in %s", page, i+1, target, anchor, filepath.Base(path))
				}
			}
		}
	}
}

// proseLines returns a page's lines with those inside fenced blocks blanked.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "```") {
			fenced = !fenced
			lines[i] = ""
		} else if fenced {
			lines[i] = ""
		}
	}
	return lines
}

// headingAnchors returns the anchors GitHub gives a markdown file's
// headings: lower case, spaces as hyphens, punctuation but - and _ dropped.
func headingAnchors(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	var anchors []string
	for _, l := range proseLines(string(b)) {
		if h, ok := strings.CutPrefix(strings.TrimLeft(l, "#"), " "); ok && strings.HasPrefix(l, "#") {
			a := strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), ""), " ", "-")
			anchors = append(anchors, a)
		}
	}
	return anchors
}
