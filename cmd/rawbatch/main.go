// Command rawbatch measures ONNX Runtime in process, without HTTP and JSON,
// at several batch sizes: for each repetition and batch size it runs the
// model in a closed loop at concurrency 1 on one session (as svc bench's
// raw mode does) and records requests/s, rows/s and latency. build/bench.sh
// (make bench) uses it for the raw side of the batching target: rows/s at
// batch 8 over rows/s at batch 1. Batch sizes alternate within each
// repetition, so drift on a busy machine hits them alike.
//
//	go run ./cmd/rawbatch -model build/models/paddleocr-cls/model.onnx \
//	    -lib build/bin/lib/libonnxruntime.so -shape x=1,3,48,192 -batch 1,8,32 -reps 3 -duration 2s
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
	"runtime"
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
}

// Machine is what the run ran on.
type Machine struct {
	CPUs int `json:"cpus"`
}

// Run is one measured batch size in one repetition.
type Run struct {
	Rep   int   `json:"rep"`
	Batch int64 `json:"batch"`
	// RowsPerS is Batch × the level's throughput.
	RowsPerS float64     `json:"rows_per_s"`
	Level    bench.Level `json:"level"`
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
	ins := inputsOf(pred.Info().Inputs)

	// Bodies as svc bench generates them, decoded by the server's decoder.
	inputs := map[int64][][]*tensor.Tensor{}
	for _, b := range o.batches {
		plan, err := bench.PlanInputs(ins, 1, map[string][]int64{o.input: withBatch(o.shape, b)})
		if err != nil {
			return err
		}
		n := int(min(bench.DefaultBodies, max(1, (64<<20)/(12*elements(withBatch(o.shape, b))))))
		if inputs[b], err = bench.DecodeBodies(pred, bench.Generate(plan, n, 1)); err != nil {
			return err
		}
	}

	res := Result{
		ModelFile: o.model, Input: o.input, Shape: withBatch(o.shape, 1), Provider: local.Provider(),
		DurationS: o.duration.Seconds(), WarmupS: o.warmup.Seconds(),
		IntraOpThreads: cfg.Runtime.IntraOpThreads, Spinning: cfg.Runtime.Spinning,
		Runs: []Run{}, Machine: Machine{CPUs: runtime.NumCPU()},
	}
	for rep := 1; rep <= o.reps; rep++ {
		for _, b := range rotate(o.batches, rep-1) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			l := bench.RunLevel(ctx, 1, o.warmup, bench.Bounds{Duration: o.duration}, predictOp(pred, inputs[b]))
			if l.Errors > 0 {
				return fmt.Errorf("batch %d: %d errors, the first: %s", b, l.Errors, l.FirstError)
			}
			r := Run{Rep: rep, Batch: b, RowsPerS: float64(b) * l.ThroughputRPS, Level: l}
			fmt.Fprintf(stderr, "rawbatch: rep %d batch %d: %.1f runs/s, %.1f rows/s, p50 %s\n", rep, b, l.ThroughputRPS, r.RowsPerS, bench.FormatMicros(l.LatencyUS.P50))
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

// rotate returns s rotated left by k, so every repetition starts with a
// different batch size.
func rotate[T any](s []T, k int) []T {
	if len(s) == 0 {
		return s
	}
	k %= len(s)
	return append(append([]T(nil), s[k:]...), s[:k]...)
}

func elements(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// predictOp runs Predict on pre-decoded inputs: inference only, as svc
// bench's raw mode.
func predictOp(p bench.Predictor, inputs [][]*tensor.Tensor) bench.Op {
	return func(ctx context.Context, w int, seq int64) (int, error) {
		res, err := p.Predict(ctx, inputs[(int64(w)+seq)%int64(len(inputs))])
		if err != nil {
			return 0, err
		}
		res.Close()
		return 0, nil
	}
}
