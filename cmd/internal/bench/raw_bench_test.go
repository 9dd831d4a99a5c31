package bench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/onnxrt/onnxrttest"

	// The in-process runs take the CPU provider from the registry.
	_ "github.com/svc-dev/svc/providers/all"
)

// The model BenchmarkRaw and TestRawBodies load, given after -args (or, to
// a test binary built with go test -c, beside the -test. flags). go test
// runs in this package's directory: relative paths, the default -model's
// too, are taken from there; a test binary run elsewhere needs -model.
var (
	flagModel  = flag.String("model", filepath.Join("..", "..", "..", "testdata", "models", "classifier.onnx"), "the .onnx file BenchmarkRaw and TestRawBodies load")
	flagLib    = flag.String("lib", "", "the ONNX Runtime library (default: the tests' library, build/lib)")
	flagConfig = flag.String("config", "", "svc configuration file whose runtime settings the sessions take (default: the built-in defaults)")
	flagShape  = flag.String("shape", "", "NAME=D0,D1,…: the batched input's shape at batch 1, D0 becoming each mode's batch (default: the model's own, dynamic dimensions after the first set to 1)")
	flagModes  = flag.String("modes", "batch=1,batch=8,sessions=2x1", "BenchmarkRaw's modes, run in this order: batch=B (one session, B rows a run), sessions=NxT (N sessions of T intra-op threads, batch 1)")
	flagWarmup = flag.Duration("warmup", 0, "unmeasured closed-loop run of each mode before BenchmarkRaw measures it (at least one run in any case)")
	flagBodies = flag.String("bodies", "", "directory TestRawBodies writes the batch-1 request bodies to, as 1.json, 2.json, … (default: a temporary directory)")
)

// BenchmarkRaw measures ONNX Runtime in process, without HTTP and JSON:
// Predict on inputs decoded, by the server's decoder, from the request
// bodies svc bench sends (seed 1, as many as it rotates), in closed loops.
// Each mode of -modes is a sub-benchmark:
//
//	batch=B       one session with the configuration's runtime settings
//	              (-config; ONNX Runtime's default threads without one),
//	              one loop, B rows a run
//	sessions=NxT  N sessions of T intra-op threads each, each in its own
//	              loop at batch 1: N × 1 fills N cores with independent runs
//
// Besides ns/op (wall time over runs, all loops together) it reports runs/s
// (Predict calls a second) and rows/s (rows through the model a second, all
// sessions together: the items a server could answer). make bench takes the
// best rows/s of batch 1, batch 8 and one 1-thread session per core as the
// raw baseline that served throughput is divided by
// (build/bench-served.sh), and rows/s at batch 8 and 32 over batch 1
// (build/bench.sh).
//
//	go test -run '^$' -bench Raw ./cmd/internal/bench
//	go test -run '^$' -bench Raw -benchtime 1500ms ./cmd/internal/bench -args \
//	    -model ../../../build/models/paddleocr-cls/model.onnx -shape x=1,3,48,192 \
//	    -modes batch=1,batch=8,sessions=2x1
//
// -count N repeats each mode N times back to back, so a drift of the
// machine's load between modes would land on one mode only. make bench
// instead runs the test binary once per repetition with the modes in a
// rotated order (-modes), so that every repetition measures all modes
// moments apart and rows/s at batch 8 over batch 1 can be paired by
// repetition. build/benchreport takes the k-th result of a mode as its
// repetition k, whichever way they were run.
func BenchmarkRaw(b *testing.B) {
	modes, err := parseModes(*flagModes)
	if err != nil {
		b.Fatal(err)
	}
	r := openRaw(b)
	for _, m := range modes {
		r.benchMode(b, m)
	}
}

// benchMode opens mode m's sessions, warms them up and measures m as a
// sub-benchmark.
func (r *rawModel) benchMode(b *testing.B, m rawMode) {
	inputs, err := DecodeBodies(r.local.Predictor(), r.bodies(b, m.batch))
	if err != nil {
		b.Fatal(err)
	}
	ps := r.sessions(b, m)
	op := rawOp(ps, inputs)
	// One run in any case, so that a mode the model refuses fails here,
	// with the runtime's error.
	if _, err := op(b.Context(), 0, 0); err != nil {
		b.Fatalf("%s: %v", m.name, err)
	}
	if *flagWarmup > 0 {
		if l := RunLevel(b.Context(), len(ps), 0, Bounds{Duration: *flagWarmup}, op); l.Errors > 0 {
			b.Fatalf("%s, warm-up: %d errors, the first: %s", m.name, l.Errors, l.FirstError)
		}
	}
	b.Run(m.name, func(b *testing.B) {
		l := RunLevel(b.Context(), len(ps), 0, Bounds{Requests: int64(b.N)}, op)
		if l.Errors > 0 || l.Requests != int64(b.N) {
			b.Fatalf("%d of %d runs, %d errors, the first: %s", l.Requests, b.N, l.Errors, l.FirstError)
		}
		s := b.Elapsed().Seconds()
		b.ReportMetric(float64(b.N)/s, "runs/s")
		b.ReportMetric(float64(b.N)*float64(m.batch)/s, "rows/s")
	})
}

// TestRawBodies writes the batch-1 /predict bodies that svc bench sends
// for the -model and -shape flags (seed 1, as many as it rotates) to
// -bodies, as 1.json, 2.json, …, for an external load generator (make
// bench's wrk runs, build/bench-wrk.lua). It checks that they are svc
// bench's own (generated through its request path), the same for the same
// seed and others for another, that the server's decoder accepts each
// against the model and that the model runs on each.
func TestRawBodies(t *testing.T) {
	r := openRaw(t)
	bodies := r.bodies(t, 1)
	if !slices.EqualFunc(bodies, r.bodies(t, 1), bytes.Equal) {
		t.Fatal("two generations with seed 1 differ")
	}
	if slices.EqualFunc(bodies, r.bodiesWith(t, 1, 2), bytes.Equal) {
		t.Fatal("seeds 1 and 2 generate the same bodies")
	}
	pred := r.local.Predictor()
	inputs, err := DecodeBodies(pred, bodies)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range inputs {
		res, err := pred.Predict(context.Background(), in)
		if err != nil {
			t.Fatalf("body %d: %v", i+1, err)
		}
		res.Close()
	}
	dir := *flagBodies
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, body := range bodies {
		path := filepath.Join(dir, strconv.Itoa(i+1)+".json")
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, body) {
			t.Fatalf("%s reads back as %d bytes (%v), want the %d written", path, len(got), err, len(body))
		}
	}
	t.Logf("%d bodies of %s in %s", len(bodies), r.path, dir)
}

// rawModel is the model of the flags, loaded in process.
type rawModel struct {
	path  string
	local *Local
	info  Info
	// input and shape are -shape's (input "" when it is not given).
	input string
	shape []int64
}

// openRaw loads the model of the flags; tb's cleanup closes it.
func openRaw(tb testing.TB) *rawModel {
	tb.Helper()
	cfg := config.Default()
	if *flagConfig != "" {
		var err error
		if cfg, err = config.Load(*flagConfig, true); err != nil {
			tb.Fatal(err)
		}
	}
	switch {
	case *flagLib != "":
		cfg.Runtime.Library = *flagLib
	case cfg.Runtime.Library == "":
		cfg.Runtime.Library = onnxrttest.LibraryPath(tb)
	}
	r := &rawModel{path: *flagModel}
	if *flagShape != "" {
		var err error
		if r.input, r.shape, err = ParseShape(*flagShape); err != nil {
			tb.Fatal(err)
		}
		if len(r.shape) == 0 {
			tb.Fatalf("-shape %s: a batched input needs at least one dimension", *flagShape)
		}
	}
	local, err := OpenLocal(r.path, cfg, false)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := local.Close(); err != nil {
			tb.Error(err)
		}
	})
	r.local = local
	r.info = Info{Path: r.path, Inputs: inputsOf(local.Predictor().Info().Inputs)}
	return r
}

// bodies are the request bodies svc bench sends (seed 1) at batch b.
func (r *rawModel) bodies(tb testing.TB, b int64) [][]byte {
	tb.Helper()
	return r.bodiesWith(tb, b, 1)
}

// bodiesWith are the request bodies svc bench sends at batch b with seed:
// -shape's input gets -shape with b as its first dimension; without
// -shape, every input with a dynamic first dimension gets b there.
func (r *rawModel) bodiesWith(tb testing.TB, b int64, seed uint64) [][]byte {
	tb.Helper()
	o := Options{Batch: b, Seed: seed, Bodies: DefaultBodies}
	if r.input != "" {
		shape := slices.Clone(r.shape)
		shape[0] = b
		o.Batch, o.Shapes = 1, map[string][]int64{r.input: shape}
	}
	reqs, err := o.requests(r.info, &Report{})
	if err != nil {
		tb.Fatal(err)
	}
	return reqs.v1
}

// sessions are what mode m runs on: the model's session, or m.sessions
// sessions of their own with m.threads intra-op threads each, which tb's
// cleanup closes before the model.
func (r *rawModel) sessions(tb testing.TB, m rawMode) []Predictor {
	tb.Helper()
	if m.sessions == 0 {
		return []Predictor{r.local.Predictor()}
	}
	rt := r.local.Config().Runtime
	rt.IntraOpThreads = m.threads
	ps := make([]Predictor, m.sessions)
	for i := range ps {
		p, err := r.local.OpenSession(rt)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() {
			if err := p.Close(); err != nil {
				tb.Error(err)
			}
		})
		ps[i] = p
	}
	return ps
}

// inputsOf turns the model's input specs into the load generator's view
// of them (what GET /info says).
func inputsOf(specs []core.InputSpec) []Input {
	out := make([]Input, len(specs))
	for i, s := range specs {
		out[i] = Input{Name: s.Name, Type: s.Type, Shape: s.Shape, Required: s.Required}
	}
	return out
}

// rawMode is one mode of BenchmarkRaw.
type rawMode struct {
	// name is the sub-benchmark's: batch=8, sessions=2x1.
	name  string
	batch int64
	// sessions and threads: that many sessions of that many intra-op
	// threads, each in its own loop; 0 sessions: the model's session.
	sessions, threads int
}

// Bounds of -modes.
const (
	maxRawBatch    = 1024
	maxRawSessions = 64
)

// parseModes parses -modes: comma-separated batch=B and sessions=NxT, none
// twice.
func parseModes(s string) ([]rawMode, error) {
	var out []rawMode
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		m, err := parseMode(f)
		if err != nil {
			return nil, fmt.Errorf("-modes %q: %w", s, err)
		}
		if slices.ContainsFunc(out, func(x rawMode) bool { return x.name == m.name }) {
			return nil, fmt.Errorf("-modes %q: %s given twice", s, m.name)
		}
		out = append(out, m)
	}
	return out, nil
}

// parseMode parses one mode of -modes.
func parseMode(f string) (rawMode, error) {
	kind, v, _ := strings.Cut(f, "=")
	switch kind {
	case "batch":
		b, err := strconv.ParseInt(v, 10, 64)
		if err != nil || b < 1 || b > maxRawBatch {
			return rawMode{}, fmt.Errorf("%q: want batch=B with B between 1 and %d", f, maxRawBatch)
		}
		return rawMode{name: "batch=" + strconv.FormatInt(b, 10), batch: b}, nil
	case "sessions":
		ns, ts, _ := strings.Cut(v, "x")
		n, err1 := strconv.Atoi(ns)
		t, err2 := strconv.Atoi(ts)
		if err1 != nil || err2 != nil || n < 1 || n > maxRawSessions || t < 1 || t > maxRawSessions {
			return rawMode{}, fmt.Errorf("%q: want sessions=NxT with N sessions and T threads each between 1 and %d", f, maxRawSessions)
		}
		return rawMode{name: fmt.Sprintf("sessions=%dx%d", n, t), batch: 1, sessions: n, threads: t}, nil
	}
	return rawMode{}, fmt.Errorf("%q: want batch=B or sessions=NxT", f)
}

func TestParseModes(t *testing.T) {
	tests := []struct {
		in   string
		want []rawMode
		err  string // substring; "" = valid
	}{
		{in: "batch=1,batch=8,sessions=2x1", want: []rawMode{
			{name: "batch=1", batch: 1}, {name: "batch=8", batch: 8}, {name: "sessions=2x1", batch: 1, sessions: 2, threads: 1},
		}},
		{in: "sessions=4x2, batch=32", want: []rawMode{{name: "sessions=4x2", batch: 1, sessions: 4, threads: 2}, {name: "batch=32", batch: 32}}},
		{in: "batch=08", want: []rawMode{{name: "batch=8", batch: 8}}},
		{in: "", err: `"": want batch=B or sessions=NxT`},
		{in: "batch=1,", err: `"": want batch=B`},
		{in: "batch=0", err: "between 1 and 1024"},
		{in: "batch=1025", err: "between 1 and 1024"},
		{in: "batch=x", err: `"batch=x": want batch=B`},
		{in: "batch=8,batch=8", err: "batch=8 given twice"},
		{in: "batch=8,batch=08", err: "batch=8 given twice"},
		{in: "sessions=2", err: "want sessions=NxT"},
		{in: "sessions=0x1", err: "between 1 and 64"},
		{in: "sessions=2x65", err: "between 1 and 64"},
		{in: "threads=2", err: `"threads=2": want batch=B or sessions=NxT`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseModes(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("parseModes(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestRawModesRun runs each kind of mode on the real ONNX Runtime, as
// BenchmarkRaw's sub-benchmarks do, on the model of the flags: the one
// session at batch 1 and 4, and two 1-thread sessions of their own.
func TestRawModesRun(t *testing.T) {
	r := openRaw(t)
	modes, err := parseModes("batch=1,batch=4,sessions=2x1")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range modes {
		inputs, err := DecodeBodies(r.local.Predictor(), r.bodies(t, m.batch))
		if err != nil {
			t.Fatal(err)
		}
		if got := inputs[0][0].Shape[0]; got != m.batch {
			t.Fatalf("%s: inputs of batch %d", m.name, got)
		}
		ps := r.sessions(t, m)
		if want := max(1, m.sessions); len(ps) != want || (m.sessions > 0 && ps[0] == ps[1]) {
			t.Fatalf("%s: %d sessions, want %d of their own", m.name, len(ps), want)
		}
		l := RunLevel(context.Background(), len(ps), 0, Bounds{Requests: 20}, rawOp(ps, inputs))
		if l.Requests != 20 || l.Errors != 0 || l.Concurrency != len(ps) {
			t.Fatalf("%s: %+v", m.name, l)
		}
	}
}
