package onnxpb

import (
	"fmt"
	"os"
	"strings"
)

// ReadFile reads and decodes the ONNX model at path. Byte fields of the
// result (raw tensor data, strings data) share the buffer read from the
// file. External tensor data is not loaded; see TensorProto.LoadExternal.
func ReadFile(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := unmarshal(data, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// UnmarshalShared decodes an ONNX ModelProto as Unmarshal does, except
// that the tensors' raw data share data's memory (as ReadFile's do): for a
// model read whole into data, which the caller no longer changes.
func UnmarshalShared(data []byte) (*Model, error) {
	return unmarshal(data, true)
}

// WriteFile encodes m and writes it to path (mode 0644).
func WriteFile(path string, m *Model) error {
	data, err := Marshal(m)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// InitializerNames returns the names of the graph's initializers. A graph
// input whose name is in this set has a default value and may be omitted
// (ONNX Runtime calls it an "overridable initializer").
func (m *Model) InitializerNames() map[string]bool {
	names := map[string]bool{}
	if m == nil || m.Graph == nil {
		return names
	}
	for _, t := range m.Graph.Initializers {
		if t != nil {
			names[t.Name] = true
		}
	}
	return names
}

// Initializer returns the initializer called name, or nil.
func (m *Model) Initializer(name string) *TensorProto {
	if m == nil || m.Graph == nil {
		return nil
	}
	for _, t := range m.Graph.Initializers {
		if t != nil && t.Name == name {
			return t
		}
	}
	return nil
}

// Metadata returns the metadata_props as a map. When a key repeats, the
// last value wins.
func (m *Model) Metadata() map[string]string {
	md := map[string]string{}
	if m == nil {
		return md
	}
	for _, e := range m.MetadataProps {
		md[e.Key] = e.Value
	}
	return md
}

// Opset returns the imported opset version of domain, or 0 when the domain
// is not imported. Both "" and "ai.onnx" name the default domain.
func (m *Model) Opset(domain string) int64 {
	if m == nil {
		return 0
	}
	if domain == "ai.onnx" {
		domain = ""
	}
	for _, o := range m.OpsetImports {
		d := o.Domain
		if d == "ai.onnx" {
			d = ""
		}
		if d == domain {
			return o.Version
		}
	}
	return 0
}

// String renders a type the way svc reports it: a tensor as its element
// type name ("float32"), and containers around their element types, e.g.
// "seq(map(string,float32))", "optional(int64)", "sparse_tensor(float32)".
// A nil or empty type is "unknown".
func (t *TypeProto) String() string {
	if t == nil {
		return "unknown"
	}
	switch {
	case t.Tensor != nil:
		return ElemTypeName(t.Tensor.ElemType)
	case t.SparseTensor != nil:
		return "sparse_tensor(" + ElemTypeName(t.SparseTensor.ElemType) + ")"
	case t.Sequence != nil:
		return "seq(" + t.Sequence.Elem.String() + ")"
	case t.Map != nil:
		return "map(" + ElemTypeName(t.Map.KeyType) + "," + t.Map.Value.String() + ")"
	case t.Optional != nil:
		return "optional(" + t.Optional.Elem.String() + ")"
	}
	return "unknown"
}

// ShapeString renders a tensor shape like "[batch,4]"; "[]" is a scalar
// and "?" an unknown rank.
func (t *TensorType) ShapeString() string {
	if t == nil || t.Shape == nil {
		return "?"
	}
	parts := make([]string, len(t.Shape))
	for i, d := range t.Shape {
		parts[i] = d.String()
	}
	return "[" + strings.Join(parts, ",") + "]"
}
