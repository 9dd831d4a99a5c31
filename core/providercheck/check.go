// Package providercheck is 'svc providers --check MODEL': for every usable
// execution provider it loads the model, runs it on generated inputs,
// compares the outputs with the CPU provider's, reports where ONNX
// Runtime placed the nodes (from its profile of the runs) and times the
// runs against the CPU.
package providercheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/session"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/providers"
)

// Options configure a check.
type Options struct {
	// File is the model.
	File string
	// Runtime holds the ONNX Runtime settings (threads, optimization); its
	// Profile is replaced by the check's own.
	Runtime config.Runtime
	// ProviderOptions configure the providers.
	ProviderOptions providers.Options
	// Runs is the number of timed runs after the first (default 5).
	Runs int
	// Only limits the check to these providers, by name (empty = every
	// usable one); the CPU always runs, as the reference.
	Only []string
}

// Row is one provider's outcome.
type Row struct {
	// Provider and ORTName name the provider.
	Provider, ORTName string
	// Err says why the provider was not run or failed ("" = it ran).
	Err string
	// Load is the session creation time, First the first run (lazy
	// initialisation, shader compilation), Mean the mean of the runs after
	// it.
	Load, First, Mean time.Duration
	// MaxAbsDiff is the largest absolute difference of any output element
	// from the CPU's (NaN for the CPU itself; +Inf when shapes or
	// non-numeric values differ).
	MaxAbsDiff float64
	// Placement is where the nodes ran, from ONNX Runtime's profile.
	Placement core.Placement
	// Speedup is the CPU's mean run time divided by this provider's.
	Speedup float64
}

// Run checks every provider of set that is usable on host (highest
// priority first, the CPU last), each on its own session of the model.
func Run(set providers.Set, host providers.Host, o Options) ([]Row, error) {
	if o.Runs <= 0 {
		o.Runs = 5
	}
	cpu := set.Fallback()
	if cpu == nil {
		return nil, errors.New("the CPU provider is not compiled in: nothing to compare with")
	}
	dir, err := os.MkdirTemp("", "svc-check-")
	if err != nil {
		return nil, fmt.Errorf("profile directory: %w", err)
	}
	defer os.RemoveAll(dir)

	ref, refOut, err := runOn(cpu, nil, dir, o)
	if err != nil {
		return nil, fmt.Errorf("the model on the CPU provider: %w", err)
	}
	var rows []Row
	for _, p := range set {
		if p.Name() == cpu.Name() || !wanted(o.Only, p.Name()) {
			continue
		}
		row := Row{Provider: p.Name(), ORTName: p.ORTName(), MaxAbsDiff: math.NaN()}
		if err := p.Usable(host); err != nil {
			row.Err = "not usable: " + err.Error()
			rows = append(rows, row)
			continue
		}
		r, out, err := runOn(p, refOut.inputs, dir, o)
		if err != nil {
			row.Err = err.Error()
			rows = append(rows, row)
			continue
		}
		r.MaxAbsDiff = maxAbsDiff(refOut.outputs, out.outputs)
		if r.Mean > 0 {
			r.Speedup = float64(ref.Mean) / float64(r.Mean)
		}
		rows = append(rows, r)
	}
	ref.Speedup = 1
	return append(rows, ref), nil
}

func wanted(only []string, name string) bool {
	if len(only) == 0 {
		return true
	}
	for _, n := range only {
		if n == name {
			return true
		}
	}
	return false
}

// outcome is what one provider's runs produced.
type outcome struct {
	inputs  []*tensor.Tensor
	outputs []*tensor.Tensor
}

// runOn loads the model on p with profiling on, runs it 1+Runs times on
// inputs (generated from the model's specs when nil), closes the session
// and reads the placement from the profile.
func runOn(p providers.Provider, inputs []*tensor.Tensor, dir string, o Options) (Row, outcome, error) {
	row := Row{Provider: p.Name(), ORTName: p.ORTName(), MaxAbsDiff: math.NaN()}
	rt := o.Runtime
	rt.Profile = filepath.Join(dir, p.Name())
	rt.Timeout = 0
	t0 := time.Now()
	pred, err := session.New(session.Options{Name: "check", File: o.File, Runtime: rt, Provider: p, ProviderOptions: o.ProviderOptions}, nil)
	if err != nil {
		return row, outcome{}, err
	}
	row.Load = time.Since(t0)
	closed := false
	defer func() {
		if !closed {
			_ = pred.Close()
		}
	}()
	if inputs == nil {
		if inputs, err = Inputs(pred.Specs()); err != nil {
			return row, outcome{}, err
		}
	}
	var outputs []*tensor.Tensor
	var total time.Duration
	for i := 0; i <= o.Runs; i++ {
		t := time.Now()
		res, err := pred.Predict(context.Background(), inputs)
		d := time.Since(t)
		if err != nil {
			return row, outcome{}, fmt.Errorf("run: %w", err)
		}
		if i == 0 {
			row.First = d
			if outputs, err = collect(res); err != nil {
				res.Close()
				return row, outcome{}, err
			}
		} else {
			total += d
		}
		res.Close()
	}
	row.Mean = total / time.Duration(o.Runs)
	closed = true
	if err := pred.Close(); err != nil {
		return row, outcome{}, fmt.Errorf("close the session: %w", err)
	}
	if row.Placement, err = session.ProfilePlacement(rt.Profile); err != nil {
		return row, outcome{}, err
	}
	return row, outcome{inputs: inputs, outputs: outputs}, nil
}

// collect copies the tensor outputs of a result (nil for other kinds).
func collect(res core.Result) ([]*tensor.Tensor, error) {
	out := make([]*tensor.Tensor, res.Len())
	for i := range out {
		t, err := res.Tensor(i)
		if err != nil {
			continue
		}
		out[i] = t
	}
	return out, nil
}

// Inputs makes one input per spec: dynamic dimensions 1, values from a
// fixed pseudo-random sequence (floats in [0, 1), integers 0–9, booleans
// alternating, strings "svc"), the same on every call.
func Inputs(specs []tensor.Spec) ([]*tensor.Tensor, error) {
	out := make([]*tensor.Tensor, len(specs))
	seed := uint64(0x9e3779b97f4a7c15)
	next := func() float64 {
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return float64(seed>>11) / (1 << 53)
	}
	for i, s := range specs {
		if !s.Required {
			continue
		}
		if s.Shape == nil {
			return nil, fmt.Errorf("input %q has no known rank", s.Name)
		}
		shape, n := s.SmallestShape()
		t := &tensor.Tensor{DType: s.DType, Shape: shape}
		switch s.DType {
		case tensor.Float32:
			d := make([]float32, n)
			for k := range d {
				d[k] = float32(next())
			}
			t.Data = d
		case tensor.Float64:
			d := make([]float64, n)
			for k := range d {
				d[k] = next()
			}
			t.Data = d
		case tensor.Float16:
			d := make([]uint16, n)
			for k := range d {
				d[k] = tensor.Float64ToFloat16(next())
			}
			t.Data = d
		case tensor.BFloat16:
			d := make([]uint16, n)
			for k := range d {
				d[k] = tensor.Float64ToBFloat16(next())
			}
			t.Data = d
		case tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64, tensor.Uint8, tensor.Uint16, tensor.Uint32, tensor.Uint64:
			t.Data = ints(s.DType, n, func() int { return int(next() * 10) })
		case tensor.Bool:
			d := make([]bool, n)
			for k := range d {
				d[k] = k%2 == 0
			}
			t.Data = d
		case tensor.String:
			d := make([]string, n)
			for k := range d {
				d[k] = "svc"
			}
			t.Data = d
		default:
			return nil, fmt.Errorf("input %q has unsupported type %v", s.Name, s.DType)
		}
		out[i] = t
	}
	return out, nil
}

func ints(dt tensor.DType, n int, v func() int) any {
	switch dt {
	case tensor.Int8:
		d := make([]int8, n)
		for k := range d {
			d[k] = int8(v())
		}
		return d
	case tensor.Int16:
		d := make([]int16, n)
		for k := range d {
			d[k] = int16(v())
		}
		return d
	case tensor.Int32:
		d := make([]int32, n)
		for k := range d {
			d[k] = int32(v())
		}
		return d
	case tensor.Int64:
		d := make([]int64, n)
		for k := range d {
			d[k] = int64(v())
		}
		return d
	case tensor.Uint8:
		d := make([]uint8, n)
		for k := range d {
			d[k] = uint8(v())
		}
		return d
	case tensor.Uint16:
		d := make([]uint16, n)
		for k := range d {
			d[k] = uint16(v())
		}
		return d
	case tensor.Uint32:
		d := make([]uint32, n)
		for k := range d {
			d[k] = uint32(v())
		}
		return d
	}
	d := make([]uint64, n)
	for k := range d {
		d[k] = uint64(v())
	}
	return d
}

// maxAbsDiff is the largest absolute difference between matching output
// elements (+Inf when shapes, types or non-numeric values differ).
func maxAbsDiff(a, b []*tensor.Tensor) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		if a[i] == nil || b[i] == nil {
			if a[i] != b[i] {
				return math.Inf(1)
			}
			continue
		}
		x, y := numbers(a[i]), numbers(b[i])
		if a[i].DType != b[i].DType || !sameShape(a[i].Shape, b[i].Shape) {
			return math.Inf(1)
		}
		if x == nil || y == nil {
			if fmt.Sprint(a[i].Data) != fmt.Sprint(b[i].Data) {
				return math.Inf(1)
			}
			continue
		}
		for k := range x {
			if math.IsNaN(x[k]) != math.IsNaN(y[k]) {
				return math.Inf(1)
			}
			if !math.IsNaN(x[k]) {
				d = math.Max(d, math.Abs(x[k]-y[k]))
			}
		}
	}
	return d
}

func sameShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// numbers converts a numeric tensor's elements to float64 (nil for
// strings and booleans).
func numbers(t *tensor.Tensor) []float64 {
	var out []float64
	add := func(n int, f func(int) float64) []float64 {
		out = make([]float64, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	switch d := t.Data.(type) {
	case []float32:
		return add(len(d), func(i int) float64 { return float64(d[i]) })
	case []float64:
		return add(len(d), func(i int) float64 { return d[i] })
	case []int8:
		return add(len(d), func(i int) float64 { return float64(d[i]) })
	case []int16:
		return add(len(d), func(i int) float64 { return float64(d[i]) })
	case []int32:
		return add(len(d), func(i int) float64 { return float64(d[i]) })
	case []int64:
		return add(len(d), func(i int) float64 { return float64(d[i]) })
	case []uint8:
		return add(len(d), func(i int) float64 { return float64(d[i]) })
	case []uint16:
		switch t.DType {
		case tensor.Float16:
			return add(len(d), func(i int) float64 { return float64(tensor.Float16ToFloat32(d[i])) })
		case tensor.BFloat16:
			return add(len(d), func(i int) float64 { return float64(tensor.BFloat16ToFloat32(d[i])) })
		}
		return add(len(d), func(i int) float64 { return float64(d[i]) })
	case []uint32:
		return add(len(d), func(i int) float64 { return float64(d[i]) })
	case []uint64:
		return add(len(d), func(i int) float64 { return float64(d[i]) })
	}
	return nil
}

// Write prints the rows as one table.
func Write(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tLOAD\tFIRST RUN\tRUN (MEAN)\tVS CPU\tMAX |DIFF| VS CPU\tNODES")
	for _, r := range rows {
		if r.Err != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t%s\n", r.Provider, oneLine(r.Err))
			continue
		}
		diff := "reference"
		if !math.IsNaN(r.MaxAbsDiff) {
			diff = fmt.Sprintf("%.2g", r.MaxAbsDiff)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Provider, dur(r.Load), dur(r.First), dur(r.Mean), speed(r.Speedup), diff, r.Placement)
	}
	return tw.Flush()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// dur rounds a duration for the table: three significant figures.
func dur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond / 10).String()
}

// speed is "3.2× faster" or "0.01× (slower)" relative to the CPU.
func speed(s float64) string {
	switch {
	case s == 0:
		return "-"
	case s == 1:
		return "1×"
	case s > 1:
		return fmt.Sprintf("%.2g× faster", s)
	}
	return fmt.Sprintf("%.2g× slower", 1/s)
}
