package core

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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

// MaxModelSizeKey is the configuration key that bounds the size of the
// model file and its external data files together.
const MaxModelSizeKey = "runtime.max_model_size"

// ModelFileError is a model file, or one of its external data files, that
// svc refuses to load: not a regular file (a FIFO, a device, a socket, a
// directory), or more than runtime.max_model_size. It is found before
// anything reads the file, ONNX Runtime included.
type ModelFileError struct {
	// File is the file refused, as the model names it.
	File string
	// Reason says why, naming the key when it is the size.
	Reason string
}

func (e *ModelFileError) Error() string { return e.Reason }

// fileKind names what a file that is not a regular file is.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	}
	return "no regular file"
}

// describeFile is how a refusal names file: "model file "m.onnx"", with
// the file a symlink resolves to.
func describeFile(role, file string) string {
	d := fmt.Sprintf("%s %q", role, file)
	if real, err := filepath.EvalSymlinks(file); err == nil && real != file {
		if abs, err := filepath.Abs(file); err != nil || abs != real {
			d += fmt.Sprintf(" (a link to %q)", real)
		}
	}
	return d
}

// regularFile checks that st, the file at file (role names it: "model
// file", "external data file"), is a regular file of at most limit bytes
// (limit <= 0: any size).
func regularFile(role, file string, st fs.FileInfo, limit int64) error {
	if !st.Mode().IsRegular() {
		return &ModelFileError{File: file, Reason: fmt.Sprintf("%s is %s, not a regular file: svc loads a model only from regular files", describeFile(role, file), fileKind(st.Mode()))}
	}
	if limit > 0 && st.Size() > limit {
		return &ModelFileError{File: file, Reason: fmt.Sprintf("%s is %s, more than %s = %s: raise %s to load it",
			describeFile(role, file), humanSize(st.Size()), MaxModelSizeKey, humanSize(limit), MaxModelSizeKey)}
	}
	return nil
}

// checkModelFile checks, without opening it, that file (symlinks
// followed) is a regular file of at most limit bytes; limit <= 0 allows
// any size. Its refusal is a *ModelFileError.
func checkModelFile(file string, limit int64) error {
	st, err := os.Stat(file)
	if err != nil {
		return fmt.Errorf("model file %q: %w", file, err)
	}
	return regularFile("model file", file, st, limit)
}

// MaxONNXFile is the most an ONNX model file holds: it is one protocol
// buffer, whose limit is 2 GiB. A larger model keeps its weights in
// external data files.
const MaxONNXFile = 2 << 30

// ReadModelFile reads the model file: a regular file (symlinks followed)
// of at most limit bytes (runtime.max_model_size; <= 0: any size) and at
// most MaxONNXFile. Anything else (a FIFO, a device such as /dev/zero, a
// socket, a directory) is refused by name before it is read, without
// blocking: the file is looked at, then opened without waiting for a
// writer, and looked at again through what was opened, so that one
// swapped in between is refused too; a file that grows past the limit
// while it is read is refused as it does. The refusals are
// *ModelFileError.
func ReadModelFile(file string, limit int64) ([]byte, error) {
	if err := checkModelFile(file, limit); err != nil {
		return nil, err
	}
	f, err := openNoWait(file)
	if err != nil {
		return nil, fmt.Errorf("model file %q: %w", file, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("model file %q: %w", file, err)
	}
	if err := regularFile("model file", file, st, limit); err != nil {
		return nil, err
	}
	if st.Size() > MaxONNXFile {
		return nil, &ModelFileError{File: file, Reason: fmt.Sprintf("%s is %s: an ONNX model file holds at most 2 GiB (a protocol buffer's limit); a larger model keeps its weights in external data files",
			describeFile("model file", file), humanSize(st.Size()))}
	}
	bound := int64(MaxONNXFile)
	if limit > 0 {
		bound = min(bound, limit)
	}
	buf := bytes.NewBuffer(make([]byte, 0, st.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, bound+1)); err != nil {
		return nil, fmt.Errorf("read model file %q: %w", file, err)
	}
	if int64(buf.Len()) > bound {
		past := "2 GiB, the most an ONNX model file holds,"
		if bound == limit {
			past = fmt.Sprintf("%s = %s (raise it to load it)", MaxModelSizeKey, humanSize(limit))
		}
		return nil, &ModelFileError{File: file, Reason: fmt.Sprintf("%s grew past %s while it was read", describeFile("model file", file), past)}
	}
	return buf.Bytes(), nil
}

// CheckExternalData checks the external data files that the model file
// refers to (locations relative to its directory, as ONNX names them)
// before anything opens them: each inside the model's directory and a
// regular file (symlinks followed), and all of them with the model file
// (modelSize bytes) at most limit bytes (runtime.max_model_size; <= 0: any
// size). It returns the size of each file by location. The refusals are
// *ModelFileError.
func CheckExternalData(file string, modelSize int64, locations []string, limit int64) (map[string]int64, error) {
	dir := filepath.Dir(file)
	sizes := make(map[string]int64, len(locations))
	total := modelSize
	for _, loc := range locations {
		if _, seen := sizes[loc]; seen {
			continue
		}
		local := filepath.FromSlash(loc)
		if !filepath.IsLocal(local) || strings.Contains(loc, "\\") {
			return nil, &ModelFileError{File: loc, Reason: fmt.Sprintf("model file %q names external data %q outside its directory: svc loads external data only from the model's directory", file, loc)}
		}
		p := filepath.Join(dir, local)
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("external data file %q of model %q: %w", p, file, err)
		}
		if err := regularFile("external data file", p, st, 0); err != nil {
			return nil, err
		}
		sizes[loc] = st.Size()
		total += st.Size()
		if limit > 0 && total > limit {
			return nil, &ModelFileError{File: p, Reason: fmt.Sprintf("%s is %s, which brings model %q with its external data to %s, more than %s = %s: raise %s to load it",
				describeFile("external data file", p), humanSize(st.Size()), file, humanSize(total), MaxModelSizeKey, humanSize(limit), MaxModelSizeKey)}
		}
	}
	return sizes, nil
}

// humanSize writes n bytes for a person, with the exact count when the
// unit rounds it.
func humanSize(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n < u.size {
			continue
		}
		s := fmt.Sprintf("%.1f %s", float64(n)/float64(u.size), u.name)
		if n*10%u.size != 0 {
			s += fmt.Sprintf(" (%d bytes)", n)
		}
		return s
	}
	return fmt.Sprintf("%d bytes", n)
}
