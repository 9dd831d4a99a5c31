package mdsection

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplace(t *testing.T) {
	tests := []struct {
		name, doc, body, want, err string
	}{
		{name: "empty file", doc: "", body: "x\n",
			want: "<!-- bench:begin -->\nx\n<!-- bench:end -->\n"},
		{name: "appended after a blank line", doc: "# Benchmarks\nhand", body: "x",
			want: "# Benchmarks\nhand\n\n<!-- bench:begin -->\nx\n<!-- bench:end -->\n"},
		{name: "replaced in place, the rest kept", doc: "analysis\n\n<!-- bench:begin -->\nold\ntables\n<!-- bench:end -->\n\n<!-- soak:begin -->\ns\n<!-- soak:end -->\n", body: "new\n\n",
			want: "analysis\n\n<!-- bench:begin -->\nnew\n<!-- bench:end -->\n\n<!-- soak:begin -->\ns\n<!-- soak:end -->\n"},
		{name: "empty body", doc: "<!-- bench:begin -->\nold\n<!-- bench:end -->\n", body: "",
			want: "<!-- bench:begin -->\n<!-- bench:end -->\n"},
		{name: "another section only", doc: "<!-- soak:begin -->\ns\n<!-- soak:end -->\n", body: "x",
			want: "<!-- soak:begin -->\ns\n<!-- soak:end -->\n\n<!-- bench:begin -->\nx\n<!-- bench:end -->\n"},
		{name: "markers quoted in the text are not markers", doc: "Between `<!-- bench:begin -->\n` and the end:\n\n<!-- bench:begin -->\nold\n<!-- bench:end -->\nx <!-- bench:end -->\n", body: "new",
			want: "Between `<!-- bench:begin -->\n` and the end:\n\n<!-- bench:begin -->\nnew\n<!-- bench:end -->\nx <!-- bench:end -->\n"},
		{name: "no end marker", doc: "<!-- bench:begin -->\nold\n", body: "x", err: "without an end marker"},
		{name: "end marker before begin", doc: "<!-- bench:end -->\n<!-- bench:begin -->\n", body: "x", err: "without an end marker"},
		{name: "two begin markers", doc: "<!-- bench:begin -->\n<!-- bench:end -->\n<!-- bench:begin -->\n<!-- bench:end -->\n", body: "x", err: "two begin markers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Replace([]byte(tt.doc), "bench", []byte(tt.body))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestWriteFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "B.md")
	for _, body := range []string{"first", "second"} {
		if err := WriteFile(file, "soak", []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != "<!-- soak:begin -->\nsecond\n<!-- soak:end -->\n" {
		t.Errorf("written twice: %q", b)
	}
	if err := os.WriteFile(file, []byte("<!-- soak:begin -->\nhand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(file, "soak", []byte("x")); err == nil {
		t.Error("a file with a begin marker and no end marker was overwritten")
	}
	if b, _ := os.ReadFile(file); string(b) != "<!-- soak:begin -->\nhand\n" {
		t.Errorf("the file changed on error: %q", b)
	}
}
