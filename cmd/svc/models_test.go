package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// TestGeneratedModels serves every generated test model through the real
// binary and checks each answer byte for byte.
func TestGeneratedModels(t *testing.T) {
	t.Parallel()
	sequential(t)
	fixedImage := `[[` + strings.TrimSuffix(strings.Repeat(`[[1,1,1,1],[1,1,1,1],[3,3,3,3],[3,3,3,3]],`, 3), ",") + `]]`
	tests := []struct {
		model string
		body  string
		want  string
	}{
		{"classifier.onnx", `{"input": [[5.1, 3.5, 1.4, 0.2]]}`, `{"probabilities":[[0.8856464,0.09813241,0.01622118]],"label":[0]}`},
		{"external_data", `{"input": [[5.1, 3.5, 1.4, 0.2]]}`, `{"probabilities":[[0.8856464,0.09813241,0.01622118]],"label":[0]}`},
		{"hf_layout", `{"input": [[5.1, 3.5, 1.4, 0.2]]}`, `{"probabilities":[[0.8856464,0.09813241,0.01622118]],"label":[0]}`},
		{"multi_input.onnx",
			`{"features": [[1, 2.5, -3], [0, 0, 1]], "ids": [[4, 5], [-1, 1]], "mask": [[true, false], [false, false]], "text": ["grüße", "ok"]}`,
			`{"weighted":[[2,5,-6],[0,0,2]],"id_sum":[9,0],"mask_not":[[false,true],[true,true]],"text_upper":["GRÜßE","OK"]}`},
		{"scalar.onnx", `{"x": 3, "scale": 2}`, `{"y":[6.5]}`},
		{"scalar.onnx", `{"x": 3, "scale": [2], "bias": [-1]}`, `{"y":[5]}`},
		{"float16.onnx", `{"x": [[1, 0.5, -2, 65504]]}`, `{"y":[[2,1,-4,null]],"y32":[[2,1,-4,null]]}`},
		{"fixed_shape.onnx", `{"image": ` + fixedImage + `}`, `{"mean":[[2,2,2]]}`},
		{"zipmap.onnx", `{"input": [[0, 0, 0], [0, 10, 0]]}`, ""},
		{"failing.onnx", `{"x": [1, 2, 3, 4, 5, 6]}`, `{"y":[[1,2,3],[4,5,6]]}`},
		{"alltypes.onnx",
			`{"f64":[1,0,-1],"i8":[-128,127,0],"i16":[-32768,32767,1],"i32":[-2147483648,2147483647,2],"u8":[0,255,3],"u16":[0,65535,4],"u32":[0,4294967295,5],"u64":[0,18446744073709551615,9007199254740993]}`,
			`{"f64_out":[1,0,-1],"i8_out":[-128,127,0],"i16_out":[-32768,32767,1],"i32_out":[-2147483648,2147483647,2],"u8_out":[0,255,3],"u16_out":[0,65535,4],"u32_out":[0,4294967295,5],"u64_out":[0,18446744073709551615,9007199254740993],"f64_log":[0,null,null]}`},
		{"slow.onnx", `{"x": [[` + strings.TrimSuffix(strings.Repeat("0,", 256), ",") + `]]}`, `{"y":[[` + strings.TrimSuffix(strings.Repeat("0,", 256), ",") + `]]}`},
	}
	// Servers belong to the parent test so that they outlive subtests.
	servers := map[string]*server{}
	for _, tt := range tests {
		if servers[tt.model] == nil {
			servers[tt.model] = startServer(t, model(tt.model))
		}
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			s := servers[tt.model]
			r := s.predict(tt.body)
			if r.Status != 200 || r.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("predict = %d %q %s", r.Status, r.Header.Get("Content-Type"), r.Body)
			}
			if tt.model == "zipmap.onnx" {
				checkZipMap(t, r.Body)
				return
			}
			if string(r.Body) != tt.want {
				t.Fatalf("got  %s\nwant %s", r.Body, tt.want)
			}
		})
	}
}

// checkZipMap: sequence-of-map outputs come back as arrays of objects.
func checkZipMap(t *testing.T, body []byte) {
	t.Helper()
	var out struct {
		Label         []int                `json:"label"`
		Probabilities []map[string]float64 `json:"probabilities"`
		ScoresByID    []map[string]float64 `json:"scores_by_id"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if !reflect.DeepEqual(out.Label, []int{0, 1}) || len(out.Probabilities) != 2 || len(out.ScoresByID) != 2 {
		t.Fatalf("zipmap: %s", body)
	}
	for i, m := range out.Probabilities {
		if len(m) != 3 || m["cat"]+m["dog"]+m["bird"] < 0.999 {
			t.Errorf("row %d: %v", i, m)
		}
		if m["dog"] != out.ScoresByID[i]["20"] {
			t.Errorf("row %d: dog %v vs id 20 %v", i, m["dog"], out.ScoresByID[i]["20"])
		}
	}
	if out.Probabilities[1]["dog"] < 0.99 {
		t.Errorf("row 1 should be a confident dog: %v", out.Probabilities[1])
	}
}

// TestGeneratedModelInfo checks /info for the models with special inputs.
func TestGeneratedModelInfo(t *testing.T) {
	t.Parallel()
	s := startServer(t, model("scalar.onnx"))
	var info struct {
		Inputs []map[string]any `json:"inputs"`
	}
	if err := json.Unmarshal(s.get("/info").Body, &info); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"name": "x", "type": "float32", "shape": []any{}, "required": true, "description": "a scalar"},
		{"name": "scale", "type": "float32", "shape": []any{float64(1)}, "required": true},
		{"name": "bias", "type": "float32", "shape": []any{float64(1)}, "required": false, "description": "optional, defaults to 0.5"},
	}
	if !reflect.DeepEqual(info.Inputs, want) {
		t.Fatalf("inputs = %v", info.Inputs)
	}

	z := startServer(t, model("zipmap.onnx"))
	var zi struct {
		Outputs []map[string]any `json:"outputs"`
	}
	if err := json.Unmarshal(z.get("/info").Body, &zi); err != nil {
		t.Fatal(err)
	}
	if zi.Outputs[1]["type"] != "seq(map(string,float32))" || zi.Outputs[2]["type"] != "seq(map(int64,float32))" {
		t.Fatalf("outputs = %v", zi.Outputs)
	}
	if _, ok := zi.Outputs[1]["shape"]; ok {
		t.Fatalf("a sequence output has a shape: %v", zi.Outputs[1])
	}
}

// TestBatchedServing sends concurrent requests to servers with batching on
// (the default) and off; every answer equals the answer to the same request
// sent alone.
func TestBatchedServing(t *testing.T) {
	t.Parallel()
	off := filepath.Join(t.TempDir(), "off.yml")
	if err := os.WriteFile(off, []byte("batching:\n  enabled: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	on := startServer(t, model("slow.onnx"), "--verbose")
	plain := startServer(t, model("slow.onnx"), "-c", off)
	bodies := make([]string, 24)
	want := make([]string, len(bodies))
	for i := range bodies {
		bodies[i] = `{"x": [[` + strings.TrimSuffix(strings.Repeat(fmt.Sprintf("0.%02d,", i), 256), ",") + `]]}`
		want[i] = string(plain.predict(bodies[i]).Body)
	}
	for _, s := range []*server{on, plain} {
		got := make([]string, len(bodies))
		var wg sync.WaitGroup
		for i := range bodies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i] = string(s.predict(bodies[i]).Body)
			}()
		}
		wg.Wait()
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("request %d: concurrent answer differs from the answer alone", i)
			}
		}
	}
	if !strings.Contains(on.stderr.String(), "dynamic batching on") {
		t.Errorf("batching not reported on:\n%s", on.stderr)
	}
}
