package pipeline

import (
	"testing"

	"github.com/svc-dev/svc/core/codec/page"
	"github.com/svc-dev/svc/core/config"
)

func f(v float64) *float64 { return &v }

// TestOCRFromConfig: svc.yml's keys land on the settings, PaddleOCR's
// defaults fill what it leaves out.
func TestOCRFromConfig(t *testing.T) {
	cases := []struct {
		name string
		p    config.Pipeline
		want OCRSettings
	}{
		{"defaults, no classifier", config.Pipeline{Kind: "ocr", Detect: &config.DetectStage{Model: "det"}, Recognize: &config.RecognizeStage{Model: "rec"}},
			func() OCRSettings { s := DefaultOCR; s.Classify = false; return s }()},
		{"classifier", config.Pipeline{Kind: "ocr", Detect: &config.DetectStage{Model: "det"}, Classify: &config.ClassifyStage{Model: "cls"}, Recognize: &config.RecognizeStage{Model: "rec"}},
			DefaultOCR},
		{"every key", config.Pipeline{Kind: "ocr",
			Detect: &config.DetectStage{Model: "det", LimitSideLen: 1280, LimitType: "min", Thresh: f(0.2), BoxThresh: f(0.5),
				UnclipRatio: f(2), MaxCandidates: 50, Dilation: true},
			Classify:  &config.ClassifyStage{Model: "cls", Thresh: f(0.95), Off: true},
			Recognize: &config.RecognizeStage{Model: "rec", Batch: 8, TextScore: f(0.3)}},
			func() OCRSettings {
				s := DefaultOCR
				s.LimitSideLen, s.LimitType = 1280, page.LimitMin
				s.DB = page.DB{Thresh: 0.2, BoxThresh: 0.5, UnclipRatio: 2, MaxCandidates: 50, MinSize: 3, Dilate: true}
				s.ClsThresh, s.Classify, s.RecBatch, s.TextScore = 0.95, false, 8, 0.3
				return s
			}()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := OCRFromConfig(&c.p); got != c.want {
				t.Fatalf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestOCRWith: a request's overrides, and each bad one refused naming
// its parameter.
func TestOCRWith(t *testing.T) {
	cases := []struct {
		params  map[string]string
		want    func(*OCRSettings)
		wantErr string
	}{
		{map[string]string{}, func(*OCRSettings) {}, ""},
		{map[string]string{"box_thresh": "0.4", "unclip_ratio": "2.5", "text_score": "0", "classify": "false", "other": "x"},
			func(s *OCRSettings) { s.DB.BoxThresh, s.DB.UnclipRatio, s.TextScore, s.Classify = 0.4, 2.5, 0, false }, ""},
		{map[string]string{"box_thresh": "high"}, nil, `parameter box_thresh: "high" is not a number within 0-1`},
		{map[string]string{"box_thresh": "1.01"}, nil, `parameter box_thresh: "1.01" is not a number within 0-1`},
		{map[string]string{"text_score": "NaN"}, nil, `parameter text_score: "NaN" is not a number within 0-1`},
		{map[string]string{"text_score": "-0.1"}, nil, `parameter text_score: "-0.1" is not a number within 0-1`},
		{map[string]string{"unclip_ratio": "0"}, nil, `parameter unclip_ratio: "0" is not a number over 0 and at most 10`},
		{map[string]string{"unclip_ratio": "NaN"}, nil, `parameter unclip_ratio: "NaN" is not a number over 0 and at most 10`},
		{map[string]string{"classify": "maybe"}, nil, `parameter classify: "maybe" is not true or false`},
	}
	for _, c := range cases {
		got, err := DefaultOCR.With(c.params)
		if c.wantErr != "" {
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("%v: error %v, want %q", c.params, err, c.wantErr)
			}
			continue
		}
		want := DefaultOCR
		c.want(&want)
		if err != nil || got != want {
			t.Errorf("%v: %+v %v, want %+v", c.params, got, err, want)
		}
	}
}
