package config

import "fmt"

// Text makes a model that takes token ids (input_ids, and attention_mask
// and token_type_ids when it has them) take text: a tokenizer.json turns
// the text into the ids on the server (transport/text/tokenizer), and the
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
	// 400 (nil = true).
	Truncation *bool `yaml:"truncation"`
	// Pooling turns the hidden states into one vector per text: mean
	// (over the attention mask), cls or max ("" = the sentence-transformers
	// files, else mean).
	Pooling string `yaml:"pooling"`
	// Normalize scales each vector to unit L2 length (nil = the
	// sentence-transformers files' Normalize module, else false).
	Normalize *bool `yaml:"normalize"`
	// Task is what the model answers: embedding, the only one served
	// ("" = embedding).
	Task string `yaml:"task"`
}

// Pooling modes and tasks of Text.
const (
	PoolingMean   = "mean"
	PoolingCLS    = "cls"
	PoolingMax    = "max"
	TaskEmbedding = "embedding"
)

// check returns the first invalid key of t under key, and why.
func (t *Text) check(key string) (string, string) {
	switch {
	case t.MaxLength < 0:
		return key + ".max_length", "cannot be negative"
	case t.Pooling != "" && t.Pooling != PoolingMean && t.Pooling != PoolingCLS && t.Pooling != PoolingMax:
		return key + ".pooling", fmt.Sprintf("'%s' is not a pooling: want mean, cls or max", t.Pooling)
	case t.Task != "" && t.Task != TaskEmbedding:
		return key + ".task", fmt.Sprintf("'%s' is not served: the text task svc serves is embedding (sentence embeddings); classification and token classification are not implemented", t.Task)
	}
	return "", ""
}
