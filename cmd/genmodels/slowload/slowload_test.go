package slowload

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/core/onnxpb"
	"github.com/svc-dev/svc/core/onnxrt"
)

func TestMain(m *testing.M) {
	dir := os.Getenv("ONNXRUNTIME_TEST_LIB")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "build", "lib", runtime.GOOS+"-"+runtime.GOARCH)
	}
	env, err := onnxrt.Load(onnxrt.Search{EnvValue: filepath.Join(dir, "libonnxruntime.so.1")}, false)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%v (run 'make lib')\n", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Close()
	os.Exit(code)
}

// maxFile keeps the model a small file.
const maxFile = 4 << 10

// TestModel writes the model and reads it back: a small file whose output
// is x plus a constant computed from initializers alone, through a
// Side×Side matrix product, which ONNX Runtime folds while it creates a
// session.
func TestModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "slow.onnx")
	if err := Write(path); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > maxFile {
		t.Errorf("model file is %d bytes, want at most %d", st.Size(), maxFile)
	}
	m, err := onnxpb.ReadFile(path)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	var ops []string
	for _, n := range m.Graph.Nodes {
		ops = append(ops, n.OpType)
	}
	if want := []string{"Expand", "MatMul", "ReduceMax", "Div", "Add"}; !slices.Equal(ops, want) {
		t.Fatalf("nodes %v, want %v", ops, want)
	}
	values := map[string]any{}
	for _, in := range m.Graph.Initializers {
		if values[in.Name], err = in.Values(); err != nil {
			t.Fatal(err)
		}
	}
	// The product's operand is Expand(one, shape): Side×Side ones, from
	// initializers only; the input x enters at the Add alone.
	if got := values["shape"]; !reflect.DeepEqual(got, []int64{Side, Side}) {
		t.Errorf("shape = %v, want [%d %d]", got, Side, Side)
	}
	for _, n := range m.Graph.Nodes[:4] {
		for _, in := range n.Inputs {
			if in == "x" {
				t.Errorf("%s takes x: the constant would not be folded", n.OpType)
			}
		}
	}
}

// TestSessionFoldsTheProduct creates a session as svc does by default
// (graph optimization "all", no spinning) and has ONNX Runtime write the
// model it runs: the product is folded away at creation, leaving one Add of
// x and 1, and runs compute x + 1. How long creation took is logged, not
// asserted: it is all the folding, and depends on the machine.
func TestSessionFoldsTheProduct(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: creating the session multiplies two 4608×4608 matrices (seconds of CPU); the full suite (make test) runs it")
	}
	dir := t.TempDir()
	path, optimized := filepath.Join(dir, "slow.onnx"), filepath.Join(dir, "optimized.onnx")
	if err := Write(path); err != nil {
		t.Fatal(err)
	}
	so, err := ort.NewSessionOptions()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = so.Destroy() }()
	if err := so.SetGraphOptimizationLevel(ort.GraphOptimizationLevelEnableAll); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"session.intra_op.allow_spinning", "session.inter_op.allow_spinning"} {
		if err := so.AddSessionConfigEntry(key, "0"); err != nil {
			t.Fatal(err)
		}
	}
	if err := so.SetOptimizedModelFilePath(optimized); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s, err := ort.NewDynamicAdvancedSession(path, []string{"x"}, []string{"y"}, so)
	if err != nil {
		t.Fatalf("create session: %v", err)
	}
	defer func() { _ = s.Destroy() }()
	t.Logf("session created in %v", time.Since(start).Round(time.Millisecond))

	m, err := onnxpb.ReadFile(optimized)
	if err != nil {
		t.Fatalf("read the optimized model: %v", err)
	}
	if n := len(m.Graph.Nodes); n != 1 || m.Graph.Nodes[0].OpType != "Add" || m.Graph.Nodes[0].Inputs[0] != "x" {
		t.Fatalf("optimized model runs %d nodes (%v), want one Add of x and the folded constant", n, m.Graph.Nodes)
	}
	k := m.Graph.Nodes[0].Inputs[1]
	for _, in := range m.Graph.Initializers {
		if in.Name != k {
			continue
		}
		if v, err := in.Values(); err != nil || !reflect.DeepEqual(v, []float32{1}) {
			t.Errorf("folded constant %s = %v (%v), want [1]", k, v, err)
		}
		k = ""
	}
	if k != "" {
		t.Errorf("the Add's second operand %q is no initializer of the optimized model", k)
	}

	tests := []struct {
		name string
		x    []float32
	}{
		{"one row", []float32{0, 1, 2, 3}},
		{"three rows", []float32{-1, -0.5, 0.25, 1e6, 7, -7, 3.5, 1 << 20, -2, 100, 0.125, -1e-3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := int64(len(tt.x) / 4)
			x, err := ort.NewTensor(ort.NewShape(rows, 4), tt.x)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = x.Destroy() }()
			out := []ort.Value{nil}
			if err := s.Run([]ort.Value{x}, out); err != nil {
				t.Fatalf("run: %v", err)
			}
			y, ok := out[0].(*ort.Tensor[float32])
			if !ok {
				t.Fatalf("output is %T, want *Tensor[float32]", out[0])
			}
			defer func() { _ = y.Destroy() }()
			if got := y.GetShape(); len(got) != 2 || got[0] != rows || got[1] != 4 {
				t.Errorf("y has shape %v, want [%d 4]", got, rows)
			}
			for i, v := range y.GetData() {
				if want := tt.x[i] + 1; v != want {
					t.Errorf("y[%d] = %v, want x + 1 = %v", i, v, want)
				}
			}
		})
	}
}
