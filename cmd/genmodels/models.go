package main

import (
	"fmt"
	"math"
	"strconv"

	"github.com/svc-dev/svc/core/onnxpb"
)

// Classifier weights: the scores are driven by petal length x[2] and
// petal width x[3]:
//
//	score0 = 2.5 - x2
//	score1 = x2 - 2.5
//	score2 = 3*x3 - 3.5
var (
	classifierW = []float32{
		0, 0, 0, // sepal length
		0, 0, 0, // sepal width
		-1, 1, 0, // petal length
		0, 0, 3, // petal width
	}
	classifierB = []float32{2.5, -2.5, -3.5}
)

// classifier builds the Iris-style linear classifier. With external set,
// W and b are stored in externalFile and their bytes are returned.
func classifier(graphName string, externalFile string) (*onnxpb.Model, []byte) {
	b := newGraph(graphName)
	b.input("input", tensorOf(onnxpb.ElemFloat, "batch", 4),
		"sepal length, sepal width, petal length, petal width (cm)")
	w := constant("W", dims(4, 3), classifierW)
	bias := constant("B", dims(3), classifierB)
	var ext []byte
	if externalFile != "" {
		for _, t := range []*onnxpb.TensorProto{w, bias} {
			t.DataLocation = onnxpb.LocationExternal
			t.ExternalData = []onnxpb.StringEntry{
				{Key: "location", Value: externalFile},
				{Key: "offset", Value: strconv.Itoa(len(ext))},
				{Key: "length", Value: strconv.Itoa(len(t.RawData))},
			}
			ext = append(ext, t.RawData...)
			t.RawData = nil
		}
	}
	b.initializer(w)
	b.initializer(bias)
	b.node("MatMul", in("input", "W"), out("scores_linear"))
	b.node("Add", in("scores_linear", "B"), out("logits"))
	b.node("Softmax", in("logits"), out("probabilities"), attrInt("axis", 1))
	b.node("ArgMax", in("probabilities"), out("label"), attrInt("axis", 1), attrInt("keepdims", 0))
	b.output("probabilities", tensorOf(onnxpb.ElemFloat, "batch", 3),
		"class probabilities (setosa, versicolor, virginica)")
	b.output("label", tensorOf(onnxpb.ElemInt64, "batch"), "index of the most probable class")

	m := b.model()
	m.ModelVersion = 3
	m.DocString = "Iris-style linear classifier"
	m.MetadataProps = []onnxpb.StringEntry{
		{Key: "author", Value: "svc tests"},
		{Key: "labels", Value: "setosa,versicolor,virginica"},
	}
	return m, ext
}

func multiInput() *onnxpb.Model {
	b := newGraph("multi_input")
	b.input("features", tensorOf(onnxpb.ElemFloat, "batch", 3), "")
	b.input("ids", tensorOf(onnxpb.ElemInt64, "batch", 2), "")
	b.input("mask", tensorOf(onnxpb.ElemBool, "batch", 2), "")
	b.input("text", tensorOf(onnxpb.ElemString, "batch"), "")
	b.initializer(constant("two", nil, []float32{2}))
	b.initializer(constant("sum_axes", dims(1), []int64{1}))
	b.node("Mul", in("features", "two"), out("weighted"))
	b.node("ReduceSum", in("ids", "sum_axes"), out("id_sum"), attrInt("keepdims", 0))
	b.node("Not", in("mask"), out("mask_not"))
	// ONNX Runtime defaults the locale to en_US.UTF-8 on Linux and fails to
	// load the model where that locale is not installed (as on Debian
	// without the locales package); C.UTF-8 is built into glibc and still
	// upper-cases non-ASCII letters.
	b.node("StringNormalizer", in("text"), out("text_upper"),
		attrString("case_change_action", "UPPER"), attrString("locale", "C.UTF-8"))
	b.output("weighted", tensorOf(onnxpb.ElemFloat, "batch", 3), "features * 2")
	b.output("id_sum", tensorOf(onnxpb.ElemInt64, "batch"), "sum of ids per row")
	b.output("mask_not", tensorOf(onnxpb.ElemBool, "batch", 2), "logical not of mask")
	b.output("text_upper", tensorOf(onnxpb.ElemString, "batch"), "text in upper case")
	return b.model()
}

func scalar() *onnxpb.Model {
	b := newGraph("scalar")
	b.input("x", tensorOf(onnxpb.ElemFloat), "a scalar")
	b.input("scale", tensorOf(onnxpb.ElemFloat, 1), "")
	b.input("bias", tensorOf(onnxpb.ElemFloat, 1), "optional, defaults to 0.5")
	b.initializer(constant("bias", dims(1), []float32{0.5}))
	b.node("Mul", in("x", "scale"), out("x_scaled"))
	b.node("Add", in("x_scaled", "bias"), out("y"))
	b.output("y", tensorOf(onnxpb.ElemFloat, 1), "x * scale + bias")
	return b.model()
}

func float16Model() *onnxpb.Model {
	b := newGraph("float16")
	b.input("x", tensorOf(onnxpb.ElemFloat16, "batch", 4), "")
	b.initializer(constant("two", nil, []onnxpb.Float16{0x4000})) // 2.0
	b.node("Mul", in("x", "two"), out("y"))
	b.node("Cast", in("y"), out("y32"), attrInt("to", int64(onnxpb.ElemFloat)))
	b.output("y", tensorOf(onnxpb.ElemFloat16, "batch", 4), "x * 2")
	b.output("y32", tensorOf(onnxpb.ElemFloat, "batch", 4), "y as float32")
	return b.model()
}

func fixedShape() *onnxpb.Model {
	b := newGraph("fixed_shape")
	b.input("image", tensorOf(onnxpb.ElemFloat, 1, 3, 4, 4), "")
	b.node("ReduceMean", in("image"), out("mean"), attrInts("axes", 2, 3), attrInt("keepdims", 0))
	b.output("mean", tensorOf(onnxpb.ElemFloat, 1, 3), "per-channel mean")
	return b.model()
}

func zipMap() *onnxpb.Model {
	b := newGraph("zipmap")
	b.input("input", tensorOf(onnxpb.ElemFloat, "batch", 3), "")
	b.node("Softmax", in("input"), out("softmax"), attrInt("axis", 1))
	b.node("ArgMax", in("softmax"), out("label"), attrInt("axis", 1), attrInt("keepdims", 0))
	b.mlNode("ZipMap", in("softmax"), out("probabilities"), attrStrings("classlabels_strings", "cat", "dog", "bird"))
	b.mlNode("ZipMap", in("softmax"), out("scores_by_id"), attrInts("classlabels_int64s", 10, 20, 30))
	b.output("label", tensorOf(onnxpb.ElemInt64, "batch"), "")
	b.output("probabilities", seqOf(mapOf(onnxpb.ElemString, tensorAnyShape(onnxpb.ElemFloat))), "")
	b.output("scores_by_id", seqOf(mapOf(onnxpb.ElemInt64, tensorAnyShape(onnxpb.ElemFloat))), "")
	return b.model()
}

// intMod divides integers: an integer division by zero is undefined in
// ONNX, and some ONNX Runtime builds raise SIGFPE on it, so zeros are no
// warm-up input here.
func intMod() *onnxpb.Model {
	b := newGraph("int_mod")
	b.input("a", tensorOf(onnxpb.ElemInt64, "batch"), "dividend")
	b.input("b", tensorOf(onnxpb.ElemInt64, "batch"), "divisor, not 0")
	b.node("Div", in("a", "b"), out("quotient"))
	b.node("Mod", in("a", "b"), out("remainder"))
	b.output("quotient", tensorOf(onnxpb.ElemInt64, "batch"), "a / b, truncated")
	b.output("remainder", tensorOf(onnxpb.ElemInt64, "batch"), "a mod b, the sign of b")
	return b.model()
}

// reloadVersion builds version v of the hot-reload test model: the same
// input and output, answers that tell the versions apart (version 1 adds
// 100, version 2 multiplies by -3), model_version v.
func reloadVersion(v int64) *onnxpb.Model {
	b := newGraph("reload")
	b.input("x", tensorOf(onnxpb.ElemFloat, "batch", 2), "")
	if v == 1 {
		b.initializer(constant("k", nil, []float32{100}))
		b.node("Add", in("x", "k"), out("y"))
		b.output("y", tensorOf(onnxpb.ElemFloat, "batch", 2), "x + 100 (version 1)")
	} else {
		b.initializer(constant("k", nil, []float32{-3}))
		b.node("Mul", in("x", "k"), out("y"))
		b.output("y", tensorOf(onnxpb.ElemFloat, "batch", 2), "x * -3 (version 2)")
	}
	m := b.model()
	m.ModelVersion = v
	return m
}

func failing() *onnxpb.Model {
	b := newGraph("failing")
	b.input("x", tensorOf(onnxpb.ElemFloat, "n"), "must have exactly 6 elements")
	b.initializer(constant("shape", dims(2), []int64{2, 3}))
	b.node("Reshape", in("x", "shape"), out("y"))
	b.output("y", tensorOf(onnxpb.ElemFloat, 2, 3), "")
	return b.model()
}

func allTypes() *onnxpb.Model {
	b := newGraph("alltypes")
	types := []struct {
		name string
		elem int32
	}{
		{"f64", onnxpb.ElemDouble},
		{"i8", onnxpb.ElemInt8},
		{"i16", onnxpb.ElemInt16},
		{"i32", onnxpb.ElemInt32},
		{"u8", onnxpb.ElemUint8},
		{"u16", onnxpb.ElemUint16},
		{"u32", onnxpb.ElemUint32},
		{"u64", onnxpb.ElemUint64},
	}
	for _, t := range types {
		b.input(t.name, tensorOf(t.elem, "n_"+t.name), "")
	}
	for _, t := range types {
		b.node("Identity", in(t.name), out(t.name+"_out"))
		b.output(t.name+"_out", tensorOf(t.elem, "n_"+t.name), "")
	}
	b.node("Log", in("f64"), out("f64_log"))
	b.output("f64_log", tensorOf(onnxpb.ElemDouble, "n_f64"), "natural log of f64")
	return b.model()
}

const (
	slowWidth  = 256
	slowLayers = 1500
)

// slow builds a chain of slowLayers MatMul+Tanh layers sharing one weight
// matrix, to make inference take a while.
func slow() *onnxpb.Model {
	b := newGraph("slow")
	b.input("x", tensorOf(onnxpb.ElemFloat, "batch", slowWidth), "")
	// Deterministic weights k/256 with k in [-32, 32] from a fixed-seed
	// linear congruential generator: exactly representable, so the file
	// is the same on every platform.
	w := make([]float32, slowWidth*slowWidth)
	state := uint64(0x5eed)
	for i := range w {
		state = state*6364136223846793005 + 1442695040888963407
		k := int64(state>>33)%65 - 32
		w[i] = float32(k) / 256
	}
	b.initializer(constant("W", dims(slowWidth, slowWidth), w))
	prev := "x"
	for i := range slowLayers {
		mm := fmt.Sprintf("matmul_%d", i)
		act := fmt.Sprintf("tanh_%d", i)
		if i == slowLayers-1 {
			act = "y"
		}
		b.node("MatMul", in(prev, "W"), out(mm))
		b.node("Tanh", in(mm), out(act))
		prev = act
	}
	b.output("y", tensorOf(onnxpb.ElemFloat, "batch", slowWidth), "")
	return b.model()
}

// file is one generated output, relative to the output directory.
type file struct {
	path string
	data []byte
}

// testModels returns every file written under -out, in a fixed order.
// runningSum is a stateful model: it adds each step's x to a running sum
// that it takes in state and gives back in stateN, the form svc keeps
// between the steps of a sequence (docs/sequences.md).
func runningSum() *onnxpb.Model {
	b := newGraph("running_sum")
	b.input("x", tensorOf(onnxpb.ElemFloat, "batch", 1), "this step's value")
	b.input("state", tensorOf(onnxpb.ElemFloat, "batch", 1), "the sum so far")
	b.node("Add", in("x", "state"), out("sum"))
	b.node("Identity", in("sum"), out("stateN"))
	b.output("sum", tensorOf(onnxpb.ElemFloat, "batch", 1), "the sum with this step's x")
	b.output("stateN", tensorOf(onnxpb.ElemFloat, "batch", 1), "the next step's state")
	return b.model()
}

// timeMajorLSTM is a recurrent model in the ONNX LSTM operator's own
// layout, time first: x [time, batch, 3] and the states h and c [1, batch,
// 4] give y [time, 1, batch, 4], hn and cn. Its batch dimension is named
// "batch" on every axis that carries it, which is how svc joins the steps
// of several sequences on axis 1 of x (docs/sequences.md).
func timeMajorLSTM() *onnxpb.Model {
	const feat, hidden = 3, 4
	weights := func(name string, scale float64, shape ...int64) *onnxpb.TensorProto {
		v := make([]float32, shape[0]*shape[1]*shape[2])
		for i := range v {
			v[i] = float32(scale * math.Sin(float64(i)*0.37+float64(len(name))))
		}
		return constant(name, shape, v)
	}
	b := newGraph("lstm")
	b.input("x", tensorOf(onnxpb.ElemFloat, "time", "batch", feat), "this step's frames, time first")
	b.input("h", tensorOf(onnxpb.ElemFloat, 1, "batch", hidden), "hidden state")
	b.input("c", tensorOf(onnxpb.ElemFloat, 1, "batch", hidden), "cell state")
	w, r, bias := weights("W", 0.6, 1, 4*hidden, feat), weights("R", 0.4, 1, 4*hidden, hidden), weights("Bias", 0.1, 1, 1, 8*hidden)
	bias.Dims = dims(1, 8*hidden)
	b.initializer(w)
	b.initializer(r)
	b.initializer(bias)
	b.node("LSTM", in("x", "W", "R", "Bias", "", "h", "c"), out("y", "hn", "cn"), attrInt("hidden_size", hidden))
	b.output("y", tensorOf(onnxpb.ElemFloat, "time", 1, "batch", hidden), "every frame's hidden state")
	b.output("hn", tensorOf(onnxpb.ElemFloat, 1, "batch", hidden), "the next step's hidden state")
	b.output("cn", tensorOf(onnxpb.ElemFloat, 1, "batch", hidden), "the next step's cell state")
	return b.model()
}

// tally is a stateful model with inputs of two types: each step adds the
// sum of its int32 counts and of its float32 grid (optional, [batch, h, w],
// two dynamic axes besides the batch) to the total carried in state. The
// WebSocket stream's tests send it int32 binary messages, shaped grids and
// JSON steps (docs/sequences.md).
func tally() *onnxpb.Model {
	b := newGraph("tally")
	b.input("counts", tensorOf(onnxpb.ElemInt32, "batch", "n"), "this step's counts")
	b.input("grid", tensorOf(onnxpb.ElemFloat, "batch", "h", "w"), "optional, defaults to one 0")
	b.input("state", tensorOf(onnxpb.ElemFloat, "batch", 1), "the total so far")
	b.initializer(constant("grid", dims(1, 1, 1), []float32{0}))
	b.initializer(constant("axis1", dims(1), []int64{1}))
	b.initializer(constant("axis2", dims(1), []int64{2}))
	b.node("Cast", in("counts"), out("counts_f"), attrInt("to", int64(onnxpb.ElemFloat)))
	b.node("ReduceSum", in("counts_f", "axis1"), out("counts_sum"))
	b.node("ReduceSum", in("grid", "axis2"), out("grid_rows"), attrInt("keepdims", 0))
	b.node("ReduceSum", in("grid_rows", "axis1"), out("grid_sum"))
	b.node("Add", in("state", "counts_sum"), out("partial"))
	b.node("Add", in("partial", "grid_sum"), out("total"))
	b.node("Identity", in("total"), out("stateN"))
	b.output("total", tensorOf(onnxpb.ElemFloat, "batch", 1), "the total with this step's counts and grid")
	b.output("stateN", tensorOf(onnxpb.ElemFloat, "batch", 1), "the next step's state")
	return b.model()
}

func testModels() ([]file, error) {
	var files []file
	add := func(path string, m *onnxpb.Model) error {
		data, err := onnxpb.Marshal(m)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		files = append(files, file{path, data})
		return nil
	}
	cls, _ := classifier("classifier", "")
	ext, extData := classifier("classifier", "model.onnx.data")
	models := []struct {
		path string
		m    *onnxpb.Model
	}{
		{"classifier.onnx", cls},
		{"multi_input.onnx", multiInput()},
		{"scalar.onnx", scalar()},
		{"float16.onnx", float16Model()},
		{"fixed_shape.onnx", fixedShape()},
		{"zipmap.onnx", zipMap()},
		{"failing.onnx", failing()},
		{"alltypes.onnx", allTypes()},
		{"external_data/model.onnx", ext},
		{"hf_layout/onnx/model.onnx", cls},
		{"slow.onnx", slow()},
		{"scalars.onnx", scalars()},
		{"scalars_special.onnx", scalarsSpecial()},
		{"unknown_rank.onnx", unknownRank()},
		{"zero_dims.onnx", zeroDims()},
		{"vectors.onnx", vectors()},
		{"misnamed_dims.onnx", misnamedDims()},
		{"int_mod.onnx", intMod()},
		{"tiny_bert.onnx", tinyBERT()},
		{"tiny_bert_classifier/model.onnx", tinyBERTClassifier()},
		{"tiny_bert_ner/model.onnx", tinyBERTTokens()},
		{"tiny_bert_reranker/model.onnx", tinyBERTReranker()},
		{"reload_v1.onnx", reloadVersion(1)},
		{"reload_v2.onnx", reloadVersion(2)},
		{"running_sum.onnx", runningSum()},
		{"lstm_time_major.onnx", timeMajorLSTM()},
		{"tally.onnx", tally()},
	}
	for _, g := range gridModels {
		models = append(models, struct {
			path string
			m    *onnxpb.Model
		}{g.file, gridGraph(g)})
	}
	for _, x := range models {
		if err := add(x.path, x.m); err != nil {
			return nil, err
		}
	}
	files = append(files, file{"external_data/model.onnx.data", extData},
		file{"tiny_bert_classifier/config.json", hfConfig("BertForSequenceClassification", "single_label_classification", sentimentLabels)},
		file{"tiny_bert_ner/config.json", hfConfig("BertForTokenClassification", "", nerLabels)},
		file{"tiny_bert_reranker/config.json", hfConfig("BertForSequenceClassification", "", []string{"LABEL_0"})})
	return files, nil
}

// demoModel returns the bytes of examples/demo/model.onnx.
func demoModel() ([]byte, error) {
	m, _ := classifier("iris-demo", "")
	return onnxpb.Marshal(m)
}
