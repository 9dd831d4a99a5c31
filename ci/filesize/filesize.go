// Package filesize keeps large files out of the repository: every clone and
// source archive carries each tracked file, so a built binary or a
// downloaded model committed by mistake costs every user of the source.
// Test fixtures (any testdata/ folder) and the examples/ tree are exempt;
// they hold the small generated models the tests and docs run.
package filesize

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// MaxBytes is the largest a tracked file outside the exempt folders may be.
const MaxBytes = 1 << 20

// File is a tracked file over the limit.
type File struct {
	Path string
	Size int64
}

func (f File) String() string {
	return fmt.Sprintf("%s: %.1f MiB", f.Path, float64(f.Size)/(1<<20))
}

// Exempt reports whether a repository path may hold a large file.
func Exempt(path string) bool {
	parts := strings.Split(filepath.ToSlash(path), "/")
	return parts[0] == "examples" || slices.Contains(parts[:len(parts)-1], "testdata")
}

// Large lists the files git tracks in the work tree at root that are larger
// than max bytes and not exempt.
func Large(root string, max int64) ([]File, error) {
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %w: %s", root, err, bytes.TrimSpace(stderr.Bytes()))
	}
	var large []File
	for _, p := range strings.Split(string(out), "\x00") {
		if p == "" || Exempt(p) {
			continue
		}
		fi, err := os.Lstat(filepath.Join(root, p))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			return nil, err
		}
		if fi.Mode().IsRegular() && fi.Size() > max {
			large = append(large, File{Path: p, Size: fi.Size()})
		}
	}
	return large, nil
}
