package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec/tokenizer"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
)

// The id inputs that text fills.
const (
	inputIDs      = "input_ids"
	inputMask     = "attention_mask"
	inputTypeIDs  = "token_type_ids"
	hiddenOutput  = "last_hidden_state"
	tokenizerFile = "tokenizer.json"
)

// buildText resolves models.<name>.text (decl, nil: nothing declared)
// against the loaded model from modelFile. Undeclared, text applies when
// the model takes input_ids and a tokenizer.json is beside it (or in the
// folder above, a Hub repo's onnx/ layout), and its first output is
// hidden states; declared, whatever does not fit fails start-up.
func buildText(decl *config.Text, modelFile string, specs []tensor.Spec, info core.ModelInfo) (*Text, error) {
	const key = "text"
	ids := slices.IndexFunc(specs, func(s tensor.Spec) bool { return s.Name == inputIDs })
	tokPath := ""
	if decl != nil {
		tokPath = decl.Tokenizer
	}
	if tokPath == "" {
		tokPath = findTokenizer(modelFile)
	}
	auto := decl == nil
	if auto && (ids < 0 || tokPath == "") {
		return nil, nil
	}
	if auto {
		decl = &config.Text{}
	}
	if ids < 0 {
		return nil, fmt.Errorf("%s: the model has no input '%s' (its inputs are %s): text fills a model that takes token ids", key, inputIDs, specNames(specs))
	}
	if tokPath == "" {
		return nil, fmt.Errorf("%s.tokenizer: no %s beside the model %s: name one in svc.yml", key, tokenizerFile, modelFile)
	}
	hf, hfPath, err := readHFConfig(tokPath, modelFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	task, taskFrom := decl.Task, "task from svc.yml"
	if task == "" {
		task, taskFrom = inferTask(hf, hfPath, filepath.Dir(tokPath))
	}
	if auto && task == config.TaskEmbedding && hiddenAt(info, true) < 0 {
		// Without a word from the folder, only hidden states by name say
		// the model is an encoder to pool.
		return nil, nil
	}
	x := &Text{Task: task, ids: ids, mask: -1, types: -1, nInputs: len(specs), Tokenizer: tokPath, Truncate: decl.Truncates(), MaxBatchTokens: decl.BatchTokens()}
	if err := x.bindInputs(specs); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if err := x.bindOutput(info, taskFrom); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if slices.ContainsFunc(info.Outputs, func(o core.OutputSpec) bool { return o.Name == x.Answer() }) {
		return nil, fmt.Errorf("%s: the model has an output named '%s', the name of svc's answer to text (%s): the protocols could not tell them apart", key, x.Answer(), task)
	}
	tok, err := tokenizer.Load(tokPath)
	if err != nil && auto {
		// Served by its ids alone, the folder would say nothing of its
		// text: a client sending text would learn of it from a missing
		// input_ids.
		return nil, fmt.Errorf("%s.tokenizer: %w%s", key, err, refusedTokenizer)
	}
	if err != nil {
		return nil, fmt.Errorf("%s.tokenizer: %w", key, err) // Load's error names the file
	}
	tabs := readTables(modelFile)
	if tabs.words > 0 && int64(tok.VocabSize()) > tabs.words {
		return nil, fmt.Errorf("%s.tokenizer: %s gives ids up to %d, but the model's word embeddings have %d rows: the tokenizer is not the model's", key, tokPath, tok.VocabSize()-1, tabs.words)
	}
	x.bounds = boundsOf(tabs, hf, hfPath, tok)
	if x.MaxLength, err = maxLength(decl.MaxLength, tok.MaxLength(), x.bounds.positions); err != nil {
		return nil, fmt.Errorf("%s.max_length: %w", key, err)
	}
	if x.MaxLength > x.MaxBatchTokens {
		return nil, fmt.Errorf("%s.max_batch_tokens: %d tokens, fewer than one text may have (%d, its maximum length): a batch could not hold it; raise %s.max_batch_tokens or lower %s.max_length", key, x.MaxBatchTokens, x.MaxLength, key, key)
	}
	x.padID, x.padType = tok.PadID()
	x.tok, x.full = tok.WithTruncation(x.longest()), tok.WithTruncation(0)
	x.left, x.right = tok.WithTruncationSide(x.longest(), true), tok.WithTruncationSide(x.longest(), false)
	if task != config.TaskEmbedding {
		if err := x.bindClassifier(decl, hf, hfPath, taskFrom); err != nil {
			return nil, fmt.Errorf("%s.%w", key, err)
		}
		return x, nil
	}
	x.Pooling, x.Normalize, x.From, err = sentenceTransformers(filepath.Dir(tokPath))
	if errors.Is(err, errModule) {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if decl.Pooling != "" {
		x.Pooling, x.From, err = decl.Pooling, "pooling from svc.yml", nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s.pooling: %w; set one of mean, cls, max in svc.yml to serve it so", key, err)
	}
	if decl.Normalize != nil {
		x.Normalize = *decl.Normalize
	}
	return x, nil
}

// refusedTokenizer ends the error for a tokenizer.json beside a model
// that takes token ids, which svc cannot reproduce: what to do about it.
const refusedTokenizer = " (svc takes text for a model that takes input_ids with the tokenizer.json beside it: mend the file, or move it out of the folder to serve the model by its token ids alone)"

// maxLength is the cap on a text's tokens: declared, which must fit the
// model's positions (0: unknown); else the tokenizer's truncation, capped
// at the positions; else the positions.
func maxLength(declared, tokenizer int, positions int64) (int, error) {
	if declared > 0 {
		if positions > 0 && int64(declared) > positions {
			return 0, fmt.Errorf("%d tokens, but the model has %d positions", declared, positions)
		}
		return declared, nil
	}
	if positions > 0 && (tokenizer == 0 || int64(tokenizer) > positions) {
		return int(positions), nil
	}
	return tokenizer, nil
}

// bindInputs finds the id inputs; any other required input is refused.
func (x *Text) bindInputs(specs []tensor.Spec) error {
	for k, s := range specs {
		slot := -1
		switch s.Name {
		case inputIDs:
			slot = 0
		case inputMask:
			x.mask, slot = k, 1
		case inputTypeIDs:
			x.types, slot = k, 2
		}
		if slot < 0 {
			if s.Required {
				return fmt.Errorf("the model also takes input '%s', which text does not fill", s.Name)
			}
			continue
		}
		if s.DType != tensor.Int64 && s.DType != tensor.Int32 {
			return fmt.Errorf("input '%s' holds %s: token ids are int64 or int32", s.Name, s.DType)
		}
		if s.Shape != nil && len(s.Shape) != 2 {
			return fmt.Errorf("input '%s' has rank %d: token ids are [batch, sequence]", s.Name, len(s.Shape))
		}
		x.dtypes[slot] = s.DType
	}
	return nil
}

// hiddenAt is the index of the hidden-state output: last_hidden_state
// (or token_embeddings, as sentence-transformers exports name it), else,
// unless named is set, the first output; -1 when that is not float32 of
// rank 3 (or unknown).
func hiddenAt(info core.ModelInfo, named bool) int {
	k := slices.IndexFunc(info.Outputs, func(o core.OutputSpec) bool { return o.Name == hiddenOutput || o.Name == "token_embeddings" })
	if k < 0 && !named && len(info.Outputs) > 0 {
		k = 0
	}
	if k < 0 {
		return -1
	}
	o := info.Outputs[k]
	if o.Type != "float32" || o.Shape != nil && len(o.Shape) != 3 {
		return -1
	}
	return k
}

// findTokenizer is the tokenizer.json beside modelFile, or in the folder
// above; "" when neither.
func findTokenizer(modelFile string) string {
	if modelFile == "" {
		return ""
	}
	dir := filepath.Dir(modelFile)
	for _, d := range []string{dir, filepath.Dir(dir)} {
		p := filepath.Join(d, tokenizerFile)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// errModule is a sentence-transformers module svc does not apply.
var errModule = errors.New("a sentence-transformers module svc does not apply")

// sentenceTransformers reads the pooling and the normalisation from the
// sentence-transformers files in dir (modules.json, its Pooling module's
// config.json, a Normalize module); mean and none without them.
func sentenceTransformers(dir string) (pooling string, normalize bool, from string, err error) {
	pooling, from = config.PoolingMean, "mean pooling by default"
	data, err := os.ReadFile(filepath.Join(dir, "modules.json"))
	if err != nil {
		return pooling, false, from, nil
	}
	var modules []struct {
		Path string `json:"path"`
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &modules); err != nil {
		return pooling, false, from, fmt.Errorf("%s: %w", filepath.Join(dir, "modules.json"), err)
	}
	from = "from modules.json"
	for _, m := range modules {
		switch m.Type {
		case "sentence_transformers.models.Normalize":
			normalize = true
		case "sentence_transformers.models.Transformer":
		case "sentence_transformers.models.Pooling":
			cfg := filepath.Join(dir, m.Path, "config.json")
			p, err := poolingMode(cfg)
			if err != nil {
				return "", false, "", fmt.Errorf("%s: %w", cfg, err)
			}
			pooling, from = p, "from modules.json and "+filepath.Join(m.Path, "config.json")
		default:
			return "", false, "", fmt.Errorf("%w: %s: module '%s' (%s) is not one svc applies (Transformer, Pooling, Normalize): its embeddings would differ", errModule, filepath.Join(dir, "modules.json"), m.Path, m.Type)
		}
	}
	return pooling, normalize, from, nil
}

func poolingMode(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var modes map[string]any
	if err := json.Unmarshal(data, &modes); err != nil {
		return "", err
	}
	served := map[string]string{"pooling_mode_cls_token": config.PoolingCLS, "pooling_mode_mean_tokens": config.PoolingMean, "pooling_mode_max_tokens": config.PoolingMax}
	var on []string
	for k, v := range modes {
		if b, ok := v.(bool); ok && b && strings.HasPrefix(k, "pooling_mode_") {
			on = append(on, k)
		}
	}
	if len(on) != 1 || served[on[0]] == "" {
		slices.Sort(on)
		return "", fmt.Errorf("pooling modes %v: svc serves exactly one of pooling_mode_mean_tokens, pooling_mode_cls_token, pooling_mode_max_tokens", on)
	}
	return served[on[0]], nil
}
