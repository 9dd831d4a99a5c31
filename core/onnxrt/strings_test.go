package onnxrt_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/core/onnxrt"
	"github.com/svc-dev/svc/core/onnxrt/onnxrttest"
)

// TestStringTensors writes string tensors through svc's direct path and
// reads them back through it and through the Go binding, and the other
// way round: the elements must come back byte for byte, NUL bytes
// included (which the binding's own writer cuts short).
func TestStringTensors(t *testing.T) {
	onnxrttest.Load(t)
	if !onnxrt.StringsBound() {
		t.Fatal("string tensors do not use the C API directly")
	}
	many := make([]string, 100000)
	for i := range many {
		many[i] = fmt.Sprint("w", i, strings.Repeat("x", i%40))
	}
	tests := []struct {
		name  string
		shape ort.Shape
		elems []string
		// noNUL: without NUL bytes, so the binding's writer keeps them.
		noNUL bool
	}{
		{"words", ort.NewShape(3), []string{"a", "héllo", "一二三"}, true},
		{"empty strings", ort.NewShape(2, 2), []string{"", "", "x", ""}, true},
		{"all empty", ort.NewShape(3), []string{"", "", ""}, true},
		{"long beside short", ort.NewShape(2), []string{strings.Repeat("long ", 1000), "s"}, true},
		{"NUL bytes", ort.NewShape(3), []string{"a\x00b", "\x00", "end\x00"}, false},
		{"many", ort.NewShape(int64(len(many))), many, true},
		{"none", ort.NewShape(0), []string{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := onnxrt.NewStringTensor(tt.shape, tt.elems)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Destroy()
			got, err := onnxrt.Strings(st)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.elems) {
				t.Fatalf("direct → direct: got %d elements, %q…", len(got), head(got))
			}
			if len(tt.elems) > 0 {
				viaBinding, err := st.GetContents()
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(viaBinding, tt.elems) {
					t.Fatalf("direct → binding: %q…", head(viaBinding))
				}
			}
			if !tt.noNUL {
				return
			}
			bt, err := ort.NewStringTensor(tt.shape)
			if err != nil {
				t.Fatal(err)
			}
			defer bt.Destroy()
			if err := bt.SetContents(tt.elems); err != nil {
				t.Fatal(err)
			}
			if got, err := onnxrt.Strings(bt); err != nil || !reflect.DeepEqual(got, tt.elems) {
				t.Fatalf("binding → direct: %q… (%v)", head(got), err)
			}
		})
	}
	if _, err := onnxrt.NewStringTensor(ort.NewShape(2), []string{"one"}); err == nil {
		t.Error("one string for two elements was accepted")
	}
}

func head(s []string) []string { return s[:min(len(s), 3)] }

// TestStringTensorsFallback runs the path used when the C API cannot be
// reached directly (the binding's layout changed): the binding's own
// writer and reader, which keep everything but NUL bytes.
func TestStringTensorsFallback(t *testing.T) {
	onnxrttest.Load(t)
	prev := onnxrt.SetStringsBound(false)
	defer onnxrt.SetStringsBound(prev)
	elems := []string{"a", "", "héllo", strings.Repeat("long ", 100)}
	st, err := onnxrt.NewStringTensor(ort.NewShape(2, 2), elems)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Destroy()
	got, err := onnxrt.Strings(st)
	if err != nil || !reflect.DeepEqual(got, elems) {
		t.Fatalf("fallback round trip: %q (%v)", got, err)
	}
	if _, err := onnxrt.NewStringTensor(ort.NewShape(3), elems); err == nil {
		t.Error("four strings for three elements were accepted")
	}
}
