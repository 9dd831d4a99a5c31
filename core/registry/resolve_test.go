package registry

import (
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/config"
)

// TestResolvePipelineRefused: a svc.yml entry that is a pipeline is not
// served as a model file; the refusal names the entry's key.
func TestResolvePipelineRefused(t *testing.T) {
	cfg := config.Default()
	cfg.File = "/etc/svc/svc.yml"
	cfg.Models = map[string]config.Model{
		"ocr": {Pipeline: &config.Pipeline{Kind: "ocr", Detect: &config.DetectStage{Model: "det"}, Recognize: &config.RecognizeStage{Model: "rec"}}},
	}
	_, err := Resolve("ocr", cfg, nil)
	want := `model "ocr" from /etc/svc/svc.yml is a pipeline (models.ocr.pipeline): it is served as one model by svc serve, and this command takes one model file`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want one containing %q", err, want)
	}
}
