// Command rawbatch measures ONNX Runtime in process, without HTTP and JSON,
// at several batch sizes: for each repetition and batch size it runs the
// model in a closed loop at concurrency 1 on one session (as svc bench's
// raw mode does) and records requests/s, rows/s and latency. build/bench.sh
// (make bench) uses it for the raw side of the batching target: rows/s at
// batch 8 over rows/s at batch 1. Batch sizes alternate within each
// repetition, so drift on a busy machine hits them alike.
//
// With -sessions N it also runs, in each repetition, N sessions of the
// model with -threads intra-op threads each (default 1), each in its own
// closed loop at batch 1: N × 1 is what fills N cores with independent
// runs. build/bench-served.sh takes the best items/s of these modes as the
// raw baseline that served throughput is divided by.
//
// -bodies DIR writes the batch-1 request bodies (/predict JSON, as svc
// bench generates them: the same seed and count) to DIR/1.json, 2.json, …,
// for an external load generator.
//
//	go run ./cmd/rawbatch -model build/models/paddleocr-cls/model.onnx \
//	    -lib build/bin/lib/libonnxruntime.so -shape x=1,3,48,192 -batch 1,8,32 -reps 3 -duration 2s
//	go run ./cmd/rawbatch -model build/models/paddleocr-cls/model.onnx \
//	    -shape x=1,3,48,192 -batch 1,8 -sessions 2 -threads 1 -bodies /tmp/bodies
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/svc-dev/svc/cmd/internal/bench"
	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
	// The in-process run takes the CPU provider from the registry.
	_ "github.com/svc-dev/svc/providers/all"
)

// Result is the JSON document rawbatch writes.
type Result struct {
	ModelFile string `json:"model_file"`
	// Input and Shape name the input whose first dimension is the batch;
	// Shape is given for batch 1.
	Input     string  `json:"input"`
	Shape     []int64 `json:"shape"`
	Provider  string  `json:"provider"`
	DurationS float64 `json:"duration_s"`
	WarmupS   float64 `json:"warmup_s"`
	// IntraOpThreads and Spinning are the session's settings (0 = ONNX
	// Runtime's default).
	IntraOpThreads int     `json:"intra_op_threads"`
	Spinning       bool    `json:"spinning"`
	Runs           []Run   `json:"runs"`
	Machine        Machine `json:"machine"`
	// Bodies are the files -bodies wrote (empty without it).
	Bodies []string `json:"bodies,omitempty"`
}

// Machine is what the run ran on.
type Machine struct {
	CPUs int `json:"cpus"`
}

// Run is one measured mode in one repetition: a batch size on the one
// session, or (Sessions > 0) Sessions sessions with Threads intra-op
// threads each, each in its own closed loop at Batch.
type Run struct {
	Rep      int   `json:"rep"`
	Batch    int64 `json:"batch"`
	Sessions int   `json:"sessions,omitempty"`
	Threads  int   `json:"threads,omitempty"`
	// RowsPerS is Batch × the level's throughput: items (rows) per second.
	RowsPerS float64     `json:"rows_per_s"`
	Level    bench.Level `json:"level"`
}

// mode is what one run measures.
type mode struct {
	batch    int64
	sessions int // 0: the one session at concurrency 1
}

// options are the command-line flags.
type options struct {
	model, lib, config string
	input              string
	shape              []int64
	batches            []int64
	reps               int
	duration, warmup   time.Duration
	out                string
	sessions, threads  int
	bodies             string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "rawbatch: %v\n", err)
		os.Exit(1)
	}
}

// parseArgs reads and checks the flags.
func parseArgs(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("rawbatch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.model, "model", "", "the .onnx file")
	fs.StringVar(&o.lib, "lib", "", "the ONNX Runtime library (default: as svc serve finds it)")
	fs.StringVar(&o.config, "c", "", "configuration file for the runtime settings (default: built-in defaults)")
	shape := fs.String("shape", "", "NAME=D0,D1,…: the batched input's shape at batch 1 (D0 is replaced by each batch size)")
	batches := fs.String("batch", "1,8", "batch sizes, comma-separated")
	fs.IntVar(&o.reps, "reps", 3, "repetitions of the whole set of batch sizes")
	fs.DurationVar(&o.duration, "duration", 2*time.Second, "measured time per batch size and repetition")
	fs.DurationVar(&o.warmup, "warmup", 500*time.Millisecond, "unrecorded warm-up before each measurement")
	fs.StringVar(&o.out, "out", "", "file to write the JSON to (default: stdout)")
	fs.IntVar(&o.sessions, "sessions", 0, "also run this many sessions at batch 1, each in its own closed loop (0: not)")
	fs.IntVar(&o.threads, "threads", 1, "intra-op threads of each -sessions session")
	fs.StringVar(&o.bodies, "bodies", "", "directory to write the batch-1 request bodies to (1.json, 2.json, …)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if o.model == "" {
		return o, errors.New("-model: give the .onnx file")
	}
	name, dims, err := bench.ParseShape(*shape)
	if err != nil {
		return o, err
	}
	if len(dims) == 0 {
		return o, fmt.Errorf("-shape %s: a batched input needs at least one dimension", *shape)
	}
	o.input, o.shape = name, dims
	if o.batches, err = parseBatches(*batches); err != nil {
		return o, err
	}
	switch {
	case o.reps < 1 || o.reps > 20:
		return o, fmt.Errorf("-reps %d: between 1 and 20", o.reps)
	case o.duration <= 0 || o.duration > time.Minute:
		return o, fmt.Errorf("-duration %v: positive and at most 1m", o.duration)
	case o.warmup < 0 || o.warmup > 10*time.Second:
		return o, fmt.Errorf("-warmup %v: between 0 and 10s", o.warmup)
	case o.sessions < 0 || o.sessions > 64:
		return o, fmt.Errorf("-sessions %d: between 0 and 64", o.sessions)
	case o.threads < 1 || o.threads > 64:
		return o, fmt.Errorf("-threads %d: between 1 and 64", o.threads)
	}
	return o, nil
}

// parseBatches parses "1,8,32": positive sizes, no duplicates.
func parseBatches(s string) ([]int64, error) {
	var out []int64
	seen := map[int64]bool{}
	for _, f := range strings.Split(s, ",") {
		b, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || b < 1 || b > 1024 {
			return nil, fmt.Errorf("-batch %q: want comma-separated sizes between 1 and 1024", s)
		}
		if seen[b] {
			return nil, fmt.Errorf("-batch %q: %d given twice", s, b)
		}
		seen[b] = true
		out = append(out, b)
	}
	return out, nil
}

// withBatch returns shape with its first dimension set to b.
func withBatch(shape []int64, b int64) []int64 {
	out := append([]int64(nil), shape...)
	out[0] = b
	return out
}

// inputsOf turns the model's input specs into the load generator's view
// of them (what GET /info would say).
func inputsOf(specs []core.InputSpec) []bench.Input {
	out := make([]bench.Input, len(specs))
	for i, s := range specs {
		out[i] = bench.Input{Name: s.Name, Type: s.Type, Shape: s.Shape, Required: s.Required}
	}
	return out
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseArgs(args, stderr)
	if err != nil {
		return err
	}
	cfg := config.Default()
	if o.config != "" {
		if cfg, err = config.Load(o.config, true); err != nil {
			return err
		}
	}
	if o.lib != "" {
		cfg.Runtime.Library = o.lib
	}
	local, err := bench.OpenLocal(o.model, cfg, false)
	if err != nil {
		return err
	}
	defer local.Close()
	pred := local.Predictor()

	inputs, bodyFiles, err := o.inputs(pred, inputsOf(pred.Info().Inputs))
	if err != nil {
		return err
	}
	var sessions []bench.Predictor
	if o.sessions > 0 {
		rt := local.Config().Runtime
		rt.IntraOpThreads = o.threads
		for range o.sessions {
			p, err := local.OpenSession(rt)
			if err != nil {
				return err
			}
			defer p.Close()
			sessions = append(sessions, p)
		}
	}
	modes := make([]mode, 0, len(o.batches)+1)
	for _, b := range o.batches {
		modes = append(modes, mode{batch: b})
	}
	if o.sessions > 0 {
		modes = append(modes, mode{batch: 1, sessions: o.sessions})
	}

	res := Result{
		ModelFile: o.model, Input: o.input, Shape: withBatch(o.shape, 1), Provider: local.Provider(),
		DurationS: o.duration.Seconds(), WarmupS: o.warmup.Seconds(),
		IntraOpThreads: cfg.Runtime.IntraOpThreads, Spinning: cfg.Runtime.Spinning,
		Runs: []Run{}, Machine: Machine{CPUs: runtime.NumCPU()}, Bodies: bodyFiles,
	}
	for rep := 1; rep <= o.reps; rep++ {
		for _, m := range rotate(modes, rep-1) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r, err := o.measure(ctx, m, rep, pred, sessions, inputs[m.batch], stderr)
			if err != nil {
				return err
			}
			res.Runs = append(res.Runs, r)
		}
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if o.out == "" {
		_, err = stdout.Write(b)
		return err
	}
	return os.WriteFile(o.out, b, 0o644)
}

// inputs returns the inputs of each batch size the run needs: bodies as
// svc bench generates them (seed 1, as many as it rotates), decoded by the
// server's decoder; with -bodies it also writes those of batch size 1 and
// returns their paths.
func (o options) inputs(pred bench.Predictor, ins []bench.Input) (map[int64][][]*tensor.Tensor, []string, error) {
	inputs := map[int64][][]*tensor.Tensor{}
	var bodyFiles []string
	sizes := o.batches
	if o.sessions > 0 || o.bodies != "" {
		sizes = append(slices.Clip(sizes), 1)
	}
	for _, b := range sizes {
		if inputs[b] != nil {
			continue
		}
		plan, err := bench.PlanInputs(ins, 1, map[string][]int64{o.input: withBatch(o.shape, b)})
		if err != nil {
			return nil, nil, err
		}
		bodies := bench.Generate(plan, bench.BodyCount(plan, bench.DefaultBodies), 1)
		if inputs[b], err = bench.DecodeBodies(pred, bodies); err != nil {
			return nil, nil, err
		}
		if b == 1 && o.bodies != "" {
			if bodyFiles, err = writeBodies(o.bodies, bodies); err != nil {
				return nil, nil, err
			}
		}
	}
	return inputs, bodyFiles, nil
}

// measure runs mode m of repetition rep for -duration on pred (or, for
// the sessions mode, on sessions) with inputs, and reports it on stderr.
func (o options) measure(ctx context.Context, m mode, rep int, pred bench.Predictor, sessions []bench.Predictor, inputs [][]*tensor.Tensor, stderr io.Writer) (Run, error) {
	b := m.batch
	what := fmt.Sprintf("batch %d", b)
	conc, op := 1, predictOp([]bench.Predictor{pred}, inputs)
	if m.sessions > 0 {
		what = fmt.Sprintf("%d sessions × %d threads", m.sessions, o.threads)
		conc, op = m.sessions, predictOp(sessions, inputs)
	}
	l := bench.RunLevel(ctx, conc, o.warmup, bench.Bounds{Duration: o.duration}, op)
	if l.Errors > 0 {
		return Run{}, fmt.Errorf("%s: %d errors, the first: %s", what, l.Errors, l.FirstError)
	}
	r := Run{Rep: rep, Batch: b, RowsPerS: float64(b) * l.ThroughputRPS, Level: l}
	if m.sessions > 0 {
		r.Sessions, r.Threads = m.sessions, o.threads
	}
	fmt.Fprintf(stderr, "rawbatch: rep %d %s: %.1f runs/s, %.1f rows/s, p50 %s\n", rep, what, l.ThroughputRPS, r.RowsPerS, bench.FormatMicros(l.LatencyUS.P50))
	return r, nil
}

// rotate returns s rotated left by k, so every repetition starts with a
// different batch size.
func rotate[T any](s []T, k int) []T {
	if len(s) == 0 {
		return s
	}
	k %= len(s)
	return append(append([]T(nil), s[k:]...), s[:k]...)
}

// writeBodies writes bodies to dir/1.json, 2.json, … and returns the
// paths.
func writeBodies(dir string, bodies [][]byte) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("-bodies: %w", err)
	}
	out := make([]string, len(bodies))
	for i, b := range bodies {
		out[i] = filepath.Join(dir, strconv.Itoa(i+1)+".json")
		if err := os.WriteFile(out[i], b, 0o644); err != nil {
			return nil, fmt.Errorf("-bodies: %w", err)
		}
	}
	return out, nil
}

// predictOp runs Predict on pre-decoded inputs: inference only, as svc
// bench's raw mode. Worker w runs on ps[w % len(ps)]: one session shared
// by every worker, or one session per worker.
func predictOp(ps []bench.Predictor, inputs [][]*tensor.Tensor) bench.Op {
	return func(ctx context.Context, w int, seq int64) (int, error) {
		res, err := ps[w%len(ps)].Predict(ctx, inputs[(int64(w)+seq)%int64(len(inputs))])
		if err != nil {
			return 0, err
		}
		res.Close()
		return 0, nil
	}
}
