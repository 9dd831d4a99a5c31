// Package onnxpb is a minimal, dependency-light codec for the ONNX model
// format (onnx.proto). It covers the parts of ModelProto that svc needs:
// model metadata, the graph's nodes, initializers and typed inputs/outputs.
//
// Fields that this package does not model are skipped when decoding and
// are therefore dropped by a decode/encode round trip. Decoding never
// panics: malformed input yields an error.
package onnxpb

import "strconv"

// TensorProto.DataType values (element types).
const (
	ElemUndefined  int32 = 0
	ElemFloat      int32 = 1
	ElemUint8      int32 = 2
	ElemInt8       int32 = 3
	ElemUint16     int32 = 4
	ElemInt16      int32 = 5
	ElemInt32      int32 = 6
	ElemInt64      int32 = 7
	ElemString     int32 = 8
	ElemBool       int32 = 9
	ElemFloat16    int32 = 10
	ElemDouble     int32 = 11
	ElemUint32     int32 = 12
	ElemUint64     int32 = 13
	ElemComplex64  int32 = 14
	ElemComplex128 int32 = 15
	ElemBFloat16   int32 = 16
)

// ElemTypeName returns the Go-style name of an ONNX element type
// ("float32", "int64", "string", ...). Unknown types are reported as
// "unknown(N)".
func ElemTypeName(t int32) string {
	switch t {
	case ElemFloat:
		return "float32"
	case ElemUint8:
		return "uint8"
	case ElemInt8:
		return "int8"
	case ElemUint16:
		return "uint16"
	case ElemInt16:
		return "int16"
	case ElemInt32:
		return "int32"
	case ElemInt64:
		return "int64"
	case ElemString:
		return "string"
	case ElemBool:
		return "bool"
	case ElemFloat16:
		return "float16"
	case ElemDouble:
		return "float64"
	case ElemUint32:
		return "uint32"
	case ElemUint64:
		return "uint64"
	case ElemComplex64:
		return "complex64"
	case ElemComplex128:
		return "complex128"
	case ElemBFloat16:
		return "bfloat16"
	case ElemUndefined:
		return "undefined"
	}
	return "unknown(" + itoa(int64(t)) + ")"
}

// ElemTypeSize returns the size in bytes of one element of a fixed-size
// element type, or 0 for string, undefined and unknown types.
func ElemTypeSize(t int32) int {
	switch t {
	case ElemUint8, ElemInt8, ElemBool:
		return 1
	case ElemUint16, ElemInt16, ElemFloat16, ElemBFloat16:
		return 2
	case ElemFloat, ElemInt32, ElemUint32:
		return 4
	case ElemInt64, ElemDouble, ElemUint64, ElemComplex64:
		return 8
	case ElemComplex128:
		return 16
	}
	return 0
}

// AttributeProto.AttributeType values.
const (
	AttrUndefined     int32 = 0
	AttrFloat         int32 = 1
	AttrInt           int32 = 2
	AttrString        int32 = 3
	AttrTensor        int32 = 4
	AttrGraph         int32 = 5
	AttrFloats        int32 = 6
	AttrInts          int32 = 7
	AttrStrings       int32 = 8
	AttrTensors       int32 = 9
	AttrGraphs        int32 = 10
	AttrSparseTensor  int32 = 11
	AttrSparseTensors int32 = 12
	AttrTypeProto     int32 = 13
	AttrTypeProtos    int32 = 14
)

// TensorProto.DataLocation values.
const (
	LocationDefault  int32 = 0
	LocationExternal int32 = 1
)

// Model is an ONNX ModelProto.
type Model struct {
	IRVersion       int64
	OpsetImports    []OpsetImport
	ProducerName    string
	ProducerVersion string
	Domain          string
	ModelVersion    int64
	DocString       string
	// Graph is nil when the encoded model has no graph.
	Graph *Graph
	// MetadataProps keeps the metadata entries in their encoded order.
	MetadataProps []StringEntry
}

// OpsetImport is an OperatorSetIdProto. The empty domain is the default
// ONNX domain ("ai.onnx").
type OpsetImport struct {
	Domain  string
	Version int64
}

// StringEntry is a StringStringEntryProto (a key/value pair).
type StringEntry struct {
	Key   string
	Value string
}

// Graph is an ONNX GraphProto.
type Graph struct {
	Name         string
	Nodes        []*Node
	Initializers []*TensorProto
	DocString    string
	Inputs       []ValueInfo
	Outputs      []ValueInfo
	ValueInfo    []ValueInfo
}

// Node is an ONNX NodeProto. An empty string in Inputs or Outputs stands
// for an omitted optional input or output.
type Node struct {
	Name       string
	OpType     string
	Domain     string
	DocString  string
	Inputs     []string
	Outputs    []string
	Attributes []Attribute
}

// Attribute is an ONNX AttributeProto. Type (one of the Attr* constants)
// tells which value field is meaningful. Sparse-tensor and type-proto
// attributes are not modelled and are dropped when decoding.
type Attribute struct {
	Name        string
	Type        int32
	DocString   string
	RefAttrName string

	F       float32
	I       int64
	S       []byte
	T       *TensorProto
	G       *Graph
	Floats  []float32
	Ints    []int64
	Strings [][]byte
	Tensors []*TensorProto
	Graphs  []*Graph
}

// ValueInfo is an ONNX ValueInfoProto: a named, typed graph value.
type ValueInfo struct {
	Name      string
	DocString string
	// Type is nil when the value carries no type information.
	Type *TypeProto
}

// TypeProto is an ONNX TypeProto. At most one of Tensor, SparseTensor,
// Sequence, Map and Optional is set.
type TypeProto struct {
	Tensor       *TensorType
	SparseTensor *TensorType
	Sequence     *SequenceType
	Map          *MapType
	Optional     *OptionalType
	Denotation   string
}

// TensorType is TypeProto.Tensor (also used for TypeProto.SparseTensor,
// which has the same layout).
type TensorType struct {
	ElemType int32
	// Shape is nil when the rank is unknown (no shape field). A non-nil
	// empty slice is a known rank of 0 (a scalar).
	Shape []Dim
}

// Dim is a TensorShapeProto.Dimension. Exactly one of three forms holds:
// a fixed size (Value >= 0, Param == ""), a symbolic size (Param != ""),
// or an unknown size (Value < 0, Param == ""). Use DimValue, DimParam and
// DimUnknown to build them.
type Dim struct {
	Value      int64
	Param      string
	Denotation string
}

// SequenceType is TypeProto.Sequence.
type SequenceType struct {
	Elem *TypeProto
}

// MapType is TypeProto.Map. KeyType is an element type (ElemString, ElemInt64, ...).
type MapType struct {
	KeyType int32
	Value   *TypeProto
}

// OptionalType is TypeProto.Optional.
type OptionalType struct {
	Elem *TypeProto
}

// Segment is TensorProto.Segment.
type Segment struct {
	Begin int64
	End   int64
}

// TensorProto is an ONNX TensorProto. The data is held in RawData
// (little endian) or in one of the typed fields, depending on DataType and
// on the producer; see Values.
type TensorProto struct {
	Name      string
	Dims      []int64
	DataType  int32
	Segment   *Segment
	DocString string

	// RawData is nil when the raw_data field is absent.
	RawData    []byte
	FloatData  []float32
	Int32Data  []int32
	Int64Data  []int64
	DoubleData []float64
	Uint64Data []uint64
	StringData [][]byte

	DataLocation int32
	ExternalData []StringEntry
}

// DimValue returns a fixed-size dimension.
func DimValue(n int64) Dim { return Dim{Value: n} }

// DimParam returns a symbolic dimension such as "batch".
func DimParam(name string) Dim { return Dim{Value: -1, Param: name} }

// DimUnknown returns a dimension with neither a size nor a name.
func DimUnknown() Dim { return Dim{Value: -1} }

// IsFixed reports whether d has a fixed size.
func (d Dim) IsFixed() bool { return d.Param == "" && d.Value >= 0 }

// String renders d as its size, its name, or "?".
func (d Dim) String() string {
	switch {
	case d.Param != "":
		return d.Param
	case d.Value >= 0:
		return itoa(d.Value)
	}
	return "?"
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
