package onnxpb

import (
	"bytes"
	"os"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

func TestUnmarshalMalformed(t *testing.T) {
	deepSeq := msg(1, vint(1, 1))
	for range 150 {
		deepSeq = msg(4, msg(1, deepSeq)) // sequence_type{elem_type: ...}
	}
	deepGraph := []byte{}
	for range 150 {
		deepGraph = msg(1, msg(5, str(1, "g"), lenb(6, deepGraph))) // node{attribute{g: ...}}
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"truncated tag", []byte{0x80}},
		{"truncated varint", []byte{0x08, 0x80}},
		{"varint too long", append([]byte{0x08}, bytes.Repeat([]byte{0xff}, 11)...)},
		{"truncated fixed32", []byte{0x15, 1, 2}},
		{"truncated fixed64", []byte{0x11, 1, 2, 3}},
		{"length past end", []byte{0x12, 5, 'a'}},
		{"huge length", []byte{0x3a, 0xff, 0xff, 0xff, 0xff, 0x0f}},
		{"field number 0", []byte{0x00, 0x01}},
		{"end group", []byte{0x0c}},
		{"unterminated group", []byte{0x0b, 0x08, 0x01}},
		{"mismatched group end", []byte{0x0b, 0x14}},
		{"wire type 6", []byte{0x0e}},
		{"wire type 7", []byte{0x0f}},
		{"bad graph", msg(7, []byte{0x80})},
		{"bad node", msg(7, msg(1, []byte{0x12, 9}))},
		{"bad attribute", msg(7, msg(1, msg(5, []byte{0x15, 0})))},
		{"bad initializer", msg(7, msg(5, []byte{0x08}))},
		{"bad packed float_data", msg(7, msg(5, lenb(4, []byte{1, 2, 3})))},
		{"bad packed double_data", msg(7, msg(5, lenb(10, []byte{1, 2, 3, 4, 5, 6, 7})))},
		{"bad packed int64_data", msg(7, msg(5, lenb(7, []byte{0x80})))},
		{"bad packed dims", msg(7, msg(5, lenb(1, []byte{0x01, 0x80})))},
		{"bad packed attribute floats", msg(7, msg(1, msg(5, lenb(7, []byte{0, 0}))))},
		{"bad value info", msg(7, msg(11, []byte{0x0a, 3}))},
		{"bad type", msg(7, msg(11, msg(2, []byte{0x0a, 1})))},
		{"bad shape", msg(7, msg(11, msg(2, msg(1, msg(2, []byte{0x0a})))))},
		{"bad dim", msg(7, msg(11, msg(2, msg(1, msg(2, msg(1, []byte{0x08}))))))},
		{"bad map", msg(7, msg(11, msg(2, msg(5, []byte{0x08}))))},
		{"bad opset", msg(8, []byte{0x10})},
		{"bad metadata", msg(14, []byte{0x0a, 2})},
		{"bad external data", msg(7, msg(5, msg(13, []byte{0x12, 1})))},
		{"bad segment", msg(7, msg(5, msg(3, []byte{0x08})))},
		{"deeply nested types", msg(7, msg(11, str(1, "x"), lenb(2, deepSeq)))},
		{"deeply nested graphs", lenb(7, deepGraph)},
		{"text", []byte("this is not an onnx model, just some text\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Unmarshal(tt.data)
			if err == nil {
				t.Fatalf("Unmarshal succeeded: %#v", m)
			}
			if m != nil {
				t.Error("Unmarshal returned a model along with an error")
			}
		})
	}
}

// TestUnmarshalTruncated cuts a real model at every length. No prefix may
// panic, and every cut that falls inside a top-level field must fail.
func TestUnmarshalTruncated(t *testing.T) {
	data, err := os.ReadFile(modelPath("classifier.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	// Offsets where a top-level field ends: cutting there is a valid,
	// shorter model.
	boundaries := map[int]bool{0: true}
	for off := 0; off < len(data); {
		_, _, n := protowire.ConsumeField(data[off:])
		if n < 0 {
			t.Fatalf("bad field at %d", off)
		}
		off += n
		boundaries[off] = true
	}
	for n := 0; n < len(data); n++ {
		_, err := Unmarshal(data[:n])
		if boundaries[n] && err != nil {
			t.Errorf("prefix %d ends on a field boundary but fails: %v", n, err)
		}
		if !boundaries[n] && err == nil {
			t.Errorf("prefix %d cuts a field but decodes", n)
		}
	}
}

// TestUnmarshalCorrupted flips bytes of a real model; decoding must not
// panic (errors are fine).
func TestUnmarshalCorrupted(t *testing.T) {
	data, err := os.ReadFile(modelPath("multi_input.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range data {
		for _, v := range []byte{0x00, 0xff, 0x80, data[i] ^ 0x07} {
			c := bytes.Clone(data)
			c[i] = v
			if m, err := Unmarshal(c); err == nil {
				if _, err := Marshal(m); err != nil {
					t.Fatalf("byte %d = %#x: decoded model does not re-encode: %v", i, v, err)
				}
			}
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, name := range []string{"classifier.onnx", "scalar.onnx", "zipmap.onnx", "float16.onnx"} {
		data, err := os.ReadFile(modelPath(name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	full, err := Marshal(fullModel())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(full)
	f.Add([]byte{})
	f.Add([]byte{0x3a, 0x02, 0x0a, 0x00})
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Unmarshal(data)
		if err != nil {
			return
		}
		// Whatever decodes must re-encode, and re-encoding must be stable.
		e1, err := Marshal(m)
		if err != nil {
			t.Fatalf("decoded model does not re-encode: %v", err)
		}
		m2, err := Unmarshal(e1)
		if err != nil {
			t.Fatalf("re-encoded model does not decode: %v", err)
		}
		e2, err := Marshal(m2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e1, e2) {
			t.Fatalf("encoding not stable:\n%x\n%x", e1, e2)
		}
		// The helpers must not panic either.
		m.InitializerNames()
		m.Metadata()
		if m.Graph != nil {
			for _, in := range m.Graph.Inputs {
				_ = in.Type.String()
			}
			for _, init := range m.Graph.Initializers {
				init.Values()
				init.RawBytes()
				init.External()
			}
		}
	})
}
