package main

import (
	"fmt"

	"github.com/svc-dev/svc/core/onnxpb"
)

// A small builder API over onnxpb for hand-written test graphs.

const (
	irVersion    = 8
	defaultOpset = 17
	mlDomain     = "ai.onnx.ml"
	mlOpset      = 3
	producerName = "svc-genmodels"
)

// graphBuilder accumulates a graph's nodes, initializers, inputs and
// outputs. Node names are generated from the op type and a counter.
type graphBuilder struct {
	g      *onnxpb.Graph
	counts map[string]int
	usesML bool
}

func newGraph(name string) *graphBuilder {
	return &graphBuilder{g: &onnxpb.Graph{Name: name}, counts: map[string]int{}}
}

// input declares a graph input.
func (b *graphBuilder) input(name string, t *onnxpb.TypeProto, doc string) {
	b.g.Inputs = append(b.g.Inputs, onnxpb.ValueInfo{Name: name, Type: t, DocString: doc})
}

// output declares a graph output.
func (b *graphBuilder) output(name string, t *onnxpb.TypeProto, doc string) {
	b.g.Outputs = append(b.g.Outputs, onnxpb.ValueInfo{Name: name, Type: t, DocString: doc})
}

// initializer adds a constant tensor; its name is the tensor's name.
func (b *graphBuilder) initializer(t *onnxpb.TensorProto) {
	b.g.Initializers = append(b.g.Initializers, t)
}

// node adds a default-domain node.
func (b *graphBuilder) node(op string, inputs, outputs []string, attrs ...onnxpb.Attribute) *onnxpb.Node {
	n := &onnxpb.Node{
		Name:       fmt.Sprintf("%s_%d", op, b.counts[op]),
		OpType:     op,
		Inputs:     inputs,
		Outputs:    outputs,
		Attributes: attrs,
	}
	b.counts[op]++
	b.g.Nodes = append(b.g.Nodes, n)
	return n
}

// mlNode adds an ai.onnx.ml node.
func (b *graphBuilder) mlNode(op string, inputs, outputs []string, attrs ...onnxpb.Attribute) *onnxpb.Node {
	n := b.node(op, inputs, outputs, attrs...)
	n.Domain = mlDomain
	b.usesML = true
	return n
}

// model wraps the graph in a ModelProto with the standard header.
func (b *graphBuilder) model() *onnxpb.Model {
	m := &onnxpb.Model{
		IRVersion:    irVersion,
		ProducerName: producerName,
		OpsetImports: []onnxpb.OpsetImport{{Domain: "", Version: defaultOpset}},
		Graph:        b.g,
	}
	if b.usesML {
		m.OpsetImports = append(m.OpsetImports, onnxpb.OpsetImport{Domain: mlDomain, Version: mlOpset})
	}
	return m
}

// in and out make node input/output lists read naturally.
func in(names ...string) []string  { return names }
func out(names ...string) []string { return names }

// tensorOf returns a tensor type with a known shape. Each dim is an int
// (fixed size) or a string (symbolic dim_param); no dims means rank 0.
func tensorOf(elem int32, dims ...any) *onnxpb.TypeProto {
	shape := make([]onnxpb.Dim, 0, len(dims))
	for _, d := range dims {
		switch d := d.(type) {
		case int:
			shape = append(shape, onnxpb.DimValue(int64(d)))
		case string:
			shape = append(shape, onnxpb.DimParam(d))
		default:
			panic(fmt.Sprintf("tensorOf: bad dim %v (%T)", d, d))
		}
	}
	return &onnxpb.TypeProto{Tensor: &onnxpb.TensorType{ElemType: elem, Shape: shape}}
}

// tensorAnyShape returns a tensor type of unknown rank.
func tensorAnyShape(elem int32) *onnxpb.TypeProto {
	return &onnxpb.TypeProto{Tensor: &onnxpb.TensorType{ElemType: elem}}
}

func seqOf(elem *onnxpb.TypeProto) *onnxpb.TypeProto {
	return &onnxpb.TypeProto{Sequence: &onnxpb.SequenceType{Elem: elem}}
}

func mapOf(key int32, value *onnxpb.TypeProto) *onnxpb.TypeProto {
	return &onnxpb.TypeProto{Map: &onnxpb.MapType{KeyType: key, Value: value}}
}

// constant builds an initializer tensor; it panics on a length mismatch,
// which is a bug in this program.
func constant(name string, dims []int64, values any) *onnxpb.TensorProto {
	t, err := onnxpb.NewTensor(name, dims, values)
	if err != nil {
		panic(err)
	}
	return t
}

func dims(d ...int64) []int64 { return d }

// Attribute helpers.

func attrInt(name string, v int64) onnxpb.Attribute {
	return onnxpb.Attribute{Name: name, Type: onnxpb.AttrInt, I: v}
}

func attrInts(name string, v ...int64) onnxpb.Attribute {
	return onnxpb.Attribute{Name: name, Type: onnxpb.AttrInts, Ints: v}
}

func attrString(name, v string) onnxpb.Attribute {
	return onnxpb.Attribute{Name: name, Type: onnxpb.AttrString, S: []byte(v)}
}

func attrStrings(name string, v ...string) onnxpb.Attribute {
	a := onnxpb.Attribute{Name: name, Type: onnxpb.AttrStrings}
	for _, s := range v {
		a.Strings = append(a.Strings, []byte(s))
	}
	return a
}
