package main

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestReplaceSection: the section between the markers on lines of their
// own is replaced, markers named in prose are not; a file without them
// gets them at its end; markers out of order are an error.
func TestReplaceSection(t *testing.T) {
	tests := []struct {
		name, before, want string
		err                bool
	}{
		{"replaced", "# B\n\nprose names `<!-- text:begin -->` and `<!-- text:end -->`.\n\n<!-- text:begin -->\nold\n<!-- text:end -->\n\ntail\n",
			"# B\n\nprose names `<!-- text:begin -->` and `<!-- text:end -->`.\n\n<!-- text:begin -->\nnew\n<!-- text:end -->\n\ntail\n", false},
		{"appended", "# B\n", "# B\n\n<!-- text:begin -->\nnew\n<!-- text:end -->\n", false},
		{"out of order", "<!-- text:end -->\n<!-- text:begin -->\n", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "B.md")
			if err := os.WriteFile(p, []byte(tt.before), 0o644); err != nil {
				t.Fatal(err)
			}
			err := replaceSection(p, "new\n")
			if tt.err {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			got, _ := os.ReadFile(p)
			if err != nil || string(got) != tt.want {
				t.Fatalf("%v\n%q\nwant\n%q", err, got, tt.want)
			}
		})
	}
}
