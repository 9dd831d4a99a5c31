package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The documentation's executable examples are fenced blocks with the info
// string "console": lines starting with "$ " are commands (a line ending in
// a backslash continues on the next), every other line is output shown for
// the command above it. In shown output, "..." stands for any text within
// one line, so a line of "..." alone is one line of any content. Blocks
// fenced as sh, bash or shell are never run, and must not talk to the
// server the examples run against (localhost:8080, localhost:9000): such
// an example belongs in a console block.

// docStep is one command of a console block and the output shown for it.
type docStep struct {
	line    int      // the line of its "$ " in the file
	command string   // continuation lines joined with newlines
	want    []string // output lines, trailing blank lines dropped
}

// docBlock is one console block.
type docBlock struct {
	line  int // the line of the opening fence
	steps []docStep
}

// docProblem is a fault in a page's blocks, with the line at fault.
type docProblem struct {
	line int
	msg  string
}

func (p docProblem) String() string { return fmt.Sprintf("line %d: %s", p.line, p.msg) }

// unrunShells are the info strings of shell blocks that are never run.
var unrunShells = []string{"sh", "bash", "shell"}

// serverAddr matches what an unrun shell block must not talk to.
var serverAddr = regexp.MustCompile(`localhost:(8080|9000)\b`)

// parseDoc returns the console blocks of a markdown page and every fault
// in them: an unclosed fence, a console block with an info string beyond
// "console", output before the first command, an empty command, a
// continuation past the block's end, and an unrun shell block that talks
// to the examples' server.
func parseDoc(text string) ([]docBlock, []docProblem) {
	lines := strings.Split(text, "\n")
	var blocks []docBlock
	var problems []docProblem
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		indent := len(lines[i]) - len(trimmed)
		info := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
		end := slices.IndexFunc(lines[i+1:], func(l string) bool { return strings.TrimSpace(l) == "```" })
		if end < 0 {
			problems = append(problems, docProblem{i + 1, "fence not closed"})
			break
		}
		body := lines[i+1 : i+1+end]
		lang, _, _ := strings.Cut(info, " ")
		switch {
		case lang == "console" && info != "console":
			problems = append(problems, docProblem{i + 1, fmt.Sprintf("info string %q: a console block takes no attributes", info)})
		case lang == "console":
			b, ps := parseConsole(body, indent, i+1)
			problems = append(problems, ps...)
			if len(ps) == 0 {
				blocks = append(blocks, b)
			}
		case slices.Contains(unrunShells, lang):
			for k, l := range body {
				if serverAddr.MatchString(l) {
					problems = append(problems, docProblem{i + 2 + k, "a " + lang + " block is not run, but this line talks to the examples' server: make it a console block with its output"})
				}
			}
		}
		i += end + 1
	}
	return blocks, problems
}

// parseConsole splits a console block's body (the lines between its fences,
// indented by indent spaces; the opening fence on line fence) into steps.
func parseConsole(body []string, indent, fence int) (docBlock, []docProblem) {
	b := docBlock{line: fence}
	var problems []docProblem
	for k := 0; k < len(body); k++ {
		line := fence + 1 + k
		l, ok := strings.CutPrefix(body[k], strings.Repeat(" ", indent))
		if !ok && strings.TrimSpace(body[k]) != "" {
			problems = append(problems, docProblem{line, "indented less than its fence"})
			continue
		}
		switch {
		case strings.HasPrefix(l, "$ ") && strings.TrimSpace(l[2:]) != "":
			step := docStep{line: line, command: l[2:]}
			for strings.HasSuffix(step.command, `\`) {
				if k++; k == len(body) {
					problems = append(problems, docProblem{line, "the command continues past the end of the block"})
					break
				}
				step.command += "\n" + strings.TrimPrefix(body[k], strings.Repeat(" ", indent))
			}
			b.steps = append(b.steps, step)
		case strings.TrimSpace(l) == "$":
			problems = append(problems, docProblem{line, "a prompt without a command"})
		case len(b.steps) == 0:
			problems = append(problems, docProblem{line, "output before the first command: a console block starts with \"$ \""})
		default:
			s := &b.steps[len(b.steps)-1]
			s.want = append(s.want, l)
		}
	}
	for i := range b.steps {
		b.steps[i].want = trimBlankTail(b.steps[i].want)
	}
	if len(b.steps) == 0 && len(problems) == 0 {
		problems = append(problems, docProblem{fence, "a console block without a command"})
	}
	return b, problems
}

// trimBlankTail drops trailing blank lines.
func trimBlankTail(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// outputLines splits a command's output into lines as a terminal shows
// them: carriage returns dropped, trailing blank lines dropped.
func outputLines(out string) []string {
	out = strings.ReplaceAll(out, "\r", "")
	if out == "" {
		return nil
	}
	return trimBlankTail(strings.Split(strings.TrimSuffix(out, "\n"), "\n"))
}

// lineMatches reports whether got is the shown line want, in which "..."
// stands for any text.
func lineMatches(want, got string) bool {
	if !strings.Contains(want, "...") {
		return want == got
	}
	parts := strings.Split(want, "...")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(got)
}

// outputMismatch says where got departs from the shown output want, or ""
// when every line matches.
func outputMismatch(want, got []string) string {
	for i := range max(len(want), len(got)) {
		switch {
		case i >= len(want):
			return fmt.Sprintf("output line %d: got %q, the page shows no more lines", i+1, got[i])
		case i >= len(got):
			return fmt.Sprintf("output line %d: the page shows %q, got no more lines", i+1, want[i])
		case !lineMatches(want[i], got[i]):
			return fmt.Sprintf("output line %d: the page shows %q, got %q", i+1, want[i], got[i])
		}
	}
	return ""
}

// TestDocBlocksParse: the fixtures' blocks and faults, each at its line.
func TestDocBlocksParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file     string
		steps    []docStep
		problems []string
	}{
		{file: "good.md", steps: []docStep{
			{line: 5, command: "echo one", want: []string{"one"}},
			{line: 7, command: "printf 'two\\nthree\\n' \\\n  | cat", want: []string{"two", "..."}},
			{line: 15, command: "true"},
			{line: 16, command: "echo indented", want: []string{"indented"}},
		}},
		{file: "malformed.md", problems: []string{
			`line 3: output before the first command: a console block starts with "$ "`,
			`line 8: a prompt without a command`,
			`line 12: info string "console server=x": a console block takes no attributes`,
			`line 18: a console block without a command`,
			`line 23: a sh block is not run, but this line talks to the examples' server: make it a console block with its output`,
			`line 27: the command continues past the end of the block`,
			`line 32: fence not closed`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join("testdata", "docs", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			blocks, problems := parseDoc(string(text))
			var steps []docStep
			for _, b := range blocks {
				steps = append(steps, b.steps...)
			}
			var got []string
			for _, p := range problems {
				got = append(got, p.String())
			}
			if !slices.EqualFunc(steps, tt.steps, func(a, b docStep) bool {
				return a.line == b.line && a.command == b.command && slices.Equal(a.want, b.want)
			}) {
				t.Errorf("steps:\n got %+v\nwant %+v", steps, tt.steps)
			}
			if !slices.Equal(got, tt.problems) {
				t.Errorf("problems:\n got %q\nwant %q", got, tt.problems)
			}
		})
	}
}

// TestDocOutputMatch: "..." matches any text within one line, never a line
// more or less, and everything else matches exactly.
func TestDocOutputMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		want, got []string
		mismatch  string
	}{
		{[]string{`{"a":1}`}, []string{`{"a":1}`}, ""},
		{[]string{`{"a":1}`}, []string{`{"a":2}`}, `output line 1: the page shows "{\"a\":1}", got "{\"a\":2}"`},
		{[]string{"X-Request-Id: ..."}, []string{"X-Request-Id: 35a1a2e6"}, ""},
		{[]string{"X-Request-Id: ..."}, []string{"X-Request-ID: 35a1a2e6"}, `output line 1: the page shows "X-Request-Id: ...", got "X-Request-ID: 35a1a2e6"`},
		{[]string{"..."}, []string{"anything at all"}, ""},
		{[]string{"..."}, []string{"one", "two"}, `output line 2: got "two", the page shows no more lines`},
		{[]string{"a", "..."}, []string{"a"}, `output line 2: the page shows "...", got no more lines`},
		{[]string{`"path": "...model.onnx",`}, []string{`"path": "/x/model.onnx",`}, ""},
		{[]string{`(.*) [x]`}, []string{`(.*) [x]`}, ""},
		{[]string{`(.*) [x]`}, []string{`abc [x]`}, `output line 1: the page shows "(.*) [x]", got "abc [x]"`},
		{nil, outputLines("a\r\nb\r\n\n"), `output line 1: got "a", the page shows no more lines`},
		{[]string{"a", "b"}, outputLines("a\r\nb\r\n\n"), ""},
	}
	for _, tt := range tests {
		if got := outputMismatch(tt.want, tt.got); got != tt.mismatch {
			t.Errorf("outputMismatch(%q, %q) = %q, want %q", tt.want, tt.got, got, tt.mismatch)
		}
	}
}
