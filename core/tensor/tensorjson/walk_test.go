package tensorjson

import (
	"errors"
	"strings"
	"testing"
)

func TestObject(t *testing.T) {
	tests := []struct {
		body string
		keys string // keys seen, joined by ","
		err  string // "" = no error; "not object" = ErrNotObject
	}{
		{`{}`, "", ""},
		{` {"a": 1, "b": [true, null], "a\u0062": {"x": "y"}} `, "a,b,ab", ""},
		{`[1, 2]`, "", "not object"},
		{`"text"`, "", "not object"},
		{``, "", "Invalid JSON body: unexpected end of input at offset 0"},
		{`{"a": 1} x`, "a", "Invalid JSON body: invalid character 'x' after top-level value at offset 9"},
		{`{"a": 1 "b": 2}`, "a", "Invalid JSON body: invalid character '\"' after object key:value pair at offset 8"},
		{`{"a" 1}`, "", "Invalid JSON body: invalid character '1' after object key at offset 5"},
		{`[1,`, "", "Invalid JSON body: unexpected end of input at offset 3"},
	}
	for _, tt := range tests {
		d := NewDecoder([]byte(tt.body), 0)
		var keys []string
		err := d.Object(func(key []byte) error {
			keys = append(keys, string(key))
			return d.SkipValue()
		})
		d.Release()
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: %v", tt.body, err)
		case tt.err == "not object" && !errors.Is(err, ErrNotObject):
			t.Errorf("%s: got %v, want ErrNotObject", tt.body, err)
		case tt.err != "" && tt.err != "not object" && (err == nil || err.Error() != tt.err):
			t.Errorf("%s: got %v, want %s", tt.body, err, tt.err)
		}
		if got := strings.Join(keys, ","); got != tt.keys {
			t.Errorf("%s: keys %q, want %q", tt.body, got, tt.keys)
		}
	}
	// An error from the callback stops the walk and comes back as it is.
	stop := errors.New("stop")
	d := NewDecoder([]byte(`{"a": 1, "b": 2}`), 0)
	defer d.Release()
	n := 0
	if err := d.Object(func([]byte) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("callback error: %v after %d calls", err, n)
	}
}
