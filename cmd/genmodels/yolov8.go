package main

import (
	"fmt"
	"math"

	"github.com/svc-dev/svc/core/onnxpb"
)

// yolov8n builds YOLOv8n's graph as Ultralytics exports it to ONNX at
// 640×640 (batch 1, 80 classes, batch norms folded into the convolutions),
// with random weights: the same layers, shapes and cost as the trained
// model, so that a benchmark can time a detection request honestly where
// no trained export can be fetched. Its output, [1, 84, 8400] (4 box
// coordinates in input pixels and 80 class scores per anchor), depends on
// the picture but means nothing. The weights are scaled to keep the
// activations near unit size (no overflow, no subnormal floats to slow
// the run). About 3.2 million weights, 12 MB: written by `-yolov8n`, never
// committed.
func yolov8n() *onnxpb.Model {
	y := &yolo{b: newGraph("yolov8n_random"), r: rng(8)}
	y.b.input("images", tensorOf(onnxpb.ElemFloat, 1, 3, 640, 640), "RGB picture, letterboxed to 640×640, values in [0, 1]")
	x := y.conv("images", 3, 16, 3, 2)           // 0: P1/2
	x = y.conv(x, 16, 32, 3, 2)                  // 1: P2/4
	x = y.c2f(x, 32, 32, 1, true)                // 2
	x = y.conv(x, 32, 64, 3, 2)                  // 3: P3/8
	p3 := y.c2f(x, 64, 64, 2, true)              // 4
	x = y.conv(p3, 64, 128, 3, 2)                // 5: P4/16
	p4 := y.c2f(x, 128, 128, 2, true)            // 6
	x = y.conv(p4, 128, 256, 3, 2)               // 7: P5/32
	x = y.c2f(x, 256, 256, 1, true)              // 8
	p5 := y.sppf(x, 256, 256)                    // 9
	x = y.concat(y.upsample(p5), p4)             // 10, 11
	h4 := y.c2f(x, 384, 128, 1, false)           // 12
	x = y.concat(y.upsample(h4), p3)             // 13, 14
	o3 := y.c2f(x, 192, 64, 1, false)            // 15: P3 out
	x = y.concat(y.conv(o3, 64, 64, 3, 2), h4)   // 16, 17
	o4 := y.c2f(x, 192, 128, 1, false)           // 18: P4 out
	x = y.concat(y.conv(o4, 128, 128, 3, 2), p5) // 19, 20
	o5 := y.c2f(x, 384, 256, 1, false)           // 21: P5 out
	y.detect([]string{o3, o4, o5}, []int64{64, 128, 256})
	m := y.b.model()
	m.DocString = "YOLOv8n's layers and cost with random weights (svc benchmarks: go run ./cmd/genmodels -yolov8n PATH)"
	m.MetadataProps = []onnxpb.StringEntry{
		{Key: "task", Value: "detect"},
		{Key: "imgsz", Value: "[640, 640]"},
		{Key: "stride", Value: "32"},
	}
	return m
}

// yolo builds YOLOv8's blocks, naming each value by a counter.
type yolo struct {
	b *graphBuilder
	r rng
	n int
}

func (y *yolo) name(kind string) string {
	y.n++
	return fmt.Sprintf("%s_%d", kind, y.n)
}

// weights adds a convolution's weights and bias, scaled by the fan-in.
func (y *yolo) weights(cout, cin, k int64) (w, bias string) {
	w, bias = y.name("w"), y.name("b")
	spread := float32(math.Sqrt(3.0 / float64(cin*k*k)))
	y.b.initializer(constant(w, dims(cout, cin, k, k), y.r.uniform(int(cout*cin*k*k), 0, spread)))
	y.b.initializer(constant(bias, dims(cout), y.r.uniform(int(cout), 0, 0.05)))
	return w, bias
}

// conv is Ultralytics' Conv as exported: a convolution (its batch norm
// folded in) and SiLU, x·sigmoid(x).
func (y *yolo) conv(x string, cin, cout, k, stride int64) string {
	c := y.plainConv(x, cin, cout, k, stride)
	s, res := y.name("sigmoid"), y.name("silu")
	y.b.node("Sigmoid", in(c), out(s))
	y.b.node("Mul", in(c, s), out(res))
	return res
}

// plainConv is a convolution with bias and no activation.
func (y *yolo) plainConv(x string, cin, cout, k, stride int64) string {
	w, bias := y.weights(cout, cin, k)
	res := y.name("conv")
	p := k / 2
	y.b.node("Conv", in(x, w, bias), out(res), attrInts("kernel_shape", k, k),
		attrInts("strides", stride, stride), attrInts("pads", p, p, p, p))
	return res
}

// c2f is YOLOv8's C2f: a 1×1 convolution split in two halves, n
// bottlenecks on the second (each two 3×3 convolutions, with a shortcut
// when asked), every half and bottleneck concatenated and mixed by a last
// 1×1 convolution.
func (y *yolo) c2f(x string, cin, cout, n int64, shortcut bool) string {
	c := cout / 2
	x = y.conv(x, cin, 2*c, 1, 1)
	a, b := y.name("split"), y.name("split")
	split := y.name("splits")
	y.b.initializer(constant(split, dims(2), []int64{c, c}))
	y.b.node("Split", in(x, split), out(a, b), attrInt("axis", 1))
	parts := []string{a, b}
	for range n {
		h := y.conv(y.conv(b, c, c, 3, 1), c, c, 3, 1)
		if shortcut {
			sum := y.name("add")
			y.b.node("Add", in(b, h), out(sum))
			h = sum
		}
		parts = append(parts, h)
		b = h
	}
	return y.conv(y.concat(parts...), (2+n)*c, cout, 1, 1)
}

// sppf is spatial pyramid pooling, fast: a 1×1 convolution, three 5×5
// max pools in a row, all four concatenated and mixed.
func (y *yolo) sppf(x string, cin, cout int64) string {
	c := cin / 2
	x = y.conv(x, cin, c, 1, 1)
	parts := []string{x}
	for range 3 {
		p := y.name("pool")
		y.b.node("MaxPool", in(parts[len(parts)-1]), out(p), attrInts("kernel_shape", 5, 5),
			attrInts("strides", 1, 1), attrInts("pads", 2, 2, 2, 2))
		parts = append(parts, p)
	}
	return y.conv(y.concat(parts...), 4*c, cout, 1, 1)
}

func (y *yolo) upsample(x string) string {
	scales, res := y.name("scales"), y.name("up")
	y.b.initializer(constant(scales, dims(4), []float32{1, 1, 2, 2}))
	y.b.node("Resize", in(x, "", scales), out(res), attrString("mode", "nearest"))
	return res
}

func (y *yolo) concat(xs ...string) string {
	res := y.name("cat")
	y.b.node("Concat", xs, out(res), attrInt("axis", 1))
	return res
}

// detect is YOLOv8's Detect head and its export's decoding: per level,
// a box branch (two 3×3 convolutions, 64 = 4 sides × 16 bins) and a class
// branch (two 3×3 convolutions, 80 classes); the levels' anchors
// flattened and joined (80² + 40² + 20² = 8400); the distribution of each
// side turned into a distance (softmax over its 16 bins, their expected
// value), the distances into a centre box around the anchor, times the
// level's stride; the classes through a sigmoid.
func (y *yolo) detect(levels []string, ch []int64) {
	var flat []string
	for i, x := range levels {
		box := y.plainConv(y.conv(y.conv(x, ch[i], 64, 3, 1), 64, 64, 3, 1), 64, 64, 1, 1)
		cls := y.plainConv(y.conv(y.conv(x, ch[i], 80, 3, 1), 80, 80, 3, 1), 80, 80, 1, 1)
		shape, f := y.name("shape"), y.name("flat")
		y.b.initializer(constant(shape, dims(3), []int64{1, 144, -1}))
		y.b.node("Reshape", in(y.concat(box, cls), shape), out(f))
		flat = append(flat, f)
	}
	all := y.name("cat")
	y.b.node("Concat", flat, out(all), attrInt("axis", 2))
	box, cls, split := y.name("box"), y.name("cls"), y.name("splits")
	y.b.initializer(constant(split, dims(2), []int64{64, 80}))
	y.b.node("Split", in(all, split), out(box, cls), attrInt("axis", 1))
	dist := y.dfl(box)
	xywh := y.boxes(dist)
	scores := y.name("scores")
	y.b.node("Sigmoid", in(cls), out(scores))
	y.b.node("Concat", in(xywh, scores), out("output0"), attrInt("axis", 1))
	y.b.output("output0", tensorOf(onnxpb.ElemFloat, 1, 84, 8400), "per anchor: box centre x, y, width, height (input pixels), then 80 class scores")
}

// dfl turns [1, 64, 8400] bin logits into [1, 4, 8400] distances.
func (y *yolo) dfl(box string) string {
	s1, r1 := y.name("shape"), y.name("bins")
	y.b.initializer(constant(s1, dims(4), []int64{1, 4, 16, 8400}))
	y.b.node("Reshape", in(box, s1), out(r1))
	t, sm := y.name("t"), y.name("softmax")
	y.b.node("Transpose", in(r1), out(t), attrInts("perm", 0, 2, 1, 3))
	y.b.node("Softmax", in(t), out(sm), attrInt("axis", 1))
	w, c := y.name("w"), y.name("expect")
	bins := make([]float32, 16)
	for i := range bins {
		bins[i] = float32(i)
	}
	y.b.initializer(constant(w, dims(1, 16, 1, 1), bins))
	y.b.node("Conv", in(sm, w), out(c), attrInts("kernel_shape", 1, 1))
	s2, d := y.name("shape"), y.name("dist")
	y.b.initializer(constant(s2, dims(3), []int64{1, 4, 8400}))
	y.b.node("Reshape", in(c, s2), out(d))
	return d
}

// boxes turns distances from each anchor ([1, 4, 8400]: left, top, right,
// bottom, in strides) into centre boxes in input pixels.
func (y *yolo) boxes(dist string) string {
	anchors := make([]float32, 0, 2*8400)
	strides := make([]float32, 0, 8400)
	var xs, ys []float32
	for _, s := range []int{8, 16, 32} {
		n := 640 / s
		for j := range n {
			for i := range n {
				xs, ys = append(xs, float32(i)+0.5), append(ys, float32(j)+0.5)
				strides = append(strides, float32(s))
			}
		}
	}
	anchors = append(append(anchors, xs...), ys...)
	a, st := y.name("anchors"), y.name("strides")
	y.b.initializer(constant(a, dims(1, 2, 8400), anchors))
	y.b.initializer(constant(st, dims(1, 1, 8400), strides))
	lt, rb, split := y.name("lt"), y.name("rb"), y.name("splits")
	y.b.initializer(constant(split, dims(2), []int64{2, 2}))
	y.b.node("Split", in(dist, split), out(lt, rb), attrInt("axis", 1))
	x1y1, x2y2 := y.name("x1y1"), y.name("x2y2")
	y.b.node("Sub", in(a, lt), out(x1y1))
	y.b.node("Add", in(a, rb), out(x2y2))
	sum, half, centre, wh := y.name("sum"), y.name("half"), y.name("centre"), y.name("wh")
	y.b.node("Add", in(x1y1, x2y2), out(sum))
	y.b.initializer(constant(half, dims(1), []float32{0.5}))
	y.b.node("Mul", in(sum, half), out(centre))
	y.b.node("Sub", in(x2y2, x1y1), out(wh))
	cw, px := y.name("cw"), y.name("px")
	y.b.node("Concat", in(centre, wh), out(cw), attrInt("axis", 1))
	y.b.node("Mul", in(cw, st), out(px))
	return px
}
