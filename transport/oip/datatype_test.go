package oip

import (
	"slices"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
)

// Every element type has a name that parses back to it, datatypeList names
// them all, and anything else is refused.
func TestDatatypes(t *testing.T) {
	var listed []string
	for d := tensor.DType(0); int(d) < len(datatypes); d++ {
		name := Datatype(d)
		if name == "" {
			continue
		}
		listed = append(listed, name)
		if got, ok := ParseDatatype(name); !ok || got != d {
			t.Errorf("ParseDatatype(%q) = %v, %v; want %v", name, got, ok, d)
		}
	}
	inList := strings.Split(datatypeList, ", ")
	slices.Sort(listed)
	slices.Sort(inList)
	if !slices.Equal(listed, inList) {
		t.Errorf("names %q, datatypeList %q", listed, inList)
	}
	if len(listed) != 14 {
		t.Errorf("%d datatypes, want 14", len(listed))
	}
	for _, s := range []string{"", "fp32", "FLOAT", "STRING", "BYTES "} {
		if d, ok := ParseDatatype(s); ok {
			t.Errorf("ParseDatatype(%q) = %v, want refused", s, d)
		}
	}
	if Datatype(tensor.Invalid) != "" || Datatype(tensor.DType(200)) != "" {
		t.Error("an invalid type has a name")
	}
}
