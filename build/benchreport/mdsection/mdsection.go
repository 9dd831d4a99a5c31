// Package mdsection replaces one named section of a Markdown file: the
// lines between the lines <!-- NAME:begin --> and <!-- NAME:end -->. Everything
// outside the markers stays as it is, so that a file can hold hand-written
// text beside the parts that programs write (BENCHMARKS.md: the analysis,
// make bench's tables, make soak's tables).
package mdsection

import (
	"bytes"
	"errors"
	"fmt"
	"os"
)

func markers(name string) (begin, end []byte) {
	return []byte("<!-- " + name + ":begin -->\n"), []byte("<!-- " + name + ":end -->\n")
}

// Replace returns doc with the content of section name replaced by body.
// A doc without the section gets it appended, after a blank line. A doc
// with a begin marker but no end marker after it, or with two begin
// markers, is an error: the section's extent would be a guess.
func Replace(doc []byte, name string, body []byte) ([]byte, error) {
	begin, end := markers(name)
	section := make([]byte, 0, len(body)+len(begin)+len(end)+1)
	section = append(section, begin...)
	if b := bytes.TrimRight(body, "\n"); len(b) > 0 {
		section = append(append(section, b...), '\n')
	}
	section = append(section, end...)

	i := lineIndex(doc, begin)
	if i < 0 {
		out := bytes.Clone(doc)
		if len(out) > 0 {
			if !bytes.HasSuffix(out, []byte("\n")) {
				out = append(out, '\n')
			}
			if !bytes.HasSuffix(out, []byte("\n\n")) {
				out = append(out, '\n')
			}
		}
		return append(out, section...), nil
	}
	if lineIndex(doc[i+len(begin):], begin) >= 0 {
		return nil, fmt.Errorf("section %q: two begin markers", name)
	}
	j := lineIndex(doc[i:], end)
	if j < 0 {
		return nil, fmt.Errorf("section %q: begin marker without an end marker after it", name)
	}
	rest := doc[i+j+len(end):]
	out := make([]byte, 0, i+len(section)+len(rest))
	return append(append(append(out, doc[:i]...), section...), rest...), nil
}

// lineIndex is the index of the first line of doc that is line (which
// ends in a newline), -1 when there is none: a marker quoted inside a line
// of text is not a marker.
func lineIndex(doc, line []byte) int {
	for off := 0; ; {
		i := bytes.Index(doc[off:], line)
		if i < 0 {
			return -1
		}
		if at := off + i; at == 0 || doc[at-1] == '\n' {
			return at
		}
		off += i + 1
	}
}

// WriteFile replaces section name of file with body; a missing file is
// created with the section alone.
func WriteFile(file, name string, body []byte) error {
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	out, err := Replace(old, name, body)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return os.WriteFile(file, out, 0o644)
}
