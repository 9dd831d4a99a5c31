// Command genmodels writes the small ONNX models used by svc's tests (into
// testdata/models) and the demo model (examples/demo/model.onnx). Its
// output is deterministic: run it from the repository root after changing
// a model, and commit the result.
//
//	go run ./cmd/genmodels [-out testdata/models] [-demo examples/demo/model.onnx]
//
// With -yolov8n PATH it writes only YOLOv8n's graph with random weights
// (yolov8n), too large to commit, for the detection benchmark.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/svc-dev/svc/core/onnxpb"
)

func main() {
	outDir := flag.String("out", "testdata/models", "directory to write the test models into")
	demo := flag.String("demo", "examples/demo/model.onnx", "path of the demo model")
	yolo := flag.String("yolov8n", "", "write only YOLOv8n with random weights, to this path")
	flag.Parse()
	var err error
	if *yolo != "" {
		var data []byte
		if data, err = onnxpb.Marshal(yolov8n()); err == nil {
			err = writeFile(*yolo, data)
		}
	} else {
		err = generate(*outDir, *demo)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genmodels:", err)
		os.Exit(1)
	}
}

// generate writes every test model under outDir and the demo model to
// demoPath, creating directories as needed.
func generate(outDir, demoPath string) error {
	files, err := testModels()
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := writeFile(filepath.Join(outDir, filepath.FromSlash(f.path)), f.data); err != nil {
			return err
		}
	}
	data, err := demoModel()
	if err != nil {
		return err
	}
	return writeFile(demoPath, data)
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
