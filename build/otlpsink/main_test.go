package main

import "testing"

// field is the protobuf encoding of a length-delimited field.
func field(num int, body ...[]byte) []byte {
	var inner []byte
	for _, b := range body {
		inner = append(inner, b...)
	}
	out := []byte{byte(num<<3 | 2), byte(len(inner))}
	return append(out, inner...)
}

// TestCountSpans: the spans of every scope of every resource are counted,
// other fields (varints, fixed-size values, the resource, the scope) are
// stepped over, and a cut-short message is reported.
func TestCountSpans(t *testing.T) {
	span := field(2, []byte{0x0a, 0x01, 0x07}, []byte{0x39, 1, 2, 3, 4, 5, 6, 7, 8}, []byte{0x10, 0x05})
	scope := func(n int) []byte {
		parts := [][]byte{field(1, []byte{0x0a, 0x01, 'x'})}
		for range n {
			parts = append(parts, span)
		}
		return field(2, parts...)
	}
	resource := field(1, []byte{0x0a, 0x00})
	msg := append(field(1, resource, scope(2), scope(3)), field(1, scope(1))...)
	cases := []struct {
		name string
		msg  []byte
		n    int
		ok   bool
	}{
		{"empty", nil, 0, true},
		{"two resources", msg, 6, true},
		{"cut short", msg[:len(msg)-3], 0, false},
		{"bad wire type", []byte{0x0f}, 0, false},
	}
	for _, tc := range cases {
		n, ok := countSpans(tc.msg)
		if ok != tc.ok || (tc.ok && n != tc.n) {
			t.Errorf("%s: %d spans, ok %v; want %d, %v", tc.name, n, ok, tc.n, tc.ok)
		}
	}
}
