package slowload

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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

const (
	// minLoad is the least session-creation time that still makes the
	// model useful to a test of svc while a model loads.
	minLoad = time.Second
	// maxRun bounds the fastest of a few runs: a folded model adds, an
	// unfolded one would multiply the matrices again on every run.
	maxRun = 100 * time.Millisecond
	// maxFile keeps the model a small file.
	maxFile = 4 << 10
)

// TestWrite writes the model, creates a session as svc does by default
// (graph optimization "all", no spinning), logs how long that took and
// checks that the session is slow to create, quick to run, and computes
// x + 1.
func TestWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "slow.onnx")
	start := time.Now()
	if err := Write(path); err != nil {
		t.Fatal(err)
	}
	written := time.Since(start)
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
	if got := len(m.Graph.Nodes); got != 5 {
		t.Errorf("read back %d nodes, want 5", got)
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
	start = time.Now()
	s, err := ort.NewDynamicAdvancedSession(path, []string{"x"}, []string{"y"}, so)
	if err != nil {
		t.Fatalf("create session: %v", err)
	}
	load := time.Since(start)
	defer func() { _ = s.Destroy() }()
	t.Logf("model: %d bytes, written in %v; session created in %v", st.Size(), written.Round(time.Microsecond), load.Round(time.Millisecond))
	if load < minLoad {
		t.Errorf("session created in %v, want at least %v: raise Side", load, minLoad)
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
			fastest := time.Hour
			for range 3 {
				out := []ort.Value{nil}
				start := time.Now()
				if err := s.Run([]ort.Value{x}, out); err != nil {
					t.Fatalf("run: %v", err)
				}
				fastest = min(fastest, time.Since(start))
				y, ok := out[0].(*ort.Tensor[float32])
				if !ok {
					t.Fatalf("output is %T, want *Tensor[float32]", out[0])
				}
				if got := y.GetShape(); len(got) != 2 || got[0] != rows || got[1] != 4 {
					t.Errorf("y has shape %v, want [%d 4]", got, rows)
				}
				for i, v := range y.GetData() {
					if want := tt.x[i] + 1; v != want {
						t.Errorf("y[%d] = %v, want x + 1 = %v", i, v, want)
					}
				}
				_ = y.Destroy()
			}
			t.Logf("fastest of 3 runs: %v", fastest)
			if fastest > maxRun {
				t.Errorf("fastest run took %v, want under %v: was the product folded at load?", fastest, maxRun)
			}
		})
	}
}
