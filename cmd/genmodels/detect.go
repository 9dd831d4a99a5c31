package main

import (
	"fmt"

	"github.com/svc-dev/svc/core/onnxpb"
)

// The grid detectors: a 160×160 picture in, solid red, green and blue
// squares found. Each class's mask is its colour's pixels (red: r > 0.6,
// g < 0.4, b < 0.4 after the yolo preset's 1/255); its box is the extent
// of those pixels (first and last column and row set, the right and
// bottom edges one past the last pixel); each of the 20×20 anchors of
// stride 8 scores each class by the share of its 8×8 cell the colour
// covers, times a weight that grows with the anchor's index (0.9 to 0.99,
// so no two anchors tie), and carries the box of its best class. So one
// square per colour gives one box per colour, where it is drawn, after
// suppression; the layouts lay the same boxes out as YOLOv8, YOLOv5, an
// end-to-end export and RT-DETR do, and the segment and pose variants add
// the colour's mask as prototype masks and the box's corners as
// keypoints.
const (
	gridSize    = 160
	gridStride  = 8
	gridCells   = gridSize / gridStride
	gridAnchors = gridCells * gridCells
	gridClasses = 3
	gridNames   = "{0: 'red', 1: 'green', 2: 'blue'}"
)

// gridModel is one grid detector: its file, layout and task.
type gridModel struct {
	file, layout, task string
}

var gridModels = []gridModel{
	{"detect_yolov8.onnx", "yolov8", "detect"},
	{"detect_yolov5.onnx", "yolov5", "detect"},
	{"detect_end2end.onnx", "end2end", "detect"},
	{"detect_rtdetr.onnx", "rtdetr", "detect"},
	{"segment_yolov8.onnx", "yolov8", "segment"},
	{"pose_yolov8.onnx", "yolov8", "pose"},
}

// colourMasks adds the class masks M [batch, 3, S, S], 1 where a pixel is
// the class's colour.
func colourMasks(b *graphBuilder) {
	b.initializer(constant("hi", dims(), []float32{0.6}))
	b.initializer(constant("lo", dims(), []float32{0.4}))
	b.node("Split", in("images"), out("r", "g", "b"), attrInt("axis", 1))
	for _, ch := range []string{"r", "g", "b"} {
		b.node("Greater", in(ch, "hi"), out(ch+"_hi"))
		b.node("Less", in(ch, "lo"), out(ch+"_lo"))
	}
	for _, c := range [][4]string{{"red", "r_hi", "g_lo", "b_lo"}, {"green", "g_hi", "r_lo", "b_lo"}, {"blue", "b_hi", "r_lo", "g_lo"}} {
		b.node("And", in(c[1], c[2]), out(c[0]+"_and"))
		b.node("And", in(c[0]+"_and", c[3]), out(c[0]+"_bool"))
		b.node("Cast", in(c[0]+"_bool"), out(c[0]+"_mask"), attrInt("to", int64(onnxpb.ElemFloat)))
	}
	b.node("Concat", in("red_mask", "green_mask", "blue_mask"), out("M"), attrInt("axis", 1))
}

// classBoxes adds each class's box: x1, y1, x2, y2 [batch, 3] and
// B [batch, 3, 4] as centre x, y, width, height.
func classBoxes(b *graphBuilder) {
	idx := make([]float32, gridSize)
	for i := range idx {
		idx[i] = float32(i)
	}
	b.initializer(constant("idx", dims(1, 1, gridSize), idx))
	b.initializer(constant("one", dims(), []float32{1}))
	b.initializer(constant("big", dims(), []float32{1000}))
	b.initializer(constant("half", dims(), []float32{0.5}))
	b.initializer(constant("axis2", dims(1), []int64{2}))
	b.node("ReduceMax", in("M"), out("cols"), attrInts("axes", 2), attrInt("keepdims", 0))
	b.node("ReduceMax", in("M"), out("rows"), attrInts("axes", 3), attrInt("keepdims", 0))
	b.node("Add", in("idx", "one"), out("idx1"))
	for _, a := range [][3]string{{"cols", "x1", "x2"}, {"rows", "y1", "y2"}} {
		set, lo, hi := a[0], a[1], a[2]
		b.node("Sub", in("one", set), out(set+"_off"))
		b.node("Mul", in(set+"_off", "big"), out(set+"_far"))
		b.node("Add", in("idx", set+"_far"), out(set+"_first"))
		b.node("ReduceMin", in(set+"_first"), out(lo), attrInts("axes", 2), attrInt("keepdims", 0))
		b.node("Mul", in("idx1", set), out(set+"_last"))
		b.node("ReduceMax", in(set+"_last"), out(hi), attrInts("axes", 2), attrInt("keepdims", 0))
	}
	b.node("Add", in("x1", "x2"), out("xs"))
	b.node("Mul", in("xs", "half"), out("cx"))
	b.node("Add", in("y1", "y2"), out("ys"))
	b.node("Mul", in("ys", "half"), out("cy"))
	b.node("Sub", in("x2", "x1"), out("bw"))
	b.node("Sub", in("y2", "y1"), out("bh"))
	for _, v := range []string{"cx", "cy", "bw", "bh", "x1", "y1", "x2", "y2"} {
		b.node("Unsqueeze", in(v, "axis2"), out(v+"_u"))
	}
	b.node("Concat", in("cx_u", "cy_u", "bw_u", "bh_u"), out("B"), attrInt("axis", 2))
}

// anchorScores adds the anchors' scores S [batch, 3, anchors], their best
// class one-hot H [batch, 3, anchors] and boxes A [batch, 4, anchors].
func anchorScores(b *graphBuilder) {
	w := make([]float32, gridAnchors)
	for i := range w {
		w[i] = 0.9 + 0.09*float32(i)/float32(gridAnchors)
	}
	b.initializer(constant("weight", dims(1, 1, gridAnchors), w))
	b.initializer(constant("cells", dims(3), []int64{0, gridClasses, -1}))
	b.initializer(constant("depth", dims(), []int64{gridClasses}))
	b.initializer(constant("onoff", dims(2), []float32{0, 1}))
	b.node("AveragePool", in("M"), out("cover"), attrInts("kernel_shape", gridStride, gridStride), attrInts("strides", gridStride, gridStride))
	b.node("Reshape", in("cover", "cells"), out("C"))
	b.node("Mul", in("C", "weight"), out("S"))
	b.node("ArgMax", in("C"), out("best"), attrInt("axis", 1), attrInt("keepdims", 0))
	b.node("OneHot", in("best", "depth", "onoff"), out("H"), attrInt("axis", 1))
	b.node("Transpose", in("B"), out("Bt"), attrInts("perm", 0, 2, 1))
	b.node("MatMul", in("Bt", "H"), out("A"))
}

// gridGraph is the grid detector of one layout and task.
func gridGraph(m gridModel) *onnxpb.Model {
	b := newGraph("grid_" + m.task + "_" + m.layout)
	b.input("images", tensorOf(onnxpb.ElemFloat, "batch", 3, gridSize, gridSize), "RGB, 0 to 1")
	colourMasks(b)
	classBoxes(b)
	anchorScores(b)
	switch {
	case m.task == "segment":
		gridSegment(b)
	case m.task == "pose":
		gridPose(b)
	case m.layout == "yolov5":
		gridYOLOv5(b)
	case m.layout == "end2end":
		gridEnd2End(b)
	case m.layout == "rtdetr":
		gridRTDETR(b)
	default:
		b.node("Concat", in("A", "S"), out("output0"), attrInt("axis", 1))
		b.output("output0", tensorOf(onnxpb.ElemFloat, "batch", 4+gridClasses, gridAnchors), "boxes: centre x, y, width, height, then the class scores, per anchor")
	}
	model := b.model()
	model.DocString = fmt.Sprintf("A grid detector of solid red, green and blue squares (%s, %s)", m.task, m.layout)
	meta := []onnxpb.StringEntry{
		{Key: "author", Value: "svc tests"},
		{Key: "description", Value: "svc's grid detector of coloured squares"},
		{Key: "task", Value: m.task},
		{Key: "stride", Value: fmt.Sprint(gridStride)},
		{Key: "batch", Value: "1"},
		{Key: "imgsz", Value: fmt.Sprintf("[%d, %d]", gridSize, gridSize)},
		{Key: "names", Value: gridNames},
	}
	switch {
	case m.layout == "end2end":
		meta = append(meta, onnxpb.StringEntry{Key: "end2end", Value: "True"})
	case m.layout == "rtdetr":
		meta[1].Value = "svc's grid detector of coloured squares, laid out as RT-DETR"
	case m.task == "pose":
		meta = append(meta, onnxpb.StringEntry{Key: "kpt_shape", Value: "[4, 3]"})
	}
	model.MetadataProps = meta
	return model
}

// gridYOLOv5: objectness (the anchor's weight) and the class coverages,
// [batch, anchors, 5+classes].
func gridYOLOv5(b *graphBuilder) {
	b.initializer(constant("zero", dims(), []float32{0}))
	b.node("ReduceMax", in("C"), out("cmax"), attrInts("axes", 1), attrInt("keepdims", 1))
	b.node("Mul", in("cmax", "zero"), out("czero"))
	b.node("Add", in("czero", "weight"), out("obj"))
	b.node("Concat", in("A", "obj", "C"), out("v5"), attrInt("axis", 1))
	b.node("Transpose", in("v5"), out("output0"), attrInts("perm", 0, 2, 1))
	b.output("output0", tensorOf(onnxpb.ElemFloat, "batch", gridAnchors, 5+gridClasses), "boxes: centre x, y, width, height, objectness, class scores, per anchor")
}

// classRows adds each class's best anchor score, [batch, 3] and
// [batch, 3, 1].
func classRows(b *graphBuilder) {
	b.node("ReduceMax", in("S"), out("top"), attrInts("axes", 2), attrInt("keepdims", 0))
	b.node("Unsqueeze", in("top", "axis2"), out("top_u"))
}

// gridEnd2End: one row per class, x1 y1 x2 y2 score class.
func gridEnd2End(b *graphBuilder) {
	classRows(b)
	b.initializer(constant("zero", dims(), []float32{0}))
	b.initializer(constant("classes", dims(1, gridClasses, 1), []float32{0, 1, 2}))
	b.node("Mul", in("top_u", "zero"), out("top_zero"))
	b.node("Add", in("top_zero", "classes"), out("cls"))
	b.node("Concat", in("x1_u", "y1_u", "x2_u", "y2_u", "top_u", "cls"), out("output0"), attrInt("axis", 2))
	b.output("output0", tensorOf(onnxpb.ElemFloat, "batch", gridClasses, 6), "boxes, suppressed: x1, y1, x2, y2, score, class")
}

// gridRTDETR: one query per class, its box normalised, its score on its
// class alone.
func gridRTDETR(b *graphBuilder) {
	classRows(b)
	b.initializer(constant("size", dims(), []float32{gridSize}))
	b.initializer(constant("eye", dims(1, gridClasses, gridClasses), []float32{1, 0, 0, 0, 1, 0, 0, 0, 1}))
	b.node("Div", in("B", "size"), out("Bn"))
	b.node("Mul", in("top_u", "eye"), out("qs"))
	b.node("Concat", in("Bn", "qs"), out("output0"), attrInt("axis", 2))
	b.output("output0", tensorOf(onnxpb.ElemFloat, "batch", gridClasses, 4+gridClasses), "queries: centre x, y, width, height normalised, class scores")
}

// gridSegment: the one-hot class as mask coefficients, the class masks
// at a quarter of the size as prototypes (logits of ±8).
func gridSegment(b *graphBuilder) {
	b.initializer(constant("two", dims(), []float32{2}))
	b.initializer(constant("eight", dims(), []float32{8}))
	b.node("Concat", in("A", "S", "H"), out("output0"), attrInt("axis", 1))
	b.node("AveragePool", in("M"), out("quarter"), attrInts("kernel_shape", 4, 4), attrInts("strides", 4, 4))
	b.node("Mul", in("quarter", "two"), out("q2"))
	b.node("Sub", in("q2", "one"), out("q1"))
	b.node("Mul", in("q1", "eight"), out("output1"))
	b.output("output0", tensorOf(onnxpb.ElemFloat, "batch", 4+2*gridClasses, gridAnchors), "boxes, class scores and mask coefficients, per anchor")
	b.output("output1", tensorOf(onnxpb.ElemFloat, "batch", gridClasses, gridSize/4, gridSize/4), "prototype masks")
}

// gridPose: the box's corners as keypoints (x, y, 1), clockwise from the
// top-left.
func gridPose(b *graphBuilder) {
	b.initializer(constant("zero", dims(), []float32{0}))
	b.node("Split", in("A"), out("acx", "acy", "aw", "ah"), attrInt("axis", 1))
	b.node("Mul", in("aw", "half"), out("hw"))
	b.node("Mul", in("ah", "half"), out("hh"))
	b.node("Sub", in("acx", "hw"), out("kx1"))
	b.node("Add", in("acx", "hw"), out("kx2"))
	b.node("Sub", in("acy", "hh"), out("ky1"))
	b.node("Add", in("acy", "hh"), out("ky2"))
	b.node("Mul", in("acx", "zero"), out("kz"))
	b.node("Add", in("kz", "one"), out("kv"))
	b.node("Concat", in("A", "S", "kx1", "ky1", "kv", "kx2", "ky1", "kv", "kx2", "ky2", "kv", "kx1", "ky2", "kv"), out("output0"), attrInt("axis", 1))
	b.output("output0", tensorOf(onnxpb.ElemFloat, "batch", 4+gridClasses+12, gridAnchors), "boxes, class scores and 4 keypoints (x, y, visibility), per anchor")
}
