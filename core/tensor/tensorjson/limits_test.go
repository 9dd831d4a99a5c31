package tensorjson

import (
	"strings"
	"testing"
)

// TestOver: a body's values past the limit, counted from the scan's
// commas and, past them, value by value.
func TestOver(t *testing.T) {
	tests := []struct {
		body  string
		limit int64
		input string
		over  bool
	}{
		{`{"x":[1,2,3]}`, 3, "", false},
		{`{"x":[1,2,3]}`, 2, "x", true},
		{`{"a":[1],"b":[[1,2],[3,4]]}`, 5, "", false},
		{`{"a":[1],"b":[[1,2],[3,4]]}`, 4, "b", true},
		{`{"t":["a,b","c,d,e"]}`, 2, "", false},
		{`{"t":["a\",b","c"],"u":[true,false,null]}`, 4, "u", true},
		{`{"x": -1.5e+3, "y": [ 2 , 3 ]}`, 3, "", false},
		{`{"x": -1.5e+3, "y": [ 2 , 3 ]}`, 2, "y", true},
		{`{"x":[` + strings.Repeat("0,", 1000) + `0]}`, 1000, "x", true},
		{`{"x":[` + strings.Repeat("0,", 1000) + `0]}`, 1001, "", false},
		{`{"x":[1,2,`, 1, "x", true},
	}
	for _, tt := range tests {
		input, over := ScanObject([]byte(tt.body)).Over([]byte(tt.body), tt.limit)
		if input != tt.input || over != tt.over {
			t.Errorf("Over(%.40s, %d) = %q, %v; want %q, %v", tt.body, tt.limit, input, over, tt.input, tt.over)
		}
	}
}
