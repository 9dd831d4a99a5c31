package decode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// maxLabels bounds the class indices that LabelsFromMetadata accepts, so
// that a stray key such as {1000000000: 'x'} cannot allocate gigabytes.
const maxLabels = 1 << 20

// LoadLabels reads a label file: one label per line, in class order. The
// file is UTF-8; a leading byte order mark and a "\r" at the end of each
// line are removed, and the empty line after a final newline is not a
// label. Every other line is a label as written: an empty line in the
// middle is an empty label (it keeps the following labels at their
// indices), and spaces are kept. An unreadable file, one with no labels and
// one that is not UTF-8 are errors naming the path.
func LoadLabels(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	labels, err := ParseLabels(b)
	if err != nil {
		return nil, fmt.Errorf("labels %s: %w", path, err)
	}
	return labels, nil
}

// ParseLabels splits the contents of a label file into labels, by
// LoadLabels's rules.
func ParseLabels(b []byte) ([]string, error) {
	b = bytes.TrimPrefix(b, []byte("\uFEFF"))
	if len(b) == 0 {
		return nil, errors.New("no labels")
	}
	b = bytes.TrimSuffix(b, []byte{'\n'})
	labels := make([]string, 0, bytes.Count(b, []byte{'\n'})+1)
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if !utf8.Valid(line) {
			return nil, fmt.Errorf("line %d is not UTF-8", len(labels)+1)
		}
		labels = append(labels, string(line))
	}
	return labels, nil
}

// LabelsFromMetadata finds class labels in an ONNX model's metadata
// properties and returns them with the key it used; ok is false when
// neither key holds a usable, non-empty list. The keys, in order:
//
//   - "labels": a JSON array of strings (["cat", "dog"]); else a Python
//     list or dict literal as for "names"; else, when the value has a
//     newline, one label per line by LoadLabels's rules; else a
//     comma-separated list, each label trimmed of spaces.
//   - "names": Ultralytics' class names, the Python repr of a dict from
//     class index to name ("{0: 'person', 1: 'bicycle', 2: \"it's\"}"),
//     or of a list of names. Python's string escapes are understood; a
//     dict's keys are non-negative integers (or strings of one), below
//     2^20, and a missing index gets its decimal form as its label.
func LabelsFromMetadata(meta map[string]string) (labels []string, key string, ok bool) {
	if v, found := meta["labels"]; found {
		if labels, ok := labelsValue(v); ok {
			return labels, "labels", true
		}
	}
	if v, found := meta["names"]; found {
		if labels, ok := parseNames(v); ok && len(labels) > 0 {
			return labels, "names", true
		}
	}
	return nil, "", false
}

// labelsValue reads the value of a "labels" property.
func labelsValue(v string) ([]string, bool) {
	trimmed := strings.TrimSpace(v)
	if strings.HasPrefix(trimmed, "[") {
		var labels []string
		if json.Unmarshal([]byte(trimmed), &labels) == nil && len(labels) > 0 {
			return labels, true
		}
	}
	if strings.HasPrefix(trimmed, "[") || strings.HasPrefix(trimmed, "{") {
		labels, ok := parseNames(trimmed)
		return labels, ok && len(labels) > 0
	}
	if strings.Contains(v, "\n") {
		labels, err := ParseLabels([]byte(v))
		return labels, err == nil
	}
	if trimmed == "" {
		return nil, false
	}
	labels := strings.Split(v, ",")
	for i, l := range labels {
		labels[i] = strings.TrimSpace(l)
	}
	return labels, true
}
