package onnxpb

import (
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// maxDepth bounds the nesting of graphs (in attributes) and types (in
// sequences, maps and optionals), when encoding and when decoding.
const maxDepth = 100

var errTooDeep = errors.New("onnxpb: message nesting too deep")

// Field numbers from onnx.proto.
const (
	// ModelProto
	modelIRVersion       = 1
	modelProducerName    = 2
	modelProducerVersion = 3
	modelDomain          = 4
	modelModelVersion    = 5
	modelDocString       = 6
	modelGraph           = 7
	modelOpsetImport     = 8
	modelMetadataProps   = 14

	// OperatorSetIdProto
	opsetDomain  = 1
	opsetVersion = 2

	// StringStringEntryProto
	entryKey   = 1
	entryValue = 2

	// GraphProto
	graphNode        = 1
	graphName        = 2
	graphInitializer = 5
	graphDocString   = 10
	graphInput       = 11
	graphOutput      = 12
	graphValueInfo   = 13

	// NodeProto
	nodeInput     = 1
	nodeOutput    = 2
	nodeName      = 3
	nodeOpType    = 4
	nodeAttribute = 5
	nodeDocString = 6
	nodeDomain    = 7

	// AttributeProto
	attrName        = 1
	attrF           = 2
	attrI           = 3
	attrS           = 4
	attrT           = 5
	attrG           = 6
	attrFloats      = 7
	attrInts        = 8
	attrStrings     = 9
	attrTensors     = 10
	attrGraphs      = 11
	attrDocString   = 13
	attrType        = 20
	attrRefAttrName = 21

	// ValueInfoProto
	valueInfoName      = 1
	valueInfoType      = 2
	valueInfoDocString = 3

	// TypeProto
	typeTensor       = 1
	typeSequence     = 4
	typeMap          = 5
	typeDenotation   = 6
	typeSparseTensor = 8
	typeOptional     = 9

	// TypeProto.Tensor / TypeProto.SparseTensor
	tensorTypeElemType = 1
	tensorTypeShape    = 2

	// TypeProto.Sequence / TypeProto.Optional
	sequenceElemType = 1

	// TypeProto.Map
	mapKeyType   = 1
	mapValueType = 2

	// TensorShapeProto
	shapeDim = 1

	// TensorShapeProto.Dimension
	dimValue      = 1
	dimParam      = 2
	dimDenotation = 3

	// TensorProto
	tensorDims         = 1
	tensorDataType     = 2
	tensorSegment      = 3
	tensorFloatData    = 4
	tensorInt32Data    = 5
	tensorStringData   = 6
	tensorInt64Data    = 7
	tensorName         = 8
	tensorRawData      = 9
	tensorDoubleData   = 10
	tensorUint64Data   = 11
	tensorDocString    = 12
	tensorExternalData = 13
	tensorDataLocation = 14

	// TensorProto.Segment
	segmentBegin = 1
	segmentEnd   = 2
)

// Marshal encodes m as an ONNX ModelProto. Fields are written in field
// number order and repeated fields in slice order, so the output is
// deterministic. Zero-valued scalar fields are omitted, except attribute
// values selected by Attribute.Type, which are always written.
func Marshal(m *Model) ([]byte, error) {
	if m == nil {
		return nil, errors.New("onnxpb: Marshal of nil model")
	}
	var b []byte
	b = appendVarintField(b, modelIRVersion, uint64(m.IRVersion))
	b = appendStringField(b, modelProducerName, m.ProducerName)
	b = appendStringField(b, modelProducerVersion, m.ProducerVersion)
	b = appendStringField(b, modelDomain, m.Domain)
	b = appendVarintField(b, modelModelVersion, uint64(m.ModelVersion))
	b = appendStringField(b, modelDocString, m.DocString)
	if m.Graph != nil {
		g, err := encodeGraph(m.Graph, 0)
		if err != nil {
			return nil, err
		}
		b = appendMessage(b, modelGraph, g)
	}
	for _, o := range m.OpsetImports {
		var ob []byte
		ob = appendStringField(ob, opsetDomain, o.Domain)
		// The version is always written: version 0 is meaningless but
		// keeping it makes the entry round-trip faithfully.
		ob = protowire.AppendTag(ob, opsetVersion, protowire.VarintType)
		ob = protowire.AppendVarint(ob, uint64(o.Version))
		b = appendMessage(b, modelOpsetImport, ob)
	}
	for _, e := range m.MetadataProps {
		b = appendMessage(b, modelMetadataProps, encodeEntry(e))
	}
	return b, nil
}

func encodeEntry(e StringEntry) []byte {
	var b []byte
	b = appendStringField(b, entryKey, e.Key)
	b = appendStringField(b, entryValue, e.Value)
	return b
}

func encodeGraph(g *Graph, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	var b []byte
	for i, n := range g.Nodes {
		if n == nil {
			return nil, fmt.Errorf("onnxpb: graph %q: node %d is nil", g.Name, i)
		}
		nb, err := encodeNode(n, depth)
		if err != nil {
			return nil, err
		}
		b = appendMessage(b, graphNode, nb)
	}
	b = appendStringField(b, graphName, g.Name)
	for i, t := range g.Initializers {
		if t == nil {
			return nil, fmt.Errorf("onnxpb: graph %q: initializer %d is nil", g.Name, i)
		}
		b = appendMessage(b, graphInitializer, encodeTensor(t))
	}
	b = appendStringField(b, graphDocString, g.DocString)
	for _, list := range []struct {
		num  protowire.Number
		vals []ValueInfo
	}{{graphInput, g.Inputs}, {graphOutput, g.Outputs}, {graphValueInfo, g.ValueInfo}} {
		for _, v := range list.vals {
			vb, err := encodeValueInfo(v, depth)
			if err != nil {
				return nil, err
			}
			b = appendMessage(b, list.num, vb)
		}
	}
	return b, nil
}

func encodeNode(n *Node, depth int) ([]byte, error) {
	var b []byte
	for _, s := range n.Inputs {
		b = appendRepeatedString(b, nodeInput, s)
	}
	for _, s := range n.Outputs {
		b = appendRepeatedString(b, nodeOutput, s)
	}
	b = appendStringField(b, nodeName, n.Name)
	b = appendStringField(b, nodeOpType, n.OpType)
	for i := range n.Attributes {
		ab, err := encodeAttribute(&n.Attributes[i], depth)
		if err != nil {
			return nil, fmt.Errorf("node %q: attribute %q: %w", n.Name, n.Attributes[i].Name, err)
		}
		b = appendMessage(b, nodeAttribute, ab)
	}
	b = appendStringField(b, nodeDocString, n.DocString)
	b = appendStringField(b, nodeDomain, n.Domain)
	return b, nil
}

func encodeAttribute(a *Attribute, depth int) ([]byte, error) {
	var b []byte
	b = appendStringField(b, attrName, a.Name)
	if a.Type == AttrFloat || a.F != 0 {
		b = protowire.AppendTag(b, attrF, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, math.Float32bits(a.F))
	}
	if a.Type == AttrInt || a.I != 0 {
		b = protowire.AppendTag(b, attrI, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(a.I))
	}
	if a.Type == AttrString || a.S != nil {
		b = protowire.AppendTag(b, attrS, protowire.BytesType)
		b = protowire.AppendBytes(b, a.S)
	}
	if a.T != nil {
		b = appendMessage(b, attrT, encodeTensor(a.T))
	}
	if a.G != nil {
		gb, err := encodeGraph(a.G, depth+1)
		if err != nil {
			return nil, err
		}
		b = appendMessage(b, attrG, gb)
	}
	// floats and ints are declared without [packed = true] in onnx.proto
	// (proto2), so they are written unpacked like the reference encoder.
	for _, f := range a.Floats {
		b = protowire.AppendTag(b, attrFloats, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, math.Float32bits(f))
	}
	for _, v := range a.Ints {
		b = protowire.AppendTag(b, attrInts, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(v))
	}
	for _, s := range a.Strings {
		b = protowire.AppendTag(b, attrStrings, protowire.BytesType)
		b = protowire.AppendBytes(b, s)
	}
	for i, t := range a.Tensors {
		if t == nil {
			return nil, fmt.Errorf("tensor %d is nil", i)
		}
		b = appendMessage(b, attrTensors, encodeTensor(t))
	}
	for i, g := range a.Graphs {
		if g == nil {
			return nil, fmt.Errorf("graph %d is nil", i)
		}
		gb, err := encodeGraph(g, depth+1)
		if err != nil {
			return nil, err
		}
		b = appendMessage(b, attrGraphs, gb)
	}
	b = appendStringField(b, attrDocString, a.DocString)
	b = appendVarintField(b, attrType, uint64(int64(a.Type)))
	b = appendStringField(b, attrRefAttrName, a.RefAttrName)
	return b, nil
}

func encodeValueInfo(v ValueInfo, depth int) ([]byte, error) {
	var b []byte
	b = appendStringField(b, valueInfoName, v.Name)
	if v.Type != nil {
		tb, err := encodeType(v.Type, depth+1)
		if err != nil {
			return nil, fmt.Errorf("value %q: %w", v.Name, err)
		}
		b = appendMessage(b, valueInfoType, tb)
	}
	b = appendStringField(b, valueInfoDocString, v.DocString)
	return b, nil
}

func encodeType(t *TypeProto, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	set := 0
	for _, ok := range []bool{t.Tensor != nil, t.SparseTensor != nil, t.Sequence != nil, t.Map != nil, t.Optional != nil} {
		if ok {
			set++
		}
	}
	if set > 1 {
		return nil, errors.New("onnxpb: TypeProto has more than one of tensor, sparse tensor, sequence, map, optional")
	}
	var b []byte
	if t.Tensor != nil {
		b = appendMessage(b, typeTensor, encodeTensorType(t.Tensor))
	}
	if t.Sequence != nil {
		sb, err := encodeElemType(t.Sequence.Elem, depth)
		if err != nil {
			return nil, err
		}
		b = appendMessage(b, typeSequence, sb)
	}
	if t.Map != nil {
		var mb []byte
		mb = appendVarintField(mb, mapKeyType, uint64(int64(t.Map.KeyType)))
		if t.Map.Value != nil {
			vb, err := encodeType(t.Map.Value, depth+1)
			if err != nil {
				return nil, err
			}
			mb = appendMessage(mb, mapValueType, vb)
		}
		b = appendMessage(b, typeMap, mb)
	}
	b = appendStringField(b, typeDenotation, t.Denotation)
	if t.SparseTensor != nil {
		b = appendMessage(b, typeSparseTensor, encodeTensorType(t.SparseTensor))
	}
	if t.Optional != nil {
		ob, err := encodeElemType(t.Optional.Elem, depth)
		if err != nil {
			return nil, err
		}
		b = appendMessage(b, typeOptional, ob)
	}
	return b, nil
}

// encodeElemType encodes a TypeProto.Sequence or TypeProto.Optional body.
func encodeElemType(elem *TypeProto, depth int) ([]byte, error) {
	if elem == nil {
		return []byte{}, nil
	}
	eb, err := encodeType(elem, depth+1)
	if err != nil {
		return nil, err
	}
	return appendMessage(nil, sequenceElemType, eb), nil
}

func encodeTensorType(t *TensorType) []byte {
	var b []byte
	b = appendVarintField(b, tensorTypeElemType, uint64(int64(t.ElemType)))
	if t.Shape != nil {
		var sb []byte
		for _, d := range t.Shape {
			var db []byte
			switch {
			case d.Param != "":
				db = appendStringField(db, dimParam, d.Param)
			case d.Value >= 0:
				db = protowire.AppendTag(db, dimValue, protowire.VarintType)
				db = protowire.AppendVarint(db, uint64(d.Value))
			}
			db = appendStringField(db, dimDenotation, d.Denotation)
			sb = appendMessage(sb, shapeDim, db)
		}
		b = appendMessage(b, tensorTypeShape, sb)
	}
	return b
}

func encodeTensor(t *TensorProto) []byte {
	var b []byte
	for _, d := range t.Dims {
		b = protowire.AppendTag(b, tensorDims, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(d))
	}
	b = appendVarintField(b, tensorDataType, uint64(int64(t.DataType)))
	if t.Segment != nil {
		var sb []byte
		sb = appendVarintField(sb, segmentBegin, uint64(t.Segment.Begin))
		sb = appendVarintField(sb, segmentEnd, uint64(t.Segment.End))
		b = appendMessage(b, tensorSegment, sb)
	}
	if len(t.FloatData) > 0 {
		p := make([]byte, 0, 4*len(t.FloatData))
		for _, f := range t.FloatData {
			p = protowire.AppendFixed32(p, math.Float32bits(f))
		}
		b = appendMessage(b, tensorFloatData, p)
	}
	if len(t.Int32Data) > 0 {
		var p []byte
		for _, v := range t.Int32Data {
			p = protowire.AppendVarint(p, uint64(int64(v)))
		}
		b = appendMessage(b, tensorInt32Data, p)
	}
	for _, s := range t.StringData {
		b = protowire.AppendTag(b, tensorStringData, protowire.BytesType)
		b = protowire.AppendBytes(b, s)
	}
	if len(t.Int64Data) > 0 {
		var p []byte
		for _, v := range t.Int64Data {
			p = protowire.AppendVarint(p, uint64(v))
		}
		b = appendMessage(b, tensorInt64Data, p)
	}
	b = appendStringField(b, tensorName, t.Name)
	if t.RawData != nil {
		b = protowire.AppendTag(b, tensorRawData, protowire.BytesType)
		b = protowire.AppendBytes(b, t.RawData)
	}
	if len(t.DoubleData) > 0 {
		p := make([]byte, 0, 8*len(t.DoubleData))
		for _, f := range t.DoubleData {
			p = protowire.AppendFixed64(p, math.Float64bits(f))
		}
		b = appendMessage(b, tensorDoubleData, p)
	}
	if len(t.Uint64Data) > 0 {
		var p []byte
		for _, v := range t.Uint64Data {
			p = protowire.AppendVarint(p, v)
		}
		b = appendMessage(b, tensorUint64Data, p)
	}
	b = appendStringField(b, tensorDocString, t.DocString)
	for _, e := range t.ExternalData {
		b = appendMessage(b, tensorExternalData, encodeEntry(e))
	}
	b = appendVarintField(b, tensorDataLocation, uint64(int64(t.DataLocation)))
	return b
}

// appendVarintField appends a varint field unless v is zero.
func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// appendStringField appends a string field unless s is empty.
func appendStringField(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	return appendRepeatedString(b, num, s)
}

// appendRepeatedString appends a string field, even an empty one.
func appendRepeatedString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendMessage(b []byte, num protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}
