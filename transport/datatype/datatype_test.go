package datatype

import (
	"slices"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

// Every element type has a name that parses back to it, List names them
// all, and anything else is refused.
func TestNames(t *testing.T) {
	var listed []string
	for d := tensor.DType(0); int(d) < len(names); d++ {
		name := Name(d)
		if name == "" {
			continue
		}
		listed = append(listed, name)
		if got, ok := Parse(name); !ok || got != d {
			t.Errorf("Parse(%q) = %v, %v; want %v", name, got, ok, d)
		}
	}
	inList := strings.Split(List, ", ")
	slices.Sort(listed)
	slices.Sort(inList)
	if !slices.Equal(listed, inList) {
		t.Errorf("names %q, List %q", listed, inList)
	}
	if len(listed) != 14 {
		t.Errorf("%d datatypes, want 14", len(listed))
	}
	for _, s := range []string{"", "fp32", "FLOAT", "STRING", "BYTES "} {
		if d, ok := Parse(s); ok {
			t.Errorf("Parse(%q) = %v, want refused", s, d)
		}
	}
	if Name(tensor.Invalid) != "" || Name(tensor.DType(200)) != "" {
		t.Error("an invalid type has a name")
	}
}
