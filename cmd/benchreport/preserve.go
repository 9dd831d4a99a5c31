package main

import (
	"bytes"
	"regexp"
)

// sectionRE matches a preserved section of BENCHMARKS.md: everything from
// <!-- NAME:begin --> to <!-- NAME:end --> (markers included). Other tools
// (such as cmd/soak) own such sections; a rewrite keeps them.
var sectionRE = regexp.MustCompile(`(?s)<!-- ([a-z0-9][a-z0-9-]*):begin -->.*?<!-- ([a-z0-9][a-z0-9-]*):end -->\n?`)

// preserveSections returns fresh with the named sections of old carried
// over: a section fresh also has is replaced in place by old's, the others
// are appended in old's order.
func preserveSections(old, fresh []byte) []byte {
	out := fresh
	for _, m := range sectionRE.FindAllSubmatchIndex(old, -1) {
		name, end := old[m[2]:m[3]], old[m[4]:m[5]]
		if !bytes.Equal(name, end) {
			continue // mismatched markers: not a section
		}
		section := old[m[0]:m[1]]
		if !bytes.HasSuffix(section, []byte("\n")) {
			section = append(bytes.Clone(section), '\n')
		}
		if loc := findSection(out, name); loc != nil {
			out = append(append(append([]byte{}, out[:loc[0]]...), section...), out[loc[1]:]...)
			continue
		}
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n\n")) {
			if !bytes.HasSuffix(out, []byte("\n")) {
				out = append(out, '\n')
			}
			out = append(out, '\n')
		}
		out = append(out, section...)
	}
	return out
}

// findSection locates the section called name in b.
func findSection(b, name []byte) []int {
	for _, m := range sectionRE.FindAllSubmatchIndex(b, -1) {
		if bytes.Equal(b[m[2]:m[3]], name) && bytes.Equal(b[m[4]:m[5]], name) {
			return m[:2]
		}
	}
	return nil
}
