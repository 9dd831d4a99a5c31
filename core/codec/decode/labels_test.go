package decode

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadLabels(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []string
	}{
		{"LF with final newline", "cat\ndog\n", []string{"cat", "dog"}},
		{"no final newline", "cat\ndog", []string{"cat", "dog"}},
		{"CRLF and BOM", "\uFEFFcat\r\ndog\r\n", []string{"cat", "dog"}},
		{"mixed line ends", "cat\r\ndog\nbird\r", []string{"cat", "dog", "bird"}},
		{"empty lines inside are labels", "a\n\nb\n\n", []string{"a", "", "b", ""}},
		{"spaces kept", " \nx y \n\tz\n", []string{" ", "x y ", "\tz"}},
		{"Chinese", "中\n文\r\n字\n", []string{"中", "文", "字"}},
		{"one empty line", "\n", []string{""}},
		{"a BOM only in front", "\uFEFF\uFEFF\n", []string{"\uFEFF"}},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "labels"+string(rune('a'+i))+".txt")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := LoadLabels(path)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("LoadLabels = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLoadLabelsErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	missing := filepath.Join(dir, "missing.txt")
	empty := write("empty.txt", "")
	bom := write("bom.txt", "\uFEFF")
	latin1 := write("latin1.txt", "ok\ncaf\xe9\n")
	tests := []struct {
		path, want string
	}{
		{missing, "labels: open " + missing + ": no such file or directory"},
		{empty, "labels " + empty + ": no labels"},
		{bom, "labels " + bom + ": no labels"},
		{latin1, "labels " + latin1 + ": line 2 is not UTF-8"},
	}
	for _, tt := range tests {
		got, err := LoadLabels(tt.path)
		if err == nil || err.Error() != tt.want {
			t.Errorf("LoadLabels(%s) = %q, %v; want error %q", filepath.Base(tt.path), got, err, tt.want)
		}
	}
}

func TestLabelsFromMetadata(t *testing.T) {
	tests := []struct {
		name    string
		meta    map[string]string
		want    []string
		wantKey string
	}{
		{"JSON labels", map[string]string{"labels": `["cat", "dog \"x\"", "猫"]`}, []string{"cat", `dog "x"`, "猫"}, "labels"},
		{"labels win over names", map[string]string{"labels": `["a"]`, "names": "{0: 'b'}"}, []string{"a"}, "labels"},
		{"Python list labels", map[string]string{"labels": `['a', "it's"]`}, []string{"a", "it's"}, "labels"},
		{"dict labels", map[string]string{"labels": `{"0": "a", "1": "b"}`}, []string{"a", "b"}, "labels"},
		{"newline labels", map[string]string{"labels": "a, b\nc\n"}, []string{"a, b", "c"}, "labels"},
		{"comma labels", map[string]string{"labels": " cat, dog ,bird "}, []string{"cat", "dog", "bird"}, "labels"},
		{"one label", map[string]string{"labels": "cat"}, []string{"cat"}, "labels"},
		{"bad labels fall back to names", map[string]string{"labels": "[1, 2", "names": "{0: 'b'}"}, []string{"b"}, "names"},
		{"empty labels fall back to names", map[string]string{"labels": " ", "names": "['x']"}, []string{"x"}, "names"},
		{"empty JSON labels fall back", map[string]string{"labels": "[]", "names": "{0: 'b'}"}, []string{"b"}, "names"},
		{"Ultralytics names", map[string]string{"names": "{0: 'person', 1: 'bicycle', 2: 'car'}", "stride": "32"},
			[]string{"person", "bicycle", "car"}, "names"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, key, ok := LabelsFromMetadata(tt.meta)
			if !ok || key != tt.wantKey || !slices.Equal(got, tt.want) {
				t.Errorf("LabelsFromMetadata = %q, %q, %v; want %q, %q, true", got, key, ok, tt.want, tt.wantKey)
			}
		})
	}
	for _, meta := range []map[string]string{
		nil,
		{"author": "x"},
		{"names": "{}"},
		{"names": "[]"},
		{"names": "{0: 'a'"},
		{"labels": "[]"},
		{"labels": "{}", "names": "person"},
	} {
		if got, key, ok := LabelsFromMetadata(meta); ok {
			t.Errorf("LabelsFromMetadata(%q) = %q, %q, true; want not ok", meta, got, key)
		}
	}
}

func TestParseNames(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"{0: 'person', 1: 'bicycle', 2: \"it's\"}", []string{"person", "bicycle", "it's"}},
		{`{0: 'a\'b', 1: "q\"q", 2: 'back\\slash'}`, []string{"a'b", `q"q`, `back\slash`}},
		{`{0: '\n\t\r\a\b\f\v', 1: '\x41\u00e9\U0001F600', 2: '\101\0\7777'}`,
			[]string{"\n\t\r\a\b\f\v", "Aé😀", "A\x00\u01ff7"}},
		{`{0: 'keep \d \\d', 1: 'line\
continued'}`, []string{`keep \d \d`, "linecontinued"}},
		{"{0: '中', 1: '文'}", []string{"中", "文"}},
		{"{1: 'b', 3: 'd'}", []string{"0", "b", "2", "d"}},
		{"{2: 'c', 0: 'a', 1: 'b',}", []string{"a", "b", "c"}},
		{"{0: 'a', 0: 'z'}", []string{"z"}},
		{" {\n  0 : 'a' ,\n  1:'b'\n} ", []string{"a", "b"}},
		{`{"0": "a", '1': 'b'}`, []string{"a", "b"}},
		{"{007: 'x'}", []string{"0", "1", "2", "3", "4", "5", "6", "x"}},
		{"{}", []string{}},
		{"['a', \"b\", '']", []string{"a", "b", ""}},
		{"[]", nil},
	}
	for _, tt := range tests {
		got, ok := parseNames(tt.in)
		if !ok || !slices.Equal(got, tt.want) {
			t.Errorf("parseNames(%q) = %q, %v; want %q, true", tt.in, got, ok, tt.want)
		}
	}
}

func TestParseNamesMalformed(t *testing.T) {
	for _, in := range []string{
		"", " ", "person", "{", "[", "{0: 'a'", "['a'", "{0 'a'}", "{0: a}", "{0: 'a' 1: 'b'}",
		"{-1: 'a'}", "{+1: 'a'}", "{1.0: 'a'}", "{0x1: 'a'}", "{'a': 'b'}", "{: 'a'}", "{0: 'a'}}",
		"{0: 'a'} x", "{0: 'a\nb'}", "{0: 'a}", `{0: 'a\'}`, `{0: 'a\`, `{0: '\x4'}`, `{0: '\xzz'}`,
		`{0: '\u12'}`, `{0: '\U00110000'}`, `{0: '\N{BULLET}'}`, "{0: '''a'''}", "{0: r'a'}",
		"{1048576: 'a'}", "{99999999999999999999: 'a'}", "{0: 'a',, 1: 'b'}", "{,}", "['a',,]",
		"[0]", "{0: 1}", "{0: ['a']}",
	} {
		if got, ok := parseNames(in); ok {
			t.Errorf("parseNames(%q) = %q, true; want not ok", in, got)
		}
	}
	// The largest index accepted.
	got, ok := parseNames("{1048575: 'last'}")
	if !ok || len(got) != 1<<20 || got[1<<20-1] != "last" || got[12345] != "12345" {
		t.Errorf("parseNames of the largest key: %d labels, %v", len(got), ok)
	}
}

// FuzzNames: parseNames never panics; what it accepts is a dict or a list,
// and, for a dict, a missing index is labelled with its decimal form.
func FuzzNames(f *testing.F) {
	for _, s := range []string{
		"{0: 'person', 1: 'bicycle', 2: \"it's\"}",
		`{0: 'a\'b', 1: "q\"q", 2: '\x41\u00e9\U0001F600\101'}`,
		"{1: 'b', 3: 'd'}",
		"['a', \"b\"]",
		`{0: 'line\
continued'}`,
		"{0: '中'}",
		"{0: 'a'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		labels, ok := parseNames(s)
		if !ok {
			if labels != nil {
				t.Errorf("parseNames(%q) is not ok but returned %q", s, labels)
			}
			return
		}
		trimmed := strings.TrimSpace(s)
		if !strings.HasPrefix(trimmed, "{") && !strings.HasPrefix(trimmed, "[") {
			t.Errorf("parseNames(%q) accepted something that is neither a dict nor a list", s)
		}
		if len(labels) > maxLabels {
			t.Errorf("parseNames(%q) gave %d labels", s, len(labels))
		}
	})
}
