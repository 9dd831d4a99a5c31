package onnxpb

import (
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Unmarshal decodes an ONNX ModelProto. Unknown fields, and known fields
// with an unexpected wire type, are skipped. Repeated numeric fields are
// accepted both packed and unpacked. Malformed input (truncated fields,
// bad varints, stray end-group tags, excessive nesting) returns an error.
// The returned model does not share memory with data.
func Unmarshal(data []byte) (*Model, error) {
	return unmarshal(data, false)
}

func unmarshal(data []byte, alias bool) (*Model, error) {
	d := &decoder{alias: alias}
	m := &Model{}
	if err := d.model(data, m); err != nil {
		return nil, fmt.Errorf("onnxpb: decoding model: %w", err)
	}
	return m, nil
}

type decoder struct {
	// alias lets byte fields (raw_data, string data) share the input
	// buffer instead of being copied.
	alias bool
	depth int
}

// field is one decoded field: its number and wire type, and the value as
// a uint64 (varint, fixed32, fixed64) or bytes (length-delimited).
type field struct {
	num protowire.Number
	typ protowire.Type
	u   uint64
	b   []byte
}

// next decodes the field at the start of b and returns it with the number
// of bytes it took. Groups are skipped whole (reported with typ
// StartGroupType); a lone end-group tag is an error.
func next(b []byte) (field, int, error) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return field{}, 0, protowire.ParseError(n)
	}
	f := field{num: num, typ: typ}
	rest := b[n:]
	var m int
	switch typ {
	case protowire.VarintType:
		f.u, m = protowire.ConsumeVarint(rest)
	case protowire.Fixed32Type:
		var v uint32
		v, m = protowire.ConsumeFixed32(rest)
		f.u = uint64(v)
	case protowire.Fixed64Type:
		f.u, m = protowire.ConsumeFixed64(rest)
	case protowire.BytesType:
		f.b, m = protowire.ConsumeBytes(rest)
	case protowire.StartGroupType:
		m = protowire.ConsumeFieldValue(num, typ, rest)
	default:
		return field{}, 0, fmt.Errorf("field %d: unexpected wire type %d", num, typ)
	}
	if m < 0 {
		return field{}, 0, fmt.Errorf("field %d: %w", num, protowire.ParseError(m))
	}
	return f, n + m, nil
}

// each calls fn for every field of the message b.
func each(b []byte, fn func(f field) error) error {
	for len(b) > 0 {
		f, n, err := next(b)
		if err != nil {
			return err
		}
		b = b[n:]
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

func (f field) isVarint() bool  { return f.typ == protowire.VarintType }
func (f field) isFixed32() bool { return f.typ == protowire.Fixed32Type }
func (f field) isBytes() bool   { return f.typ == protowire.BytesType }
func (f field) str() string     { return string(f.b) }

func (d *decoder) bytes(b []byte) []byte {
	if d.alias {
		return b
	}
	c := make([]byte, len(b))
	copy(c, b)
	return c
}

// enter and leave track nesting depth for recursive messages.
func (d *decoder) enter() error {
	d.depth++
	if d.depth > maxDepth {
		return errTooDeep
	}
	return nil
}

func (d *decoder) leave() { d.depth-- }

func (d *decoder) model(b []byte, m *Model) error {
	return each(b, func(f field) error {
		switch {
		case f.num == modelIRVersion && f.isVarint():
			m.IRVersion = int64(f.u)
		case f.num == modelProducerName && f.isBytes():
			m.ProducerName = f.str()
		case f.num == modelProducerVersion && f.isBytes():
			m.ProducerVersion = f.str()
		case f.num == modelDomain && f.isBytes():
			m.Domain = f.str()
		case f.num == modelModelVersion && f.isVarint():
			m.ModelVersion = int64(f.u)
		case f.num == modelDocString && f.isBytes():
			m.DocString = f.str()
		case f.num == modelGraph && f.isBytes():
			if m.Graph == nil {
				m.Graph = &Graph{}
			}
			if err := d.graph(f.b, m.Graph); err != nil {
				return fmt.Errorf("graph: %w", err)
			}
		case f.num == modelOpsetImport && f.isBytes():
			var o OpsetImport
			err := each(f.b, func(f field) error {
				switch {
				case f.num == opsetDomain && f.isBytes():
					o.Domain = f.str()
				case f.num == opsetVersion && f.isVarint():
					o.Version = int64(f.u)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("opset_import: %w", err)
			}
			m.OpsetImports = append(m.OpsetImports, o)
		case f.num == modelMetadataProps && f.isBytes():
			e, err := entry(f.b)
			if err != nil {
				return fmt.Errorf("metadata_props: %w", err)
			}
			m.MetadataProps = append(m.MetadataProps, e)
		}
		return nil
	})
}

func entry(b []byte) (StringEntry, error) {
	var e StringEntry
	err := each(b, func(f field) error {
		switch {
		case f.num == entryKey && f.isBytes():
			e.Key = f.str()
		case f.num == entryValue && f.isBytes():
			e.Value = f.str()
		}
		return nil
	})
	return e, err
}

func (d *decoder) graph(b []byte, g *Graph) error {
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	return each(b, func(f field) error {
		if !f.isBytes() {
			return nil // every GraphProto field we know is length-delimited
		}
		switch f.num {
		case graphNode:
			n := &Node{}
			if err := d.node(f.b, n); err != nil {
				return fmt.Errorf("node %d: %w", len(g.Nodes), err)
			}
			g.Nodes = append(g.Nodes, n)
		case graphName:
			g.Name = f.str()
		case graphInitializer:
			t := &TensorProto{}
			if err := d.tensor(f.b, t); err != nil {
				return fmt.Errorf("initializer %d: %w", len(g.Initializers), err)
			}
			g.Initializers = append(g.Initializers, t)
		case graphDocString:
			g.DocString = f.str()
		case graphInput, graphOutput, graphValueInfo:
			v, err := d.valueInfo(f.b)
			if err != nil {
				return fmt.Errorf("value info: %w", err)
			}
			switch f.num {
			case graphInput:
				g.Inputs = append(g.Inputs, v)
			case graphOutput:
				g.Outputs = append(g.Outputs, v)
			default:
				g.ValueInfo = append(g.ValueInfo, v)
			}
		}
		return nil
	})
}

func (d *decoder) node(b []byte, n *Node) error {
	return each(b, func(f field) error {
		if !f.isBytes() {
			return nil
		}
		switch f.num {
		case nodeInput:
			n.Inputs = append(n.Inputs, f.str())
		case nodeOutput:
			n.Outputs = append(n.Outputs, f.str())
		case nodeName:
			n.Name = f.str()
		case nodeOpType:
			n.OpType = f.str()
		case nodeAttribute:
			var a Attribute
			if err := d.attribute(f.b, &a); err != nil {
				return fmt.Errorf("attribute %d: %w", len(n.Attributes), err)
			}
			n.Attributes = append(n.Attributes, a)
		case nodeDocString:
			n.DocString = f.str()
		case nodeDomain:
			n.Domain = f.str()
		}
		return nil
	})
}

func (d *decoder) attribute(b []byte, a *Attribute) error {
	return each(b, func(f field) error {
		switch {
		case f.num == attrName && f.isBytes():
			a.Name = f.str()
		case f.num == attrF && f.isFixed32():
			a.F = math.Float32frombits(uint32(f.u))
		case f.num == attrI && f.isVarint():
			a.I = int64(f.u)
		case f.num == attrS && f.isBytes():
			a.S = d.bytes(f.b)
		case f.num == attrT && f.isBytes():
			if a.T == nil {
				a.T = &TensorProto{}
			}
			return d.tensor(f.b, a.T)
		case f.num == attrG && f.isBytes():
			if a.G == nil {
				a.G = &Graph{}
			}
			return d.graph(f.b, a.G)
		case f.num == attrFloats:
			return appendFixed32s(f, &a.Floats, math.Float32frombits)
		case f.num == attrInts:
			return appendVarints(f, &a.Ints, func(u uint64) int64 { return int64(u) })
		case f.num == attrStrings && f.isBytes():
			a.Strings = append(a.Strings, d.bytes(f.b))
		case f.num == attrTensors && f.isBytes():
			t := &TensorProto{}
			if err := d.tensor(f.b, t); err != nil {
				return err
			}
			a.Tensors = append(a.Tensors, t)
		case f.num == attrGraphs && f.isBytes():
			g := &Graph{}
			if err := d.graph(f.b, g); err != nil {
				return err
			}
			a.Graphs = append(a.Graphs, g)
		case f.num == attrDocString && f.isBytes():
			a.DocString = f.str()
		case f.num == attrType && f.isVarint():
			a.Type = int32(f.u)
		case f.num == attrRefAttrName && f.isBytes():
			a.RefAttrName = f.str()
		}
		return nil
	})
}

func (d *decoder) valueInfo(b []byte) (ValueInfo, error) {
	var v ValueInfo
	err := each(b, func(f field) error {
		if !f.isBytes() {
			return nil
		}
		switch f.num {
		case valueInfoName:
			v.Name = f.str()
		case valueInfoType:
			if v.Type == nil {
				v.Type = &TypeProto{}
			}
			return d.typeProto(f.b, v.Type)
		case valueInfoDocString:
			v.DocString = f.str()
		}
		return nil
	})
	return v, err
}

func (d *decoder) typeProto(b []byte, t *TypeProto) error {
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	return each(b, func(f field) error {
		if !f.isBytes() {
			return nil
		}
		// value is a oneof: setting one member clears the others, unless
		// the same member repeats, in which case the messages merge.
		switch f.num {
		case typeTensor:
			tt := t.Tensor
			*t = TypeProto{Denotation: t.Denotation, Tensor: tt}
			if t.Tensor == nil {
				t.Tensor = &TensorType{}
			}
			return tensorType(f.b, t.Tensor)
		case typeSparseTensor:
			st := t.SparseTensor
			*t = TypeProto{Denotation: t.Denotation, SparseTensor: st}
			if t.SparseTensor == nil {
				t.SparseTensor = &TensorType{}
			}
			return tensorType(f.b, t.SparseTensor)
		case typeSequence:
			s := t.Sequence
			*t = TypeProto{Denotation: t.Denotation, Sequence: s}
			if t.Sequence == nil {
				t.Sequence = &SequenceType{}
			}
			return d.elemType(f.b, &t.Sequence.Elem)
		case typeOptional:
			o := t.Optional
			*t = TypeProto{Denotation: t.Denotation, Optional: o}
			if t.Optional == nil {
				t.Optional = &OptionalType{}
			}
			return d.elemType(f.b, &t.Optional.Elem)
		case typeMap:
			mt := t.Map
			*t = TypeProto{Denotation: t.Denotation, Map: mt}
			if t.Map == nil {
				t.Map = &MapType{}
			}
			return d.mapType(f.b, t.Map)
		case typeDenotation:
			t.Denotation = f.str()
		}
		return nil
	})
}

// elemType decodes a TypeProto.Sequence or TypeProto.Optional body.
func (d *decoder) elemType(b []byte, elem **TypeProto) error {
	return each(b, func(f field) error {
		if f.num == sequenceElemType && f.isBytes() {
			if *elem == nil {
				*elem = &TypeProto{}
			}
			return d.typeProto(f.b, *elem)
		}
		return nil
	})
}

func (d *decoder) mapType(b []byte, m *MapType) error {
	return each(b, func(f field) error {
		switch {
		case f.num == mapKeyType && f.isVarint():
			m.KeyType = int32(f.u)
		case f.num == mapValueType && f.isBytes():
			if m.Value == nil {
				m.Value = &TypeProto{}
			}
			return d.typeProto(f.b, m.Value)
		}
		return nil
	})
}

func tensorType(b []byte, t *TensorType) error {
	return each(b, func(f field) error {
		switch {
		case f.num == tensorTypeElemType && f.isVarint():
			t.ElemType = int32(f.u)
		case f.num == tensorTypeShape && f.isBytes():
			if t.Shape == nil {
				t.Shape = []Dim{}
			}
			return each(f.b, func(f field) error {
				if f.num != shapeDim || !f.isBytes() {
					return nil
				}
				dim, err := dimension(f.b)
				if err != nil {
					return fmt.Errorf("dim %d: %w", len(t.Shape), err)
				}
				t.Shape = append(t.Shape, dim)
				return nil
			})
		}
		return nil
	})
}

func dimension(b []byte) (Dim, error) {
	d := Dim{Value: -1}
	err := each(b, func(f field) error {
		switch {
		case f.num == dimValue && f.isVarint():
			// oneof value: the last member seen wins.
			d.Value, d.Param = int64(f.u), ""
		case f.num == dimParam && f.isBytes():
			d.Value, d.Param = -1, f.str()
		case f.num == dimDenotation && f.isBytes():
			d.Denotation = f.str()
		}
		return nil
	})
	return d, err
}

func (d *decoder) tensor(b []byte, t *TensorProto) error {
	return each(b, func(f field) error {
		switch f.num {
		case tensorDims:
			return appendVarints(f, &t.Dims, func(u uint64) int64 { return int64(u) })
		case tensorDataType:
			if f.isVarint() {
				t.DataType = int32(f.u)
			}
		case tensorSegment:
			if f.isBytes() {
				if t.Segment == nil {
					t.Segment = &Segment{}
				}
				return each(f.b, func(f field) error {
					switch {
					case f.num == segmentBegin && f.isVarint():
						t.Segment.Begin = int64(f.u)
					case f.num == segmentEnd && f.isVarint():
						t.Segment.End = int64(f.u)
					}
					return nil
				})
			}
		case tensorFloatData:
			return appendFixed32s(f, &t.FloatData, math.Float32frombits)
		case tensorInt32Data:
			return appendVarints(f, &t.Int32Data, func(u uint64) int32 { return int32(u) })
		case tensorStringData:
			if f.isBytes() {
				t.StringData = append(t.StringData, d.bytes(f.b))
			}
		case tensorInt64Data:
			return appendVarints(f, &t.Int64Data, func(u uint64) int64 { return int64(u) })
		case tensorName:
			if f.isBytes() {
				t.Name = f.str()
			}
		case tensorRawData:
			if f.isBytes() {
				t.RawData = d.bytes(f.b)
			}
		case tensorDoubleData:
			return appendFixed64s(f, &t.DoubleData, math.Float64frombits)
		case tensorUint64Data:
			return appendVarints(f, &t.Uint64Data, func(u uint64) uint64 { return u })
		case tensorDocString:
			if f.isBytes() {
				t.DocString = f.str()
			}
		case tensorExternalData:
			if f.isBytes() {
				e, err := entry(f.b)
				if err != nil {
					return fmt.Errorf("external_data: %w", err)
				}
				t.ExternalData = append(t.ExternalData, e)
			}
		case tensorDataLocation:
			if f.isVarint() {
				t.DataLocation = int32(f.u)
			}
		}
		return nil
	})
}

var errPacked = errors.New("malformed packed repeated field")

// appendVarints appends a repeated varint field, packed or not.
func appendVarints[T any](f field, dst *[]T, conv func(uint64) T) error {
	switch f.typ {
	case protowire.VarintType:
		*dst = append(*dst, conv(f.u))
	case protowire.BytesType:
		n := 0
		for _, c := range f.b {
			if c < 0x80 {
				n++
			}
		}
		*dst = growCap(*dst, n)
		b := f.b
		for len(b) > 0 {
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return fmt.Errorf("field %d: %w", f.num, errPacked)
			}
			*dst = append(*dst, conv(v))
			b = b[m:]
		}
	}
	return nil
}

// appendFixed32s appends a repeated fixed32 field, packed or not.
func appendFixed32s[T any](f field, dst *[]T, conv func(uint32) T) error {
	switch f.typ {
	case protowire.Fixed32Type:
		*dst = append(*dst, conv(uint32(f.u)))
	case protowire.BytesType:
		if len(f.b)%4 != 0 {
			return fmt.Errorf("field %d: %w", f.num, errPacked)
		}
		*dst = growCap(*dst, len(f.b)/4)
		for b := f.b; len(b) > 0; b = b[4:] {
			v, _ := protowire.ConsumeFixed32(b)
			*dst = append(*dst, conv(v))
		}
	}
	return nil
}

// appendFixed64s appends a repeated fixed64 field, packed or not.
func appendFixed64s[T any](f field, dst *[]T, conv func(uint64) T) error {
	switch f.typ {
	case protowire.Fixed64Type:
		*dst = append(*dst, conv(f.u))
	case protowire.BytesType:
		if len(f.b)%8 != 0 {
			return fmt.Errorf("field %d: %w", f.num, errPacked)
		}
		*dst = growCap(*dst, len(f.b)/8)
		for b := f.b; len(b) > 0; b = b[8:] {
			v, _ := protowire.ConsumeFixed64(b)
			*dst = append(*dst, conv(v))
		}
	}
	return nil
}

func growCap[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	g := make([]T, len(s), len(s)+n)
	copy(g, s)
	return g
}
