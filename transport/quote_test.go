package transport

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuote(t *testing.T) {
	long := strings.Repeat("a", 63) + "é" + "tail"
	tests := []struct{ give, want string }{
		{"", ""},
		{"input", "input"},
		{strings.Repeat("x", 64), strings.Repeat("x", 64)},
		{strings.Repeat("x", 65), strings.Repeat("x", 64) + "..."},
		// é straddles byte 64: cut before it, never inside.
		{long, strings.Repeat("a", 63) + "..."},
	}
	for _, tt := range tests {
		got := Quote(tt.give)
		if got != tt.want || !utf8.ValidString(got) {
			t.Errorf("Quote(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}
