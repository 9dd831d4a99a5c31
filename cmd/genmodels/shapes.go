package main

import "github.com/svc-dev/svc/core/onnxpb"

// scalarTypes lists one rank-0 input per element type for scalars.onnx
// (numeric and bool) and scalars_special.onnx (float16, bfloat16, string).
var (
	scalarTypes = []struct {
		name string
		elem int32
	}{
		{"f32", onnxpb.ElemFloat},
		{"f64", onnxpb.ElemDouble},
		{"i8", onnxpb.ElemInt8},
		{"i16", onnxpb.ElemInt16},
		{"i32", onnxpb.ElemInt32},
		{"i64", onnxpb.ElemInt64},
		{"u8", onnxpb.ElemUint8},
		{"u16", onnxpb.ElemUint16},
		{"u32", onnxpb.ElemUint32},
		{"u64", onnxpb.ElemUint64},
		{"bool", onnxpb.ElemBool},
	}
	specialScalarTypes = []struct {
		name string
		elem int32
	}{
		{"f16", onnxpb.ElemFloat16},
		{"bf16", onnxpb.ElemBFloat16},
		{"str", onnxpb.ElemString},
	}
)

// scalars has a rank-0 input and a rank-0 Identity output for every
// numeric and bool element type, plus f32_x2 = f32 * 2 (rank 0).
func scalars() *onnxpb.Model {
	b := newGraph("scalars")
	for _, t := range scalarTypes {
		b.input(t.name, tensorOf(t.elem), "")
	}
	for _, t := range scalarTypes {
		b.node("Identity", in(t.name), out(t.name+"_out"))
		b.output(t.name+"_out", tensorOf(t.elem), "")
	}
	b.initializer(constant("two", nil, []float32{2}))
	b.node("Mul", in("f32", "two"), out("f32_x2"))
	b.output("f32_x2", tensorOf(onnxpb.ElemFloat), "f32 * 2")
	return b.model()
}

// scalarsSpecial is scalars for float16, bfloat16 and string.
func scalarsSpecial() *onnxpb.Model {
	b := newGraph("scalars_special")
	for _, t := range specialScalarTypes {
		b.input(t.name, tensorOf(t.elem), "")
	}
	for _, t := range specialScalarTypes {
		b.node("Identity", in(t.name), out(t.name+"_out"))
		b.output(t.name+"_out", tensorOf(t.elem), "")
	}
	return b.model()
}

// unknownRank has an input without a shape (any rank) and outputs without
// a shape (y, and total, which is rank 0 at run time) or without any type
// (neg).
func unknownRank() *onnxpb.Model {
	b := newGraph("unknown_rank")
	b.input("x", tensorAnyShape(onnxpb.ElemFloat), "any rank")
	b.node("Identity", in("x"), out("y"))
	b.node("ReduceSum", in("x"), out("total"), attrInt("keepdims", 0))
	b.node("Neg", in("x"), out("neg"))
	b.output("y", tensorAnyShape(onnxpb.ElemFloat), "x")
	b.output("total", tensorAnyShape(onnxpb.ElemFloat), "sum of all elements (rank 0)")
	b.output("neg", nil, "-x; declared without a type")
	return b.model()
}

// zeroDims has a fixed zero-sized dimension and dynamic dimensions a
// request may set to 0, in float32, float16 and string.
func zeroDims() *onnxpb.Model {
	b := newGraph("zero_dims")
	b.input("fixed", tensorOf(onnxpb.ElemFloat, 0, 3), "always empty")
	b.input("dyn", tensorOf(onnxpb.ElemFloat, "n", 2), "")
	b.input("half", tensorOf(onnxpb.ElemFloat16, "m"), "")
	b.input("text", tensorOf(onnxpb.ElemString, "k"), "")
	b.initializer(constant("axes", dims(1), []int64{1}))
	b.node("Identity", in("fixed"), out("fixed_out"))
	b.node("Identity", in("dyn"), out("dyn_out"))
	b.node("ReduceSum", in("dyn", "axes"), out("dyn_sum"), attrInt("keepdims", 0))
	b.node("Identity", in("half"), out("half_out"))
	b.node("Identity", in("text"), out("text_out"))
	b.output("fixed_out", tensorOf(onnxpb.ElemFloat, 0, 3), "")
	b.output("dyn_out", tensorOf(onnxpb.ElemFloat, "n", 2), "")
	b.output("dyn_sum", tensorOf(onnxpb.ElemFloat, "n"), "row sums")
	b.output("half_out", tensorOf(onnxpb.ElemFloat16, "m"), "")
	b.output("text_out", tensorOf(onnxpb.ElemString, "k"), "")
	return b.model()
}

// vectors has a 1-D input of every element type (scalarTypes, then
// specialScalarTypes), each with a length of its own (n_<name>), and an
// Identity output of the same type and length: a request can be large in
// one element type and tiny in the others (make bench's memory check).
func vectors() *onnxpb.Model {
	b := newGraph("vectors")
	all := append(append(scalarTypes[:0:0], scalarTypes...), specialScalarTypes...)
	for _, t := range all {
		b.input(t.name, tensorOf(t.elem, "n_"+t.name), "")
	}
	for _, t := range all {
		b.node("Identity", in(t.name), out(t.name+"_out"))
		b.output(t.name+"_out", tensorOf(t.elem, "n_"+t.name), "")
	}
	return b.model()
}

// misnamedDims declares an output with the input's dimension name that the
// graph does not keep: doubled = Concat(x, x) is [2n] at run time, though
// declared [n] (ONNX Runtime warns and runs). same = Identity(x) keeps it.
// nonzero = NonZero(x) is [1, k], k the count of non-zero elements: its
// shape depends on the values, not only on x's shape. svc sizes outputs
// before a run, from dimension names or from earlier runs' shapes; for
// doubled and nonzero that can fail, and the run must be repeated with
// ONNX Runtime allocating.
func misnamedDims() *onnxpb.Model {
	b := newGraph("misnamed_dims")
	b.input("x", tensorOf(onnxpb.ElemFloat, "n"), "")
	b.node("Concat", in("x", "x"), out("doubled"), attrInt("axis", 0))
	b.node("Identity", in("x"), out("same"))
	b.node("NonZero", in("x"), out("nonzero"))
	b.output("doubled", tensorOf(onnxpb.ElemFloat, "n"), "declared [n], is [2n]")
	b.output("same", tensorOf(onnxpb.ElemFloat, "n"), "")
	b.output("nonzero", tensorOf(onnxpb.ElemInt64, 1, "k"), "indices of the non-zero elements")
	return b.model()
}
