package core

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrModelNotFound is wrapped by errors from ResolveModelFile.
var ErrModelNotFound = errors.New("model not found")

// ResolveModelFile turns a path into the .onnx file to load. A directory is
// searched for model.onnx, then the Hugging Face layout onnx/model.onnx, then
// a single .onnx file in the directory.
func ResolveModelFile(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%w: no file or directory %q", ErrModelNotFound, path)
		}
		return "", fmt.Errorf("model %q: %w", path, err)
	}
	if !st.IsDir() {
		return path, nil
	}
	for _, rel := range []string{"model.onnx", filepath.Join("onnx", "model.onnx")} {
		p := filepath.Join(path, rel)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	var found []string
	for _, dir := range []string{path, filepath.Join(path, "onnx")} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() && strings.EqualFold(filepath.Ext(e.Name()), ".onnx") {
				found = append(found, filepath.Join(dir, e.Name()))
			}
		}
		if len(found) > 0 {
			break
		}
	}
	sort.Strings(found)
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("%w: directory %q has no model.onnx, onnx/model.onnx or other .onnx file", ErrModelNotFound, path)
	default:
		names := make([]string, len(found))
		for i, f := range found {
			names[i] = filepath.Base(f)
		}
		return "", fmt.Errorf("directory %q holds several .onnx files (%s): name the file to serve", path, strings.Join(names, ", "))
	}
}

// ModelSize returns the size of the model file plus the external data files
// beside it that the model refers to.
func ModelSize(file string, externalFiles []string) int64 {
	var total int64
	if st, err := os.Stat(file); err == nil {
		total += st.Size()
	}
	dir := filepath.Dir(file)
	seen := map[string]bool{}
	for _, rel := range externalFiles {
		if seen[rel] {
			continue
		}
		seen[rel] = true
		if st, err := os.Stat(filepath.Join(dir, rel)); err == nil {
			total += st.Size()
		}
	}
	return total
}
