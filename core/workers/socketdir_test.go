//go:build !windows

package workers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSocketDir: the workers' socket directory is private, and leaves room
// for the socket names under a long TMPDIR.
func TestSocketDir(t *testing.T) {
	short := t.TempDir()
	long := filepath.Join(short, strings.Repeat("d", 90))
	if err := os.MkdirAll(long, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, tmpdir, wantParent string
	}{
		{"short TMPDIR", short, short},
		{"long TMPDIR", long, "/tmp"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TMPDIR", tt.tmpdir)
			dir, err := socketDir()
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(dir)
			fi, err := os.Stat(dir)
			if err != nil || fi.Mode().Perm() != 0o700 || filepath.Dir(dir) != tt.wantParent {
				t.Fatalf("socketDir() = %s (%v, %v), want a 0700 directory in %s", dir, fi.Mode(), err, tt.wantParent)
			}
			if n := len(dir) + len("/worker-1000.sock"); n > 100 {
				t.Errorf("socket paths of %d bytes", n)
			}
		})
	}
}
