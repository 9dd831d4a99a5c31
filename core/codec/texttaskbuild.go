package codec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec/decode"
	"github.com/svc-dev/svc/core/codec/tokenizer"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
)

// The file that names a Hugging Face model's architecture and labels, and
// the output classifiers answer.
const (
	hfConfigFile = "config.json"
	logitsOutput = "logits"
)

// readHFConfig reads the config.json beside the tokenizer, else beside
// the model; nil (and "") when there is none. One that is not JSON is an
// error naming it.
func readHFConfig(tokPath, modelFile string) (*hfConfig, string, error) {
	dirs := []string{filepath.Dir(tokPath)}
	if modelFile != "" {
		dirs = append(dirs, filepath.Dir(modelFile))
	}
	for _, d := range dirs {
		p := filepath.Join(d, hfConfigFile)
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		c, err := unmarshalHF(data)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", p, err)
		}
		return c, p, nil
	}
	return nil, "", nil
}

// inferTask is the task a folder says: config.json's architectures
// (…ForSequenceClassification, …ForTokenClassification), else embedding
// (sentence-transformers files, or hidden states); from says why.
func inferTask(hf *hfConfig, hfPath, dir string) (task, from string) {
	if hf != nil {
		for _, a := range hf.Architectures {
			switch {
			case strings.HasSuffix(a, "ForSequenceClassification"):
				return config.TaskClassification, fmt.Sprintf("classification from %s (%s)", hfPath, a)
			case strings.HasSuffix(a, "ForTokenClassification"):
				return config.TaskTokens, fmt.Sprintf("token classification from %s (%s)", hfPath, a)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "modules.json")); err == nil {
		return config.TaskEmbedding, "embedding from modules.json"
	}
	return config.TaskEmbedding, "embedding by default"
}

// bindOutput finds the output the task reads: the hidden states of
// embedding; the logits of classification ([batch, labels]) and token
// classification ([batch, sequence, labels]), by name or else the first
// output.
func (x *Text) bindOutput(info core.ModelInfo, taskFrom string) error {
	x.Hidden = -1
	if x.Task == config.TaskEmbedding {
		if x.Output = hiddenAt(info, false); x.Output < 0 {
			return fmt.Errorf("the model's outputs (%s) hold no hidden states: embedding takes a float32 output [batch, sequence, hidden] (%s, or the first)", outputNames(info), hiddenOutput)
		}
		if s := info.Outputs[x.Output].Shape; len(s) == 3 {
			x.Hidden = s[2]
		}
		return nil
	}
	rank, want := 2, "[batch, labels]"
	if x.Task == config.TaskTokens {
		rank, want = 3, "[batch, sequence, labels]"
	}
	x.Output = slices.IndexFunc(info.Outputs, func(o core.OutputSpec) bool { return o.Name == logitsOutput })
	if x.Output < 0 && len(info.Outputs) > 0 {
		x.Output = 0
	}
	if x.Output < 0 {
		return fmt.Errorf("the model has no outputs")
	}
	o := info.Outputs[x.Output]
	switch o.Type {
	case "float32", "float64", "float16", "bfloat16":
	default:
		return fmt.Errorf("output '%s' holds %s: %s (%s) reads logits, float %s", o.Name, o.Type, x.Task, taskFrom, want)
	}
	if o.Shape != nil && len(o.Shape) != rank {
		return fmt.Errorf("output '%s' has shape %s: %s (%s) reads logits %s", o.Name, tensor.FormatShape(o.Shape), x.Task, taskFrom, want)
	}
	if len(o.Shape) == rank {
		x.Hidden = o.Shape[rank-1]
	}
	return nil
}

// bindClassifier sets the labels, the activation and top_k of
// classification and token classification: svc.yml's, else config.json's
// (id2label, problem_type), else the defaults. The error names the key
// after "text.".
func (x *Text) bindClassifier(decl *config.Text, hf *hfConfig, hfPath, taskFrom string) error {
	labels, from := hf.labels(), "labels from "+hfPath
	switch {
	case decl.Labels.File != "":
		var err error
		if labels, err = decode.LoadLabels(decl.Labels.File); err != nil {
			return fmt.Errorf("labels: %w", err)
		}
		from = "labels from " + decl.Labels.File
	case len(decl.Labels.List) > 0:
		labels, from = decl.Labels.List, "labels from svc.yml"
	case labels == nil:
		from = "no labels: classes by index"
	}
	if x.Hidden >= 0 && len(labels) > 0 && int64(len(labels)) != x.Hidden {
		return fmt.Errorf("labels: %d labels (%s), but the model's logits have %d classes", len(labels), strings.TrimPrefix(from, "labels "), x.Hidden)
	}
	classes := int64(len(labels))
	if x.Hidden >= 0 {
		classes = x.Hidden
	}
	c := &decode.Classifier{Labels: labels, TopK: allLabels}
	activation, actFrom := decl.Activation, "svc.yml"
	switch {
	case activation != "":
	case x.Task == config.TaskTokens:
		activation, actFrom = config.ActivationSoftmax, "the default"
	case hf != nil && hf.ProblemType == "multi_label_classification":
		activation, actFrom = config.ActivationSigmoid, hfPath+"'s problem_type"
	case classes == 1:
		activation, actFrom = config.ActivationSigmoid, "one label"
	default:
		activation, actFrom = config.ActivationSoftmax, "the default"
	}
	c.Softmax, c.Sigmoid = activation == config.ActivationSoftmax, activation == config.ActivationSigmoid
	if decl.TopK > 0 {
		c.TopK = decl.TopK
	}
	if classes > 0 {
		c.TopK = min(c.TopK, int(classes))
	}
	if x.Task == config.TaskTokens {
		c.TopK = 1 // each token's best label
	}
	x.classify, x.Labels = c, labels
	x.From = fmt.Sprintf("%s; %s; %s from %s", taskFrom, from, activation, actFrom)
	return nil
}

// TextFolder is what a model's folder offers text, as svc serves it
// without svc.yml: the tokenizer.json found beside the model (or in the
// folder above; "" when none), why svc cannot reproduce it (nil when it
// can), why svc cannot read the folder's config.json (nil when it can or
// there is none: svc serve refuses the model until it is mended), and the
// task the folder says, with why; Recognised reports whether the folder
// makes the model a text model with no svc.yml (svc serve takes text, or
// refuses the model when TokenizerErr is set, the error saying what to
// do); Served whether svc serves it text so.
type TextFolder struct {
	Tokenizer    string
	TokenizerErr error
	ConfigErr    error
	Task         string
	TaskFrom     string
	Recognised   bool
	Served       bool
}

// InspectText looks at the folder of the model at modelFile, whose
// inputs and outputs info gives, as buildText does for a model with
// nothing declared.
func InspectText(modelFile string, info core.ModelInfo) TextFolder {
	var f TextFolder
	if !slices.ContainsFunc(info.Inputs, func(in core.InputSpec) bool { return in.Name == inputIDs }) {
		return f
	}
	if f.Tokenizer = findTokenizer(modelFile); f.Tokenizer == "" {
		return f
	}
	hf, hfPath, err := readHFConfig(f.Tokenizer, modelFile)
	if err != nil {
		f.ConfigErr = err
		return f
	}
	f.Task, f.TaskFrom = inferTask(hf, hfPath, filepath.Dir(f.Tokenizer))
	f.Recognised = f.Task != config.TaskEmbedding || hiddenAt(info, true) >= 0
	if _, err := tokenizer.Load(f.Tokenizer); err != nil {
		f.TokenizerErr = err
		if f.Recognised {
			f.TokenizerErr = fmt.Errorf("%w%s", err, refusedTokenizer)
		}
	}
	f.Served = f.TokenizerErr == nil && f.Recognised
	return f
}
