// Package slowload builds a small ONNX model whose ONNX Runtime session
// takes seconds to create but whose inference is instant, for tests of what
// svc does while a model is still loading.
//
// The model computes y = x + 1 for one float32 input "x" of shape [batch, 4]
// and one output "y" of the same shape. The 1 is not stored: it is computed
// by a constant subgraph,
//
//	ones = Expand(1, [Side, Side])
//	k    = ReduceMax(MatMul(ones, ones)) / Side   // = Side / Side = 1, exactly
//	y    = x + k
//
// whose inputs are all initializers, so ONNX Runtime's constant folding
// (graph optimization "basic" and above; svc's default is "all") evaluates
// it once, on one thread, while it creates the session: a 4608×4608 matrix
// product, about 196 GFLOP. On svc's 2-core development machine that is
// about 3.3 s of CPU time (2.5 s user, 0.8 s system), so session creation
// takes 3–4 s on an idle machine and up to about 10 s on a busy one (the
// package test logs it), while each run is one Add of microseconds. The
// file is under 500 bytes and Write takes about a millisecond. Session
// creation needs about 260 MB of extra memory for a moment (the folded
// matrices), which is released when it ends.
//
// With graph optimization "disabled" nothing is folded: the session is
// created at once and every run computes the product instead.
package slowload

import (
	"fmt"

	"github.com/svc-dev/svc/core/onnxpb"
)

// Side is the side of the square matrix of ones that session creation
// multiplies by itself. The load time grows with its cube.
const Side = 4608

const (
	irVersion = 8
	opset     = 17 // ReduceMax takes its axes as an attribute up to opset 17
)

// Model returns the model described in the package documentation.
func Model() (*onnxpb.Model, error) {
	return build(Side)
}

// Write writes the model to path (mode 0644).
func Write(path string) error {
	m, err := Model()
	if err != nil {
		return err
	}
	if err := onnxpb.WriteFile(path, m); err != nil {
		return fmt.Errorf("write slow-loading model: %w", err)
	}
	return nil
}

// build makes the model with a side×side matrix product; side must be at
// most 2^24 so that the sums of ones are exact in float32.
func build(side int64) (*onnxpb.Model, error) {
	inits := []struct {
		name   string
		dims   []int64
		values any
	}{
		{"one", nil, []float32{1}},
		{"shape", []int64{2}, []int64{side, side}},
		{"side", nil, []float32{float32(side)}},
	}
	g := &onnxpb.Graph{Name: "slowload", DocString: "y = x + 1, with the 1 folded from a large matrix product"}
	for _, in := range inits {
		t, err := onnxpb.NewTensor(in.name, in.dims, in.values)
		if err != nil {
			return nil, fmt.Errorf("slowload: initializer %s: %w", in.name, err)
		}
		g.Initializers = append(g.Initializers, t)
	}
	node := func(op string, inputs []string, output string, attrs ...onnxpb.Attribute) {
		g.Nodes = append(g.Nodes, &onnxpb.Node{
			Name: output, OpType: op, Inputs: inputs, Outputs: []string{output}, Attributes: attrs,
		})
	}
	node("Expand", []string{"one", "shape"}, "ones")
	node("MatMul", []string{"ones", "ones"}, "product")
	node("ReduceMax", []string{"product"}, "max", onnxpb.Attribute{Name: "keepdims", Type: onnxpb.AttrInt, I: 0})
	node("Div", []string{"max", "side"}, "k")
	node("Add", []string{"x", "k"}, "y")

	rows := &onnxpb.TypeProto{Tensor: &onnxpb.TensorType{
		ElemType: onnxpb.ElemFloat,
		Shape:    []onnxpb.Dim{onnxpb.DimParam("batch"), onnxpb.DimValue(4)},
	}}
	g.Inputs = []onnxpb.ValueInfo{{Name: "x", Type: rows, DocString: "any rows of 4 values"}}
	g.Outputs = []onnxpb.ValueInfo{{Name: "y", Type: rows, DocString: "x + 1"}}
	return &onnxpb.Model{
		IRVersion:    irVersion,
		ProducerName: "svc-genmodels-slowload",
		OpsetImports: []onnxpb.OpsetImport{{Domain: "", Version: opset}},
		DocString:    fmt.Sprintf("y = x + 1; creating a session folds a %d×%d matrix product and takes seconds", side, side),
		Graph:        g,
	}, nil
}
