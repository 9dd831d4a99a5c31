package session

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core"

	ort "github.com/yalue/onnxruntime_go"
)

// TestDescribeMatchesRuntime checks the file-based description against
// ONNX Runtime's own view of every test model and every fetched model.
func TestDescribeMatchesRuntime(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	files, _ := filepath.Glob(filepath.Join(root, "testdata", "models", "*.onnx"))
	files = append(files,
		filepath.Join(root, "testdata", "models", "external_data", "model.onnx"),
		filepath.Join(root, "build", "models", "paddleocr-cls", "model.onnx"),
		filepath.Join(root, "build", "models", "paddleocr-det", "model.onnx"),
		filepath.Join(root, "build", "models", "silero-vad", "model.onnx"),
	)
	if len(files) < 12 {
		t.Fatalf("only %d models found", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			if testing.Short() && strings.HasPrefix(f, filepath.Join(root, "build")) {
				t.Skip("-short: a third-party model (make models); the full suite (make test) describes it")
			}
			if _, err := os.Stat(f); err != nil {
				t.Fatalf("%v (run 'make models')", err)
			}
			d, err := describe(f, 0)
			if err != nil {
				t.Fatal(err)
			}
			ins, outs, err := ort.GetInputOutputInfo(f)
			if err != nil {
				t.Fatal(err)
			}
			var required []core.InputSpec
			for _, in := range d.inputs {
				if in.Required {
					required = append(required, in)
				}
			}
			if len(required) != len(ins) {
				t.Fatalf("%d required inputs, ONNX Runtime lists %d", len(required), len(ins))
			}
			for i, in := range ins {
				checkIO(t, in, required[i].Name, required[i].Type, required[i].Shape, required[i].Kind)
			}
			if len(d.outputs) != len(outs) {
				t.Fatalf("%d outputs, ONNX Runtime lists %d", len(d.outputs), len(outs))
			}
			for i, out := range outs {
				checkIO(t, out, d.outputs[i].Name, d.outputs[i].Type, d.outputs[i].Shape, d.outputs[i].Kind)
			}
		})
	}
}

func checkIO(t *testing.T, io ort.InputOutputInfo, name, typ string, shape []int64, kind core.ValueKind) {
	t.Helper()
	if io.Name != name {
		t.Errorf("name %q, ONNX Runtime says %q", name, io.Name)
	}
	switch io.OrtValueType {
	case ort.ONNXTypeTensor:
		if kind != core.KindTensor || dtypeOf(io.DataType).String() != typ {
			t.Errorf("%s: %s %s, ONNX Runtime says tensor of %v", name, kind, typ, io.DataType)
		}
		want := []int64(io.Dimensions)
		if want == nil || shape == nil {
			// ONNX Runtime reports both rank 0 and an unknown rank as [].
			want = []int64{}
		}
		if shape == nil {
			shape = []int64{}
		}
		if !reflect.DeepEqual(shape, want) {
			t.Errorf("%s: shape %v, ONNX Runtime says %v", name, shape, want)
		}
	case ort.ONNXTypeSequence:
		if kind != core.KindSequence {
			t.Errorf("%s: %s, ONNX Runtime says sequence", name, kind)
		}
	case ort.ONNXTypeMap:
		if kind != core.KindMap {
			t.Errorf("%s: %s, ONNX Runtime says map", name, kind)
		}
	default:
		t.Errorf("%s: unexpected ONNX type %v", name, io.OrtValueType)
	}
}
