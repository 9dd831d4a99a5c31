package filesize

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestRepository: no tracked file of svc's repository outside testdata/ and
// examples/ is over MaxBytes.
func TestRepository(t *testing.T) {
	large, err := Large(filepath.Join("..", ".."), MaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range large {
		t.Errorf("%v tracked, over 1 MiB: build outputs and downloads stay out of git (.gitignore)", f)
	}
}

// TestLarge runs Large on a git repository made for the test, with files
// on both sides of the limit inside and outside the exempt folders.
func TestLarge(t *testing.T) {
	root := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	files := map[string]int{
		"svc.exe":                    2 << 20,
		"docs/shot.png":              MaxBytes + 1,
		"docs/small.png":             MaxBytes,
		"core/x/testdata/model.onnx": 3 << 20,
		"examples/ocr/model.onnx":    3 << 20,
		"testdata/models/big.onnx":   3 << 20,
		"build/testdata.go":          10,
		"untracked/big.bin":          2 << 20,
		"deleted.bin":                2 << 20,
		"examples-not/big.bin":       2 << 20,
	}
	for p, n := range files {
		path := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
		if p != "untracked/big.bin" {
			git("add", p)
		}
	}
	if err := os.Remove(filepath.Join(root, "deleted.bin")); err != nil {
		t.Fatal(err)
	}
	large, err := Large(root, MaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range large {
		got = append(got, f.Path)
	}
	slices.Sort(got)
	want := []string{"docs/shot.png", "examples-not/big.bin", "svc.exe"}
	if !slices.Equal(got, want) {
		t.Errorf("Large = %q, want %q", got, want)
	}
}

func TestLargeOutsideGit(t *testing.T) {
	if _, err := Large(t.TempDir(), MaxBytes); err == nil {
		t.Error("Large outside a git work tree: no error")
	}
}
