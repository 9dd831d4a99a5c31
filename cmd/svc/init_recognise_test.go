package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
)

func modelInfo(inName string, inShape []int64, outs [][]int64, meta map[string]string) core.ModelInfo {
	info := core.ModelInfo{Metadata: meta, Inputs: []core.InputSpec{{Name: inName, Type: "float32", Shape: inShape, Required: true, Kind: core.KindTensor}}}
	for i, s := range outs {
		info.Outputs = append(info.Outputs, core.OutputSpec{Name: []string{"out", "out2"}[i], Type: "float32", Shape: s, Kind: core.KindTensor})
	}
	return info
}

// TestInitRecognise checks which models svc init recognises.
func TestInitRecognise(t *testing.T) {
	t.Parallel()
	n := int64(-1)
	names := map[string]string{"names": "{0: 'person', 1: 'bicycle'}"}
	tests := []struct {
		name   string
		info   core.ModelInfo
		preset string // "" for none
	}{
		{"paddleocr cls (fixed)", modelInfo("x", []int64{n, 3, 48, 192}, [][]int64{{n, 2}}, nil), "paddleocr-cls"},
		{"paddleocr cls (as exported)", modelInfo("x", []int64{n, 3, n, n}, [][]int64{{n, 2}}, nil), "paddleocr-cls"},
		{"paddleocr rec", modelInfo("x", []int64{n, 3, 48, n}, [][]int64{{n, n, 6625}}, nil), "paddleocr-rec"},
		{"paddleocr rec, dynamic classes", modelInfo("x", []int64{n, 3, 48, n}, [][]int64{{n, n, n}}, nil), "paddleocr-rec"},
		{"imagenet", modelInfo("data", []int64{n, 3, 224, 224}, [][]int64{{n, 1000}}, nil), "imagenet"},
		{"imagenet, batch 1", modelInfo("input", []int64{1, 3, 224, 224}, [][]int64{{1, 1000}}, nil), "imagenet"},
		{"yolo", modelInfo("images", []int64{1, 3, 640, 640}, [][]int64{{1, 84, 8400}}, names), "yolo"},
		{"yolo with its task", modelInfo("images", []int64{1, 3, 640, 640}, [][]int64{{1, 84, 8400}}, map[string]string{"names": names["names"], "task": "detect", "imgsz": "[640, 640]"}), "yolo"},
		{"yolo-seg at 320", modelInfo("images", []int64{1, 3, 320, 320}, [][]int64{{1, 38, 2100}, {1, 32, 80, 80}}, map[string]string{"names": names["names"], "task": "segment"}), "yolo"},
		{"yolo without names", modelInfo("images", []int64{1, 3, 640, 640}, [][]int64{{1, 84, 8400}}, nil), ""},
		{"rec with few classes", modelInfo("x", []int64{n, 3, 48, n}, [][]int64{{n, n, 37}}, nil), ""},
		{"cls with 3 classes", modelInfo("x", []int64{n, 3, 48, 192}, [][]int64{{n, 3}}, nil), ""},
		{"imagenet with two outputs", modelInfo("data", []int64{n, 3, 224, 224}, [][]int64{{n, 1000}, {n, 1000}}, nil), ""},
		{"nhwc 224", modelInfo("data", []int64{n, 224, 224, 3}, [][]int64{{n, 1000}}, nil), ""},
		{"1001 classes", modelInfo("data", []int64{n, 3, 224, 224}, [][]int64{{n, 1001}}, nil), ""},
		{"iris", modelInfo("input", []int64{n, 4}, [][]int64{{n, 3}}, nil), ""},
		{"no outputs", core.ModelInfo{Inputs: []core.InputSpec{{Name: "x", Type: "float32", Shape: []int64{n, 3, 48, 192}}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := recognise(tt.info)
			got := ""
			if r != nil {
				got = r.Preset
			}
			if got != tt.preset {
				t.Fatalf("recognise = %q, want %q", got, tt.preset)
			}
			checkEntryLoads(t, tt.info, r)
		})
	}
}

// checkEntryLoads writes the starter file with the model's entry and
// loads it as svc would.
func checkEntryLoads(t *testing.T, info core.ModelInfo, r *recognition) {
	t.Helper()
	dir := t.TempDir()
	entry := modelEntry("m", "model.onnx", info)
	p := filepath.Join(dir, "svc.yml")
	if err := os.WriteFile(p, []byte(config.StarterWith(entry)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(p, true)
	if err != nil {
		t.Fatalf("load:\n%s\n%v", entry, err)
	}
	m := cfg.Models["m"]
	if m.Path == "" {
		t.Fatalf("no model path in\n%s", entry)
	}
	if r == nil {
		if len(m.Inputs) != 0 || len(m.Outputs) != 0 || strings.Contains(entry, "#") {
			t.Fatalf("an unrecognised model got\n%s", entry)
		}
		return
	}
	img := m.Inputs[r.Input].Image
	if img == nil || img.Preset != r.Preset {
		t.Fatalf("input %s: %+v in\n%s", r.Input, img, entry)
	}
	o := m.Outputs[r.Output]
	switch r.Preset {
	case "paddleocr-cls":
		if o.Classify == nil || strings.Join(o.Classify.Labels.List, ",") != "0,180" || o.Classify.TopK != 1 {
			t.Fatalf("output: %+v in\n%s", o, entry)
		}
	case "imagenet":
		if o.Classify == nil || o.Classify.TopK != 5 {
			t.Fatalf("output: %+v in\n%s", o, entry)
		}
	case "paddleocr-rec":
		if len(m.Outputs) != 0 || !strings.Contains(entry, "#     ctc: {labels: ppocr_keys_v1.txt}") {
			t.Fatalf("want the ctc output commented, got\n%s", entry)
		}
	case "yolo":
		checkYOLOEntry(t, entry, r, m)
	}
}

func TestInitEntryName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"build/models/paddleocr-cls":            "paddleocr-cls",
		"build/models/paddleocr-cls/model.onnx": "paddleocr-cls",
		"resnet50 v2.onnx":                      "resnet50-v2",
		"/tmp/x/Model.ONNX":                     "x",
		"###.onnx":                              "model",
	} {
		if got := entryName(in); got != want {
			t.Errorf("entryName(%q) = %q, want %q", in, got, want)
		}
	}
}

// checkYOLOEntry checks a yolo model's entry: its output decoded as its
// task says, at its size; raw, said so, when it does not say its task.
func checkYOLOEntry(t *testing.T, entry string, r *recognition, m config.Model) {
	t.Helper()
	if r.Task == "" {
		if len(m.Outputs) != 0 || !strings.Contains(entry, "outputs stay raw") {
			t.Fatalf("want raw outputs, said so, got\n%s", entry)
		}
		return
	}
	d, kind := m.Outputs[r.Output].Detection()
	if d == nil || kind != r.Task || len(m.Outputs) != 1 {
		t.Fatalf("want output %s decoded as %s, got\n%s", r.Output, r.Task, entry)
	}
	if size := m.Inputs[r.Input].Image.Size; r.Size != [2]int{640, 640} && (len(size) != 2 || size[0] != r.Size[0] || size[1] != r.Size[1]) {
		t.Fatalf("want size %v, got %v in\n%s", r.Size, size, entry)
	}
}
