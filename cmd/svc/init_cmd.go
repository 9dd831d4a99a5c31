package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/onnxpb"
)

func initCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "write a commented starter configuration file",
		ArgsUsage: "[FILE]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "overwrite an existing file"},
			&cli.StringFlag{Name: "model", Usage: "an ONNX model (a .onnx file or a directory holding model.onnx) to add under models:, with its image inputs and decoded outputs when svc recognises it"},
			&cli.StringFlag{Name: "name", Usage: "the model's name under models: (default: from the model's path)"},
		},
		Action: func(_ context.Context, cmd *cli.Command) error {
			path := config.DefaultFile
			if cmd.Args().Len() > 1 {
				return usageErr("init takes at most one FILE")
			}
			if cmd.Args().Len() == 1 {
				path = cmd.Args().First()
			}
			entry, err := initEntry(path, cmd.String("model"), cmd.String("name"))
			if err != nil {
				return err
			}
			if err := writeNew(path, config.StarterWith(entry), cmd.Bool("force")); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %s\n", path)
			return nil
		},
	}
}

// writeNew writes text to path, which must not exist unless force.
func writeNew(path, text string, force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s already exists; pass --force to overwrite it", path)
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := io.WriteString(f, text); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// initEntry is the models: entry of 'svc init --model MODEL' for the
// configuration file at cfgPath, or "" without a model.
func initEntry(cfgPath, model, name string) (string, error) {
	if model == "" {
		if name != "" {
			return "", usageErr("--name names the model of --model; give --model too")
		}
		return "", nil
	}
	file := model
	if st, err := os.Stat(model); err != nil {
		return "", fmt.Errorf("--model: %w", err)
	} else if st.IsDir() {
		file = filepath.Join(model, "model.onnx")
	}
	info, err := onnxInfo(file)
	if err != nil {
		return "", fmt.Errorf("--model %s: %w", model, err)
	}
	if name == "" {
		name = entryName(model)
	} else if err := checkServedName(name); err != nil {
		return "", usageErr("--name %s", err)
	}
	entry := modelEntry(name, relativeTo(cfgPath, model), info)
	if recognise(info) == nil {
		text, err := textEntry(cfgPath, file, info)
		if err != nil {
			return "", fmt.Errorf("--model %s: %w", model, err)
		}
		entry += text
	}
	return entry, nil
}

// textEntry is the text: section of the entry of a model that takes token
// ids and has a tokenizer.json beside it (or in the folder above, as a
// Hub repository's onnx/model.onnx has): live when svc reproduces the
// tokenizer, with the task the folder says (config.json's architectures,
// sentence-transformers files) and the other keys commented at their
// defaults; a comment saying why not otherwise; "" for a model without
// token ids or tokenizer. A config.json svc cannot read, or a tokenizer
// it cannot reproduce beside a model it would serve text, is an error:
// svc serve would refuse the model.
func textEntry(cfgPath, modelFile string, info core.ModelInfo) (string, error) {
	f := codec.InspectText(modelFile, info)
	if f.ConfigErr != nil {
		return "", fmt.Errorf("%w (svc serve refuses the model until it is mended or removed)", f.ConfigErr)
	}
	if f.Tokenizer == "" {
		return "", nil
	}
	if f.TokenizerErr != nil && f.Recognised {
		return "", fmt.Errorf("text.tokenizer: %w", f.TokenizerErr)
	}
	tok := yamlString(relativeTo(cfgPath, f.Tokenizer))
	var b strings.Builder
	if f.TokenizerErr != nil {
		fmt.Fprintf(&b, "    # %s is beside the model, but svc cannot serve text with it:\n", tok)
		for line := range strings.SplitSeq(f.TokenizerErr.Error(), "\n") {
			fmt.Fprintf(&b, "    #   %s\n", line)
		}
		b.WriteString("    # /predict takes the model's token ids.\n")
		return b.String(), nil
	}
	answer := map[string]string{
		config.TaskEmbedding:      "one embedding per text",
		config.TaskClassification: "labels and scores per text",
		config.TaskTokens:         "the entities in each text",
	}[f.Task]
	b.WriteString("    # svc init found the model's tokenizer: /predict takes {\"text\": ...} (and \"text_pair\")\n")
	fmt.Fprintf(&b, "    # and answers %s; the token ids still work. Delete text: to take the ids alone.\n", answer)
	fmt.Fprintf(&b, "    # The task: %s.\n", f.TaskFrom)
	if !f.Served {
		b.WriteString("    # Check the task: the model's outputs do not say it (embedding pools its first output).\n")
	}
	fmt.Fprintf(&b, "    text:\n      tokenizer: %s\n      task: %s   # embedding, classification or token-classification\n", tok, f.Task)
	b.WriteString("      # max_length: 128     # tokens per text (default: the tokenizer's truncation, else the model's positions)\n")
	b.WriteString("      # truncation: false   # refuse a longer text with a 400 instead of cutting it\n")
	switch f.Task {
	case config.TaskEmbedding:
		b.WriteString("      # pooling: mean       # mean, cls or max (default: 1_Pooling/config.json, else mean)\n")
		b.WriteString("      # normalize: true     # unit-length vectors (default: a Normalize module in modules.json)\n")
	case config.TaskClassification:
		b.WriteString("      # top_k: 1            # labels per text, best first (default: every label)\n")
		b.WriteString("      # activation: sigmoid # softmax, sigmoid or none (default: sigmoid for multi_label_classification or one label, else softmax)\n")
		b.WriteString("      # labels: [negative, positive]   # default: config.json's id2label\n")
	case config.TaskTokens:
		b.WriteString("      # labels: [O, B-PER, I-PER]   # default: config.json's id2label\n")
	}
	return b.String(), nil
}

// onnxInfo reads a model's inputs, outputs and metadata from its file (no
// runtime needed): the inputs a request must or may send (an initializer
// listed as an input is an optional one from IR version 4 on).
func onnxInfo(file string) (core.ModelInfo, error) {
	m, err := onnxpb.ReadFile(file)
	if err != nil {
		return core.ModelInfo{}, err
	}
	if m.Graph == nil {
		return core.ModelInfo{}, errors.New("the file holds no graph")
	}
	info := core.ModelInfo{Metadata: m.Metadata()}
	inits := m.InitializerNames()
	for _, vi := range m.Graph.Inputs {
		if inits[vi.Name] && m.IRVersion < 4 {
			continue
		}
		typ, shape := valueType(vi.Type)
		info.Inputs = append(info.Inputs, core.InputSpec{Name: vi.Name, Type: typ, Shape: shape, Required: !inits[vi.Name], Kind: core.KindTensor})
	}
	for _, vi := range m.Graph.Outputs {
		typ, shape := valueType(vi.Type)
		info.Outputs = append(info.Outputs, core.OutputSpec{Name: vi.Name, Type: typ, Shape: shape, Kind: core.KindTensor})
	}
	return info, nil
}

// valueType is a tensor type's element type and shape (-1 for a dynamic
// dimension, nil for an unknown rank); "" for a value that is no tensor.
func valueType(t *onnxpb.TypeProto) (string, []int64) {
	if t == nil || t.Tensor == nil {
		return "", nil
	}
	typ := onnxpb.ElemTypeName(t.Tensor.ElemType)
	if t.Tensor.Shape == nil {
		return typ, nil
	}
	shape := make([]int64, len(t.Tensor.Shape))
	for i, d := range t.Tensor.Shape {
		shape[i] = -1
		if d.IsFixed() {
			shape[i] = d.Value
		}
	}
	return typ, shape
}

// entryName derives a models: key from a model's path: its directory's
// name for model.onnx, else the file's name without .onnx, with what a
// served name cannot hold replaced by '-'.
func entryName(model string) string {
	base := filepath.Base(filepath.Clean(model))
	if strings.EqualFold(base, "model.onnx") {
		base = filepath.Base(filepath.Dir(filepath.Clean(model)))
	}
	base = strings.TrimSuffix(base, filepath.Ext(base))
	base = strings.Trim(regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(base, "-"), "-._")
	if base == "" {
		return "model"
	}
	return base
}

// relativeTo is model's path as svc.yml at cfgPath names it: relative to
// the file's directory where it can be, else absolute.
func relativeTo(cfgPath, model string) string {
	absCfg, err1 := filepath.Abs(filepath.Dir(cfgPath))
	absModel, err2 := filepath.Abs(model)
	if err1 != nil || err2 != nil {
		return model
	}
	rel, err := filepath.Rel(absCfg, absModel)
	if err != nil || strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(absModel)
	}
	return filepath.ToSlash(rel)
}

// recognition is a model 'svc init' knows how to feed pictures and read
// meaning from.
type recognition struct {
	// Preset is the image preset of Input (core/codec/image), which names
	// the kind of model: paddleocr-cls, paddleocr-rec, imagenet or yolo.
	Preset string
	Input  string
	// Output is the output given a meaning ("" for a yolo model whose
	// outputs stay raw: it does not say its task).
	Output string
	// Classes is Output's last dimension (-1: dynamic).
	Classes int64
	// Task is a yolo model's detect, segment or pose (its metadata's
	// task); Size its input's [height, width] (imgsz).
	Task string
	Size [2]int
}

// recognise tells a model 'svc init' knows from its inputs and outputs:
//   - PaddleOCR's text direction classifier: input x [N, 3, 48|?, 192|?],
//     one output [N, 2];
//   - PaddleOCR's text recogniser: input x [N, 3, 48, ?], one output
//     [N, steps, classes] (classes dynamic or many: 6625 for ppocr_keys_v1);
//   - an ImageNet classifier: one float input [N, 3, 224, 224], one output
//     [N, 1000];
//   - an Ultralytics YOLO export that says its task (detect, segment or
//     pose), its class names and its size in the metadata
//     (codec.RecogniseDetector): its output of boxes decoded;
//   - Ultralytics YOLO: input images [1, 3, 640, 640] with the class names
//     in the metadata (names), its outputs raw.
//
// It returns nil for any other model.
func recognise(info core.ModelInfo) *recognition {
	if d, ok := codec.RecogniseDetector(info); ok {
		return &recognition{Preset: "yolo", Input: d.Input, Output: d.Output, Classes: -1, Task: d.Task, Size: d.Size}
	}
	if len(info.Inputs) != 1 || len(info.Outputs) == 0 {
		return nil
	}
	in, out := info.Inputs[0], info.Outputs[0]
	if !isFloat(in.Type) || len(in.Shape) != 4 || in.Shape[1] != 3 {
		return nil
	}
	dims := func(s []int64, want ...int64) bool { // -2 in want: any
		if len(s) != len(want) {
			return false
		}
		for i, w := range want {
			if w != -2 && s[i] != w {
				return false
			}
		}
		return true
	}
	either := func(d int64, want int64) bool { return d == want || d < 0 }
	h, w := in.Shape[2], in.Shape[3]
	classes := int64(-1)
	if len(out.Shape) > 0 {
		classes = out.Shape[len(out.Shape)-1]
	}
	r := &recognition{Input: in.Name, Output: out.Name, Classes: classes}
	one := len(info.Outputs) == 1 && isFloat(out.Type)
	switch {
	case in.Name == "x" && one && either(h, 48) && either(w, 192) && dims(out.Shape, -2, 2):
		r.Preset = "paddleocr-cls"
	case in.Name == "x" && one && h == 48 && w < 0 && len(out.Shape) == 3 && (classes < 0 || classes > 100):
		r.Preset = "paddleocr-rec"
	case one && dims(in.Shape, -2, 3, 224, 224) && dims(out.Shape, -2, 1000):
		r.Preset = "imagenet"
	case in.Name == "images" && dims(in.Shape, -2, 3, 640, 640) && info.Metadata["names"] != "":
		r.Preset, r.Output = "yolo", ""
	default:
		return nil
	}
	return r
}

func isFloat(t string) bool { return t == "float32" || t == "float16" || t == "float64" }

// plainKey matches a YAML key or value written without quotes.
var plainKey = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_./-]*$`)

// yamlString writes s as a YAML scalar, quoted when it must be.
func yamlString(s string) string {
	if plainKey.MatchString(s) && !strings.HasSuffix(s, ".") {
		return s
	}
	return fmt.Sprintf("%q", s)
}

// modelEntry is the models: entry of a model at path (as svc.yml names
// it), indented under models:. For a model recognise knows, the entry's
// inputs:/outputs: keys are live, not commented: the model then takes
// pictures and answers labels or text as soon as it is served, which is
// what its user wants of it; a comment says how to go back to tensors.
// Only what cannot work unattended is commented: the PaddleOCR
// recogniser's dictionary is a file the user must fetch.
func modelEntry(name, path string, info core.ModelInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %s:\n    path: %s\n", yamlString(name), yamlString(path))
	r := recognise(info)
	if r == nil {
		return b.String()
	}
	in, out := yamlString(r.Input), yamlString(r.Output)
	what := map[string]string{
		"paddleocr-cls": "PaddleOCR's text direction classifier",
		"paddleocr-rec": "PaddleOCR's text recogniser",
		"imagenet":      "an ImageNet classifier",
		"yolo":          "an Ultralytics YOLO detector",
	}[r.Preset]
	fmt.Fprintf(&b, "    # svc init recognised %s. The keys below are live: /predict takes pictures for\n", what)
	b.WriteString("    # the image input (base64 or data: URLs in JSON, multipart/form-data files, or an image/* body)\n")
	b.WriteString("    # and answers what the outputs mean; ?raw=true answers the tensors. Delete them to serve tensors.\n")
	if r.Task != "" && r.Size != [2]int{640, 640} {
		fmt.Fprintf(&b, "    inputs:\n      %s:\n        image: {preset: %s, size: [%d, %d]}\n", in, r.Preset, r.Size[0], r.Size[1])
	} else {
		fmt.Fprintf(&b, "    inputs:\n      %s:\n        image: {preset: %s}\n", in, r.Preset)
	}
	switch r.Preset {
	case "paddleocr-cls":
		fmt.Fprintf(&b, "    outputs:\n      %s:\n        classify: {labels: [\"0\", \"180\"], top_k: 1}   # the text's angle\n", out)
	case "imagenet":
		fmt.Fprintf(&b, "    outputs:\n      %s:\n        classify: {top_k: 5}   # labels: a file of the 1000 class names, one per line\n", out)
		b.WriteString("        # add softmax: true under classify if the model outputs logits, not probabilities\n")
	case "paddleocr-rec":
		labels := "the dictionary the model was trained with"
		if r.Classes > 0 {
			labels = fmt.Sprintf("%d characters for the %d classes, blank and space added", r.Classes-2, r.Classes)
		}
		b.WriteString("    # Text needs the model's dictionary: fetch ppocr_keys_v1.txt (PaddleOCR's ppocr/utils/ppocr_keys_v1.txt,\n")
		fmt.Fprintf(&b, "    # %s) next to this file, then uncomment:\n", labels)
		fmt.Fprintf(&b, "    # outputs:\n    #   %s:\n    #     ctc: {labels: ppocr_keys_v1.txt}\n", out)
	case "yolo":
		if r.Task == "" {
			b.WriteString("    # outputs stay raw: the model's metadata does not say its task, so /predict answers\n")
			b.WriteString("    # the output tensor; declare detect: {} (or segment, pose) under its output for boxes.\n")
			break
		}
		fmt.Fprintf(&b, "    outputs:\n      %s:\n        %s: {}   # boxes in the picture's pixels; confidence: 0.25, iou: 0.7, max_det: 300\n", out, r.Task)
	}
	return b.String()
}
