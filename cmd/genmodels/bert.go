package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/svc-dev/svc/core/onnxpb"
)

// The tiny BERT's sizes: the vocabulary of the bert-uncased fixture
// tokenizer (core/codec/tokenizer/testdata/fixtures/bert-uncased.json,
// ids 0 to 443), a hidden size of 32, 128 positions, 2 token types and an
// FFN of 64.
const (
	bertVocab     = 444
	bertHidden    = 32
	bertPositions = 128
	bertTypes     = 2
	bertFFN       = 64
	bertSeed      = 30
)

// rng is splitmix64: weights that stay the same on every Go version.
type rng uint64

func (r *rng) next() uint64 {
	*r += 0x9e3779b97f4a7c15
	z := uint64(*r)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// uniform returns n values in [center-spread, center+spread).
func (r *rng) uniform(n int, center, spread float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		u := float32(r.next()>>40) / float32(1<<24)
		out[i] = center + spread*(2*u-1)
	}
	return out
}

// tinyBERT builds a one-layer BERT encoder with random weights: word,
// position and token-type embeddings (Gather), LayerNorm, one
// single-head self-attention with the attention mask as an additive bias
// (-10000 on masked keys), residual and LayerNorm, a GELU FFN (Erf form),
// residual and LayerNorm. Its output is last_hidden_state.
func tinyBERT() *onnxpb.Model {
	b := bertEncoder("tiny_bert")
	b.output("last_hidden_state", tensorOf(onnxpb.ElemFloat, "batch", "sequence", bertHidden), "the encoder's hidden states")
	m := b.model()
	m.DocString = "tiny BERT encoder with random weights (svc tests)"
	return m
}

// bertEncoder builds tinyBERT's graph up to last_hidden_state, its
// output not declared, so that heads can read it.
func bertEncoder(name string) *graphBuilder {
	b := newGraph(name)
	r := rng(bertSeed)
	ids := tensorOf(onnxpb.ElemInt64, "batch", "sequence")
	b.input("input_ids", ids, "token ids")
	b.input("attention_mask", ids, "1 for tokens, 0 for padding")
	b.input("token_type_ids", ids, "segment ids (0 or 1)")
	h := int64(bertHidden)
	b.initializer(constant("word_embeddings", dims(bertVocab, h), r.uniform(bertVocab*bertHidden, 0, 1)))
	b.initializer(constant("position_embeddings", dims(bertPositions, h), r.uniform(bertPositions*bertHidden, 0, 0.5)))
	b.initializer(constant("token_type_embeddings", dims(bertTypes, h), r.uniform(bertTypes*bertHidden, 0, 0.5)))
	b.initializer(constant("zero", nil, []int64{0}))
	b.initializer(constant("one", nil, []int64{1}))
	b.initializer(constant("one_f", nil, []float32{1}))
	b.initializer(constant("mask_bias", nil, []float32{-10000}))
	b.initializer(constant("axis1", dims(1), []int64{1}))
	b.node("Gather", in("word_embeddings", "input_ids"), out("words"))
	b.node("Shape", in("input_ids"), out("ids_shape"))
	b.node("Gather", in("ids_shape", "one"), out("seq_len"))
	b.node("Range", in("zero", "seq_len", "one"), out("position_ids"))
	b.node("Gather", in("position_embeddings", "position_ids"), out("positions"))
	b.node("Gather", in("token_type_embeddings", "token_type_ids"), out("types"))
	b.node("Add", in("words", "positions"), out("emb_wp"))
	b.node("Add", in("emb_wp", "types"), out("emb_sum"))
	layerNorm(b, &r, "emb_ln", "emb_sum", "hidden0")

	// The mask as an additive bias on the keys: (1 - mask) * -10000,
	// [batch, 1, sequence].
	b.node("Cast", in("attention_mask"), out("mask_f"), attrInt("to", int64(onnxpb.ElemFloat)))
	b.node("Sub", in("one_f", "mask_f"), out("mask_inv"))
	b.node("Mul", in("mask_inv", "mask_bias"), out("mask_add"))
	b.node("Unsqueeze", in("mask_add", "axis1"), out("mask_keys"))
	dense(b, &r, "query", "hidden0", h, h)
	dense(b, &r, "key", "hidden0", h, h)
	dense(b, &r, "value", "hidden0", h, h)
	b.initializer(constant("scale", nil, []float32{float32(1 / math.Sqrt(bertHidden))}))
	b.node("Transpose", in("key"), out("key_t"), attrInts("perm", 0, 2, 1))
	b.node("MatMul", in("query", "key_t"), out("scores_raw"))
	b.node("Mul", in("scores_raw", "scale"), out("scores_scaled"))
	b.node("Add", in("scores_scaled", "mask_keys"), out("scores"))
	b.node("Softmax", in("scores"), out("attention"), attrInt("axis", -1))
	b.node("MatMul", in("attention", "value"), out("context"))
	dense(b, &r, "attn_out", "context", h, h)
	b.node("Add", in("hidden0", "attn_out"), out("attn_res"))
	layerNorm(b, &r, "attn_ln", "attn_res", "hidden1")

	dense(b, &r, "ffn_in", "hidden1", h, bertFFN)
	gelu(b, "ffn_in", "ffn_act")
	dense(b, &r, "ffn_out", "ffn_act", bertFFN, h)
	b.node("Add", in("hidden1", "ffn_out"), out("ffn_res"))
	layerNorm(b, &r, "out_ln", "ffn_res", "last_hidden_state")
	return b
}

// The labels of the classification heads.
var (
	sentimentLabels = []string{"negative", "neutral", "positive"}
	nerLabels       = []string{"O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"}
)

// tinyBERTClassifier is tinyBERT with a sequence-classification head: the
// [CLS] token's hidden state (position 0), a tanh pooler and a dense layer
// to logits [batch, 3].
func tinyBERTClassifier() *onnxpb.Model {
	b := bertEncoder("tiny_bert_classifier")
	r := rng(bertSeed + 1)
	h := int64(bertHidden)
	b.node("Gather", in("last_hidden_state", "zero"), out("cls_state"), attrInt("axis", 1))
	dense(b, &r, "pooler", "cls_state", h, h)
	b.node("Tanh", in("pooler"), out("pooled"))
	dense(b, &r, "classifier", "pooled", h, int64(len(sentimentLabels)))
	b.node("Mul", in("classifier", "logit_scale"), out("logits"))
	b.initializer(constant("logit_scale", nil, []float32{4}))
	b.output("logits", tensorOf(onnxpb.ElemFloat, "batch", len(sentimentLabels)), "one logit per label")
	m := b.model()
	m.DocString = "tiny BERT sequence classifier with random weights (svc tests)"
	return m
}

// tinyBERTReranker is tinyBERT with a cross-encoder's head, as
// sentence-transformers' CrossEncoder models have it: the classifier of
// tinyBERTClassifier with one logit, the relevance of a pair [batch, 1].
func tinyBERTReranker() *onnxpb.Model {
	b := bertEncoder("tiny_bert_reranker")
	r := rng(bertSeed + 3)
	h := int64(bertHidden)
	b.node("Gather", in("last_hidden_state", "zero"), out("cls_state"), attrInt("axis", 1))
	dense(b, &r, "pooler", "cls_state", h, h)
	b.node("Tanh", in("pooler"), out("pooled"))
	dense(b, &r, "classifier", "pooled", h, 1)
	b.node("Mul", in("classifier", "logit_scale"), out("logits"))
	b.initializer(constant("logit_scale", nil, []float32{4}))
	b.output("logits", tensorOf(onnxpb.ElemFloat, "batch", 1), "the relevance of each pair, one logit")
	m := b.model()
	m.DocString = "tiny BERT cross-encoder with random weights (svc tests)"
	return m
}

// tinyBERTTokens is tinyBERT with a token-classification head: a dense
// layer from each token's hidden state to logits [batch, sequence, 9].
func tinyBERTTokens() *onnxpb.Model {
	b := bertEncoder("tiny_bert_ner")
	r := rng(bertSeed + 2)
	dense(b, &r, "classifier", "last_hidden_state", int64(bertHidden), int64(len(nerLabels)))
	b.node("Mul", in("classifier", "logit_scale"), out("logits"))
	b.initializer(constant("logit_scale", nil, []float32{4}))
	b.output("logits", tensorOf(onnxpb.ElemFloat, "batch", "sequence", len(nerLabels)), "one logit per token and label")
	m := b.model()
	m.DocString = "tiny BERT token classifier with random weights (svc tests)"
	return m
}

// hfConfig is the config.json of a Hub repository with the architecture
// and labels of a head.
func hfConfig(architecture, problem string, labels []string) []byte {
	var sb strings.Builder
	fmt.Fprintf(&sb, "{\n  \"architectures\": [%q],\n  \"model_type\": \"bert\",\n  \"hidden_size\": %d,\n  \"max_position_embeddings\": %d,\n  \"vocab_size\": %d,\n", architecture, bertHidden, bertPositions, bertVocab)
	if problem != "" {
		fmt.Fprintf(&sb, "  \"problem_type\": %q,\n", problem)
	}
	sb.WriteString("  \"id2label\": {")
	for i, l := range labels {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "\"%d\": %q", i, l)
	}
	sb.WriteString("},\n  \"label2id\": {")
	for i, l := range labels {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%q: %d", l, i)
	}
	sb.WriteString("}\n}\n")
	return []byte(sb.String())
}

// dense adds name = MatMul(x, name_w) + name_b.
func dense(b *graphBuilder, r *rng, name, x string, from, to int64) {
	spread := float32(1.5 / math.Sqrt(float64(from)))
	b.initializer(constant(name+"_w", dims(from, to), r.uniform(int(from*to), 0, spread)))
	b.initializer(constant(name+"_b", dims(to), r.uniform(int(to), 0, 0.1)))
	b.node("MatMul", in(x, name+"_w"), out(name+"_mm"))
	b.node("Add", in(name+"_mm", name+"_b"), out(name))
}

// layerNorm adds y = LayerNormalization(x) over the last axis.
func layerNorm(b *graphBuilder, r *rng, name, x, y string) {
	b.initializer(constant(name+"_gamma", dims(bertHidden), r.uniform(bertHidden, 1, 0.1)))
	b.initializer(constant(name+"_beta", dims(bertHidden), r.uniform(bertHidden, 0, 0.1)))
	b.node("LayerNormalization", in(x, name+"_gamma", name+"_beta"), out(y),
		attrInt("axis", -1), onnxpb.Attribute{Name: "epsilon", Type: onnxpb.AttrFloat, F: 1e-12})
}

// gelu adds y = x * 0.5 * (1 + Erf(x / sqrt(2))).
func gelu(b *graphBuilder, x, y string) {
	b.initializer(constant("sqrt2", nil, []float32{float32(math.Sqrt2)}))
	b.initializer(constant("half", nil, []float32{0.5}))
	b.node("Div", in(x, "sqrt2"), out(x+"_scaled"))
	b.node("Erf", in(x+"_scaled"), out(x+"_erf"))
	b.node("Add", in(x+"_erf", "one_f"), out(x+"_erf1"))
	b.node("Mul", in(x, x+"_erf1"), out(x+"_x"))
	b.node("Mul", in(x+"_x", "half"), out(y))
}
