package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const pipelineModels = `
models:
  det: {path: det.onnx}
  cls: {path: cls.onnx}
  rec:
    path: rec.onnx
    outputs:
      y: {ctc: {labels: [a, b]}}
`

// TestPipelineEntry loads svc.yml files with a page reader entry: a good
// one, and each mistake refused at its key.
func TestPipelineEntry(t *testing.T) {
	cases := []struct {
		name, entry, want string // want: "" loads, else the refusal's tail
	}{
		{"full", `{kind: ocr, detect: {model: det, limit_side_len: 1280, limit_type: min, thresh: 0.3, box_thresh: 0.5, unclip_ratio: 2, max_candidates: 500, dilation: true}, classify: {model: cls, thresh: 0.95, off: true}, recognize: {model: rec, batch: 8, text_score: 0.4}}`, ""},
		{"no classifier", `{kind: ocr, detect: {model: det}, recognize: {model: rec}}`, ""},
		{"kind", `{kind: vqa, detect: {model: det}, recognize: {model: rec}}`, `models.ocr.pipeline.kind must be one of [ocr]; got "vqa"`},
		{"no detect", `{kind: ocr, recognize: {model: rec}}`, "models.ocr.pipeline.detect is required: the text detector"},
		{"no recognize", `{kind: ocr, detect: {model: det}}`, "models.ocr.pipeline.recognize is required: the recogniser"},
		{"detect names nothing", `{kind: ocr, detect: {}, recognize: {model: rec}}`, "models.ocr.pipeline.detect.model is required: the name of a model of this file"},
		{"missing model", `{kind: ocr, detect: {model: dbnet}, recognize: {model: rec}}`, `models.ocr.pipeline.detect.model names "dbnet", which is no model of this file`},
		{"itself", `{kind: ocr, detect: {model: det}, classify: {model: ocr}, recognize: {model: rec}}`, "models.ocr.pipeline.classify.model names the pipeline itself"},
		{"rec without ctc", `{kind: ocr, detect: {model: det}, recognize: {model: cls}}`, `models.ocr.pipeline.recognize.model names "cls", which declares no ctc output`},
		{"limit type", `{kind: ocr, detect: {model: det, limit_type: long}, recognize: {model: rec}}`, `models.ocr.pipeline.detect.limit_type must be one of max, min, resize_long; got "long"`},
		{"box thresh", `{kind: ocr, detect: {model: det, box_thresh: 1.5}, recognize: {model: rec}}`, "models.ocr.pipeline.detect.box_thresh must be within 0-1"},
		{"unclip", `{kind: ocr, detect: {model: det, unclip_ratio: 0}, recognize: {model: rec}}`, "models.ocr.pipeline.detect.unclip_ratio must be positive"},
		{"unclip nan", `{kind: ocr, detect: {model: det, unclip_ratio: .nan}, recognize: {model: rec}}`, "models.ocr.pipeline.detect.unclip_ratio must be positive"},
		{"cls thresh", `{kind: ocr, detect: {model: det}, classify: {model: cls, thresh: -1}, recognize: {model: rec}}`, "models.ocr.pipeline.classify.thresh must be within 0-1"},
		{"batch", `{kind: ocr, detect: {model: det}, recognize: {model: rec, batch: -2}}`, "models.ocr.pipeline.recognize.batch cannot be negative (0: 1)"},
		{"text score", `{kind: ocr, detect: {model: det}, recognize: {model: rec, text_score: 2}}`, "models.ocr.pipeline.recognize.text_score must be within 0-1"},
		{"unknown key", `{kind: ocr, detect: {model: det, thres: 0.3}, recognize: {model: rec}}`, "field thres not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "svc.yml")
			if err := os.WriteFile(p, []byte(pipelineModels+"  ocr:\n    pipeline: "+c.entry+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(p, true)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Models["ocr"].Pipeline.Recognize.Model != "rec" {
					t.Fatalf("pipeline %+v", cfg.Models["ocr"].Pipeline)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	t.Run("path beside pipeline", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "svc.yml")
		entry := "  ocr:\n    path: x.onnx\n    pipeline: {kind: ocr, detect: {model: det}, recognize: {model: rec}}\n"
		if err := os.WriteFile(p, []byte(pipelineModels+entry), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(p, true); err == nil || !strings.Contains(err.Error(), "models.ocr.path is set beside pipeline") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("stage is a pipeline", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "svc.yml")
		entry := "  ocr:\n    pipeline: {kind: ocr, detect: {model: det}, recognize: {model: rec}}\n" +
			"  ocr2:\n    pipeline: {kind: ocr, detect: {model: ocr}, recognize: {model: rec}}\n"
		if err := os.WriteFile(p, []byte(pipelineModels+entry), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(p, true); err == nil || !strings.Contains(err.Error(), `models.ocr2.pipeline.detect.model names "ocr", a pipeline: a stage is one model`) {
			t.Fatalf("error %v", err)
		}
	})
}
