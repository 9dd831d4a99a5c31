package codec

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/config"
)

// TestPool: mean, cls and max pooling over the tokens the mask keeps, and
// L2 normalisation, on hidden states [3 tokens, 2] with the last masked.
func TestPool(t *testing.T) {
	h := []float32{1, 2, 3, -4, 100, 100}
	mask := []int64{1, 1, 0}
	tests := []struct {
		mode      string
		normalize bool
		want      []float32
	}{
		{config.PoolingMean, false, []float32{2, -1}},
		{config.PoolingCLS, false, []float32{1, 2}},
		{config.PoolingMax, false, []float32{3, 2}},
		{config.PoolingMax, true, []float32{float32(3 / math.Sqrt(13)), float32(2 / math.Sqrt(13))}},
		{config.PoolingMean, true, []float32{float32(2 / math.Sqrt(5)), float32(-1 / math.Sqrt(5))}},
	}
	for _, tt := range tests {
		dst := make([]float32, 2)
		pool(dst, h, mask, tt.mode)
		if tt.normalize {
			normalize(dst)
		}
		for i := range dst {
			if math.Abs(float64(dst[i]-tt.want[i])) > 1e-6 {
				t.Errorf("%s normalize %v: got %v, want %v", tt.mode, tt.normalize, dst, tt.want)
				break
			}
		}
	}
	zero := []float32{0, 0}
	normalize(zero)
	if zero[0] != 0 || zero[1] != 0 {
		t.Errorf("normalize of zero: %v", zero)
	}
}

// TestMaxLength: svc.yml's max_length must fit the positions; else the
// tokenizer's, capped at the positions.
func TestMaxLength(t *testing.T) {
	tests := []struct {
		declared, tokenizer int
		positions           int64
		want                int
		err                 string
	}{
		{0, 48, 128, 48, ""},
		{0, 512, 128, 128, ""},
		{0, 0, 128, 128, ""},
		{0, 0, 0, 0, ""},
		{64, 48, 128, 64, ""},
		{200, 48, 128, 0, "200 tokens, but the model has 128 positions"},
		{200, 0, 0, 200, ""},
	}
	for _, tt := range tests {
		got, err := maxLength(tt.declared, tt.tokenizer, tt.positions)
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("maxLength(%d, %d, %d) = %d, %v; want %d, %q", tt.declared, tt.tokenizer, tt.positions, got, err, tt.want, tt.err)
		}
	}
}

// TestSentenceTransformers reads pooling and normalisation from the files
// and refuses what svc does not apply.
func TestSentenceTransformers(t *testing.T) {
	const (
		transformer = `{"path": "", "type": "sentence_transformers.models.Transformer"}`
		pooling     = `{"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}`
		norm        = `{"path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}`
		dense       = `{"path": "2_Dense", "type": "sentence_transformers.models.Dense"}`
	)
	tests := []struct {
		name, modules, pooling string
		want                   string
		normalize              bool
		err                    string
	}{
		{"no files", "", "", config.PoolingMean, false, ""},
		{"mean and normalize", "[" + transformer + "," + pooling + "," + norm + "]", `{"pooling_mode_mean_tokens": true, "pooling_mode_cls_token": false}`, config.PoolingMean, true, ""},
		{"cls", "[" + transformer + "," + pooling + "]", `{"pooling_mode_cls_token": true, "word_embedding_dimension": 32}`, config.PoolingCLS, false, ""},
		{"max", "[" + pooling + "]", `{"pooling_mode_max_tokens": true}`, config.PoolingMax, false, ""},
		{"two modes", "[" + pooling + "]", `{"pooling_mode_max_tokens": true, "pooling_mode_mean_tokens": true}`, "", false, "pooling modes [pooling_mode_max_tokens pooling_mode_mean_tokens]"},
		{"lasttoken", "[" + pooling + "]", `{"pooling_mode_lasttoken": true}`, "", false, "pooling modes [pooling_mode_lasttoken]"},
		{"dense", "[" + transformer + "," + pooling + "," + dense + "]", `{"pooling_mode_mean_tokens": true}`, "", false, "module '2_Dense'"},
		{"broken modules.json", "{", "", "", false, "modules.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.modules != "" {
				write(t, filepath.Join(dir, "modules.json"), tt.modules)
			}
			if tt.pooling != "" {
				write(t, filepath.Join(dir, "1_Pooling", "config.json"), tt.pooling)
			}
			p, n, _, err := sentenceTransformers(dir)
			if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error %v, want %q", err, tt.err)
			}
			if err == nil && (p != tt.want || n != tt.normalize) {
				t.Fatalf("got %s normalize %v, want %s %v", p, n, tt.want, tt.normalize)
			}
		})
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
