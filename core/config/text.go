package config

import "fmt"

// Text makes a model that takes token ids (input_ids, and attention_mask
// and token_type_ids when it has them) take text: a tokenizer.json turns
// the text into the ids on the server (core/codec/tokenizer), and the
// task says what the outputs mean. Zero fields take what the model's
// folder says (tokenizer.json and the sentence-transformers files beside
// the model), then the defaults.
type Text struct {
	// Tokenizer is the path of the tokenizer.json, relative to svc.yml
	// ("" = tokenizer.json beside the model, or in the folder above).
	Tokenizer string `yaml:"tokenizer"`
	// MaxLength caps the tokens of one text, special tokens included (0 =
	// the tokenizer's truncation, else the model's positions when known).
	MaxLength int `yaml:"max_length"`
	// Truncation cuts a longer text to MaxLength; false refuses it with a
	// 400 (nil = true). A request's own truncate (TEI's) overrides it.
	Truncation *bool `yaml:"truncation"`
	// AutoTruncate is Truncation under TEI's name (--auto-truncate):
	// either key sets it; both, they must agree.
	AutoTruncate *bool `yaml:"auto_truncate"`
	// MaxBatchTokens bounds one run of texts: its texts × the tokens of
	// its longest, padding included (0 = DefaultMaxBatchTokens). A
	// request's texts are split into such batches, and waiting texts of
	// several requests grouped by length into them.
	MaxBatchTokens int `yaml:"max_batch_tokens"`
	// Pooling turns the hidden states into one vector per text: mean
	// (over the attention mask), cls or max ("" = the sentence-transformers
	// files, else mean).
	Pooling string `yaml:"pooling"`
	// Normalize scales each vector to unit L2 length (nil = the
	// sentence-transformers files' Normalize module, else false).
	Normalize *bool `yaml:"normalize"`
	// Task is what the model answers: embedding (one vector per text),
	// classification (labels and scores per text) or token-classification
	// (the entities in each text) ("" = from the folder: config.json's
	// architectures, else sentence-transformers files or hidden states
	// mean embedding).
	Task string `yaml:"task"`
	// Labels names the classes of classification and token-classification
	// (a list, or a file of one per line, relative to svc.yml; empty = the
	// id2label of the config.json beside the tokenizer).
	Labels Labels `yaml:"labels"`
	// Activation turns classification's logits into scores: softmax,
	// sigmoid or none ("" = sigmoid when config.json's problem_type is
	// multi_label_classification or the model has one label, else
	// softmax).
	Activation string `yaml:"activation"`
	// TopK is how many labels classification answers per text, best first
	// (0 = every label).
	TopK int `yaml:"top_k"`
}

// DefaultMaxBatchTokens is text.max_batch_tokens' default, TEI's.
const DefaultMaxBatchTokens = 16384

// Truncates reports whether a longer text is cut: Truncation or
// AutoTruncate, true when neither is set.
func (t *Text) Truncates() bool {
	switch {
	case t.Truncation != nil:
		return *t.Truncation
	case t.AutoTruncate != nil:
		return *t.AutoTruncate
	}
	return true
}

// BatchTokens is MaxBatchTokens, or its default.
func (t *Text) BatchTokens() int {
	if t.MaxBatchTokens > 0 {
		return t.MaxBatchTokens
	}
	return DefaultMaxBatchTokens
}

// Pooling modes and tasks of Text.
const (
	PoolingMean        = "mean"
	PoolingCLS         = "cls"
	PoolingMax         = "max"
	TaskEmbedding      = "embedding"
	TaskClassification = "classification"
	TaskTokens         = "token-classification"
	ActivationSoftmax  = "softmax"
	ActivationSigmoid  = "sigmoid"
	ActivationNone     = "none"
)

// resolve makes the paths of t relative to dir absolute.
func (t *Text) resolve(dir string) {
	t.Tokenizer = absUnder(dir, t.Tokenizer)
	t.Labels.File = absUnder(dir, t.Labels.File)
}

// check returns the first invalid key of t under key, and why.
func (t *Text) check(key string) (string, string) {
	switch {
	case t.MaxLength < 0:
		return key + ".max_length", "cannot be negative"
	case t.MaxBatchTokens < 0:
		return key + ".max_batch_tokens", "cannot be negative"
	case t.Truncation != nil && t.AutoTruncate != nil && *t.Truncation != *t.AutoTruncate:
		return key + ".auto_truncate", "says otherwise than truncation, which it is another name of: set one"
	case t.Pooling != "" && t.Pooling != PoolingMean && t.Pooling != PoolingCLS && t.Pooling != PoolingMax:
		return key + ".pooling", fmt.Sprintf("'%s' is not a pooling: want mean, cls or max", t.Pooling)
	case t.Task != "" && t.Task != TaskEmbedding && t.Task != TaskClassification && t.Task != TaskTokens:
		return key + ".task", fmt.Sprintf("'%s' is not a text task: want embedding, classification or token-classification", t.Task)
	case t.Activation != "" && t.Activation != ActivationSoftmax && t.Activation != ActivationSigmoid && t.Activation != ActivationNone:
		return key + ".activation", fmt.Sprintf("'%s' is not an activation: want softmax, sigmoid or none", t.Activation)
	case t.TopK < 0:
		return key + ".top_k", "cannot be negative"
	case t.Task == TaskEmbedding && (!t.Labels.Empty() || t.Activation != "" || t.TopK != 0):
		return key + ".task", "embedding takes no labels, activation or top_k: they are classification's"
	case t.Task == TaskTokens && t.TopK != 0:
		return key + ".top_k", "token-classification answers each entity's best label: top_k is classification's"
	}
	return "", ""
}
