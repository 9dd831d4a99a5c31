package log

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// recorder keeps each write it gets.
type recorder struct{ writes [][]byte }

func (r *recorder) Write(p []byte) (int, error) {
	r.writes = append(r.writes, append([]byte(nil), p...))
	return len(p), nil
}

func TestWriteLines(t *testing.T) {
	line := func(n int) string { return strings.Repeat("x", n-1) + "\n" }
	tests := []struct {
		name  string
		lines []string
		want  []int // the length of each write
	}{
		{"one short line", []string{line(10)}, []int{10}},
		{"lines that fit one write", []string{line(2000), line(2096)}, []int{4096}},
		{"one byte over", []string{line(2000), line(2097)}, []int{2000, 2097}},
		{"many lines", []string{line(1000), line(1000), line(1000), line(1000), line(1000), line(1000)}, []int{4000, 2000}},
		{"a line longer than a write", []string{line(100), line(9000), line(50)}, []int{100, 9000, 50}},
		{"a long line first", []string{line(5000), line(10), line(10)}, []int{5000, 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r recorder
			batch := []byte(strings.Join(tt.lines, ""))
			writeLines(&r, batch)
			var got []int
			for _, w := range r.writes {
				got = append(got, len(w))
				if w[len(w)-1] != '\n' {
					t.Errorf("a write of %d bytes ends mid-line", len(w))
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("writes of %v bytes, want %v", got, tt.want)
			}
			if joined := bytes.Join(r.writes, nil); !bytes.Equal(joined, batch) {
				t.Error("the writes do not add up to the batch")
			}
		})
	}
}
