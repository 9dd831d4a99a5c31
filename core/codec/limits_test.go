package codec

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/ci/hostile"
	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
)

// TestPictureLimits: a request's pictures are counted, their pixels
// summed and their memory reserved before any is decoded; what is over
// a limit is a *core.LimitError naming its key (a 413).
func TestPictureLimits(t *testing.T) {
	gif := hostile.GIF1x1()
	many := func(n int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = gif
		}
		return out
	}
	decl := config.Model{Inputs: map[string]config.ModelInput{"x": {Image: &config.ImageInput{Preset: "paddleocr-cls"}}}}
	tests := []struct {
		name     string
		lim      config.Limits
		memory   int64
		pictures [][]byte
		// key is the limit refused by ("": taken); msg a part of its
		// message.
		key, msg string
	}{
		{"within", config.Limits{MaxImages: 4, MaxRequestPixels: 100}, 1 << 30, many(4), "", ""},
		{"one picture too many", config.Limits{MaxImages: 4}, 1 << 30, many(5), "limits.max_images", "Input 'x': 5 pictures, more than the 4 one request may send (limits.max_images)"},
		{"260,000 pictures", config.Limits{MaxImages: 64}, 1 << 30, many(260_000), "limits.max_images", "260000 pictures"},
		{"too many pixels together", config.Limits{MaxRequestPixels: 3 * 64 * 64}, 1 << 30, [][]byte{tinyPNG(t, 64, 64), tinyPNG(t, 64, 64), tinyPNG(t, 64, 65), tinyPNG(t, 1, 1)}, "limits.max_request_pixels", "pictures of 12353 pixels together, more than the 12288"},
		// 64 items of 3×48×192 float32 are 7 MiB.
		{"more memory than the budget", config.Limits{}, 4 << 20, many(64), budget.KeySize, "to decode its pictures, more than the 4 MiB that requests may hold at once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := New(decl, tt.lim).For(fakeRunner{})
			if err != nil {
				t.Fatal(err)
			}
			m := budget.New(tt.memory, time.Minute)
			ctx, end := m.Begin(context.Background())
			defer end()
			ts, err := set.Tensors(ctx, []Pictures{{Input: set.Image("x"), Data: tt.pictures}})
			if tt.key == "" {
				if err != nil || ts[0].Shape[0] != int64(len(tt.pictures)) {
					t.Fatalf("tensors %v, %v", ts, err)
				}
				if held := m.Stats().InUse; held < int64(len(tt.pictures))*3*48*192*4 {
					t.Errorf("%d bytes reserved, want at least the tensor's", held)
				}
				return
			}
			var le *core.LimitError
			if !errors.As(err, &le) || le.Key != tt.key || !strings.Contains(le.Message, tt.msg) {
				t.Fatalf("got %v, want a LimitError of %s holding %q", err, tt.key, tt.msg)
			}
			if held := m.Stats().InUse; held != 0 {
				t.Errorf("%d bytes held by a refused request", held)
			}
		})
	}
}

// TestPicturesStopWithTheRequest: pictures of a request that ended are
// not decoded: core.ErrCanceled with the request's cause.
func TestPicturesStopWithTheRequest(t *testing.T) {
	decl := config.Model{Inputs: map[string]config.ModelInput{"x": {Image: &config.ImageInput{Preset: "paddleocr-cls"}}}}
	set, err := New(decl, config.Limits{}).For(fakeRunner{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), 0, &core.TimeoutError{After: time.Second, Requested: true})
	defer cancel()
	_, err = set.Tensor(ctx, set.Image("x"), [][]byte{tinyPNG(t, 20, 10)}, true)
	var te *core.TimeoutError
	if !errors.Is(err, core.ErrCanceled) || !errors.As(err, &te) {
		t.Errorf("got %v, want ErrCanceled with the request's TimeoutError", err)
	}
}

// TestTextLimits: a request's texts are counted before any is
// tokenized, and the tokenizing stops at the text that takes the
// request's tokens, summed, past limits.max_tokens; a raw answer's one
// run must fit text.max_batch_tokens.
func TestTextLimits(t *testing.T) {
	tok := filepath.Join("tokenizer", "testdata", "fixtures", "bert-uncased.json")
	specs := []tensor.Spec{{Name: "input_ids", DType: tensor.Int64, Shape: []int64{-1, -1}, Required: true}}
	info := core.ModelInfo{Outputs: []core.OutputSpec{{Name: "last_hidden_state", Type: "float32", Shape: []int64{-1, -1, 32}, Kind: core.KindTensor}}}
	x, err := buildText(&config.Text{Tokenizer: tok, MaxBatchTokens: 100}, "", specs, info)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("hello ", 60)
	many := func(n int, last string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "a"
		}
		out[n-1] = last
		return out
	}
	tests := []struct {
		name     string
		lim      config.Limits
		texts    []string
		single   bool
		key, msg string
	}{
		{"within", config.Limits{MaxTexts: 3, MaxTokens: 4 + 3 + 3}, []string{"hello world", "a", "b"}, false, "", ""},
		{"one text too many", config.Limits{MaxTexts: 3}, many(4, "a"), false, "limits.max_texts", "Input 'text': 4 texts, more than the 3 one request may send (limits.max_texts)"},
		{"summed past the tokens", config.Limits{MaxTokens: 16384}, many(100_000, long), false, "limits.max_tokens", "Input 'text': the texts up to item 5461 are 16386 tokens, more than the 16384 one request may send (limits.max_tokens)"},
		{"a long one among short ones", config.Limits{MaxTokens: 100}, many(20, long), false, "limits.max_tokens", "the texts up to item 19 are 105 tokens, more than the 100"},
		{"one text too long", config.Limits{MaxTokens: 10}, []string{long}, true, "limits.max_tokens", "Input 'text': 48 tokens, more than the 10 one request may send (limits.max_tokens)"},
		{"a raw run past a batch", config.Limits{}, many(3, long), false, "text.max_batch_tokens", "Input 'text': 3 texts padded to 48 tokens are 144 tokens, more than one run of the model takes (100, text.max_batch_tokens)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x.lim = tt.lim
			if tt.key == "limits.max_tokens" {
				_, err := x.Tokenize(context.Background(), TextInput{Texts: tt.texts, Single: tt.single})
				var le *core.LimitError
				if !errors.As(err, &le) || le.Key != tt.key || !strings.Contains(le.Message, tt.msg) {
					t.Fatalf("got %v, want a LimitError of %s holding %q", err, tt.key, tt.msg)
				}
				return
			}
			b, err := x.Encode(context.Background(), tt.texts, nil, tt.single)
			if tt.key == "" {
				if err != nil || b.n != len(tt.texts) {
					t.Fatalf("batch %v, %v", b, err)
				}
				return
			}
			var le *core.LimitError
			if !errors.As(err, &le) || le.Key != tt.key || !strings.Contains(le.Message, tt.msg) {
				t.Fatalf("got %v, want a LimitError of %s holding %q", err, tt.key, tt.msg)
			}
		})
	}
	x.lim = config.Limits{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := x.Encode(ctx, []string{"a"}, nil, true); !errors.Is(err, core.ErrCanceled) {
		t.Errorf("a request that ended: %v, want core.ErrCanceled", err)
	}
}
