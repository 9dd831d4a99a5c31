package bench

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// SchemaVersion is the version of the JSON report; it changes only when a
// field changes meaning or goes away.
const SchemaVersion = 1

// Report is everything one svc bench run measured; svc bench --json prints
// it.
type Report struct {
	Schema   int          `json:"schema"`
	Model    ModelReport  `json:"model"`
	Target   TargetReport `json:"target"`
	Settings Settings     `json:"settings"`
	Machine  Machine      `json:"machine"`
	// Served, Raw and RawCodec hold one entry per concurrency level, in
	// the order the levels were given. Raw and RawCodec are empty when the
	// in-process modes did not run (RawSkipped says why).
	Served     []Level `json:"served"`
	Raw        []Level `json:"raw"`
	RawCodec   []Level `json:"raw_codec"`
	RawSkipped string  `json:"raw_skipped,omitempty"`
	// Ratios compare served with the in-process modes, per level.
	Ratios []Ratio `json:"ratios"`
	// Notes say what to keep in mind when reading the numbers.
	Notes []string `json:"notes"`
}

// ModelReport names the model and the inputs the load used.
type ModelReport struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Inputs are the generated inputs with their concrete shapes (empty
	// with --input).
	Inputs []Planned `json:"inputs"`
}

// TargetReport says what was measured.
type TargetReport struct {
	// URL is the server's base URL.
	URL string `json:"url"`
	// StartedServer is true when svc bench started svc serve itself.
	StartedServer bool `json:"started_server"`
	// ServeArgs are the extra flags given to that svc serve.
	ServeArgs []string `json:"serve_args"`
	// Provider is the execution provider the server reports (GET
	// /metrics); RawProvider the one the in-process modes ran on.
	Provider    string `json:"provider"`
	RawProvider string `json:"raw_provider,omitempty"`
	// ModelFile is the .onnx file the in-process modes loaded.
	ModelFile string `json:"model_file,omitempty"`
}

// Settings are the run's parameters.
type Settings struct {
	Concurrency []int `json:"concurrency"`
	// DurationS and Requests bound each level's measured phase (0 = not
	// set; the first reached ends the level).
	DurationS float64 `json:"duration_s"`
	Requests  int64   `json:"requests"`
	WarmupS   float64 `json:"warmup_s"`
	TimeoutS  float64 `json:"timeout_s"`
	Seed      uint64  `json:"seed"`
	Batch     int64   `json:"batch"`
	// InputFile is the --input file ("" = random inputs).
	InputFile string `json:"input_file"`
	// ContentType is the --input file's media type when not JSON.
	ContentType string `json:"content_type,omitempty"`
	// Bodies is how many distinct request bodies are rotated, and
	// BodyBytes their mean size.
	Bodies    int `json:"bodies"`
	BodyBytes int `json:"body_bytes"`
	// Protocol is the API the served requests went through (v1, v2-json,
	// v2-binary, grpc); "" in reports from before it was recorded means v1.
	Protocol string `json:"protocol,omitempty"`
}

// Machine describes where the load generator ran.
type Machine struct {
	CPUs     int    `json:"cpus"`
	CPUModel string `json:"cpu_model"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	Go       string `json:"go"`
	// SharedWithServer is true when the server runs on this machine, so
	// the load generator and the server share the CPUs.
	SharedWithServer bool `json:"shared_with_server"`
}

// Ratio compares one concurrency level of served with the in-process
// modes: throughput served ÷ in-process, and p50 latency served −
// in-process in µs. A field is absent when its mode did not run.
type Ratio struct {
	Concurrency                  int      `json:"concurrency"`
	ThroughputServedOverRaw      *float64 `json:"throughput_served_over_raw,omitempty"`
	P50ServedMinusRawUS          *float64 `json:"p50_served_minus_raw_us,omitempty"`
	ThroughputServedOverRawCodec *float64 `json:"throughput_served_over_raw_codec,omitempty"`
	P50ServedMinusRawCodecUS     *float64 `json:"p50_served_minus_raw_codec_us,omitempty"`
}

// ComputeRatios pairs the levels of served with raw and raw_codec by
// concurrency.
func ComputeRatios(served, raw, codec []Level) []Ratio {
	find := func(ls []Level, c int) *Level {
		for i := range ls {
			if ls[i].Concurrency == c {
				return &ls[i]
			}
		}
		return nil
	}
	pair := func(s, o *Level) (*float64, *float64) {
		if o == nil {
			return nil, nil
		}
		var tp *float64
		if o.ThroughputRPS > 0 {
			v := round(s.ThroughputRPS/o.ThroughputRPS, 3)
			tp = &v
		}
		d := round(s.LatencyUS.P50-o.LatencyUS.P50, 1)
		return tp, &d
	}
	out := []Ratio{}
	for i := range served {
		s := &served[i]
		r := Ratio{Concurrency: s.Concurrency}
		r.ThroughputServedOverRaw, r.P50ServedMinusRawUS = pair(s, find(raw, s.Concurrency))
		r.ThroughputServedOverRawCodec, r.P50ServedMinusRawCodecUS = pair(s, find(codec, s.Concurrency))
		if r.P50ServedMinusRawUS != nil || r.P50ServedMinusRawCodecUS != nil {
			out = append(out, r)
		}
	}
	return out
}

// Best is the level with the highest throughput (nil for none).
func Best(levels []Level) *Level {
	var b *Level
	for i := range levels {
		if b == nil || levels[i].ThroughputRPS > b.ThroughputRPS {
			b = &levels[i]
		}
	}
	return b
}

// Mode titles, in table order.
const (
	titleServed   = "served: HTTP POST /predict"
	titleRaw      = "raw: in-process Predict (no HTTP, no JSON)"
	titleRawCodec = "raw+codec: in-process DecodeRequest + Predict + AppendJSON (no HTTP)"
)

// servedTitle names the served mode by the protocol it used.
func (r *Report) servedTitle() string {
	switch Protocol(r.Settings.Protocol) {
	case ProtocolV2JSON:
		return "served: HTTP POST /v2/models/{name}/infer, JSON tensors (v2-json)"
	case ProtocolV2Binary:
		return "served: HTTP POST /v2/models/{name}/infer, binary tensors (v2-binary)"
	case ProtocolGRPC:
		return "served: gRPC inference.GRPCInferenceService/ModelInfer, raw tensors (grpc)"
	}
	return titleServed
}

// WriteTable prints the report as aligned tables: a header, one table per
// mode, the ratios and the notes.
func (r *Report) WriteTable(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "svc bench: %s (version %s) at %s", r.Model.Name, r.Model.Version, r.Target.URL)
	if r.Target.StartedServer {
		fmt.Fprint(bw, ", started by svc bench")
		if len(r.Target.ServeArgs) > 0 {
			fmt.Fprintf(bw, " with %s", strings.Join(r.Target.ServeArgs, " "))
		}
	}
	fmt.Fprintln(bw)
	if r.Target.Provider != "" {
		fmt.Fprintf(bw, "provider: %s", r.Target.Provider)
		if r.Target.RawProvider != "" {
			fmt.Fprintf(bw, " (in-process: %s)", r.Target.RawProvider)
		}
		fmt.Fprintln(bw)
	}
	if r.Settings.InputFile != "" {
		fmt.Fprintf(bw, "input: %s (%d bytes", r.Settings.InputFile, r.Settings.BodyBytes)
		if r.Settings.ContentType != "" {
			fmt.Fprintf(bw, ", %s", r.Settings.ContentType)
		}
		fmt.Fprintln(bw, ")")
	} else {
		var ins []string
		for _, in := range r.Model.Inputs {
			ins = append(ins, fmt.Sprintf("%s %s %s", in.Name, in.Type, formatShape(in.Shape)))
		}
		fmt.Fprintf(bw, "input: %s; %d random bodies of about %d bytes (seed %d)\n", strings.Join(ins, ", "), r.Settings.Bodies, r.Settings.BodyBytes, r.Settings.Seed)
	}
	fmt.Fprintf(bw, "load: closed loop, per level %s after %s warm-up\n", r.Settings.bound(), fmtSeconds(r.Settings.WarmupS))
	cpu := fmt.Sprintf("%d CPUs", r.Machine.CPUs)
	if r.Machine.CPUModel != "" {
		cpu += " (" + r.Machine.CPUModel + ")"
	}
	if r.Machine.SharedWithServer {
		cpu += "; the load generator shares them with the server"
	}
	fmt.Fprintf(bw, "machine: %s\n", cpu)

	for _, m := range []struct {
		title  string
		levels []Level
	}{{r.servedTitle(), r.Served}, {titleRaw, r.Raw}, {titleRawCodec, r.RawCodec}} {
		if len(m.levels) == 0 {
			continue
		}
		fmt.Fprintf(bw, "\n%s\n", m.title)
		writeLevels(bw, m.levels)
	}
	if r.RawSkipped != "" {
		fmt.Fprintf(bw, "\nraw, raw+codec: not measured (%s)\n", r.RawSkipped)
	}
	if len(r.Ratios) > 0 {
		fmt.Fprintf(bw, "\nserved vs in-process\n")
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "concurrency\tthroughput served/raw\tp50 served−raw\tthroughput served/raw+codec\tp50 served−raw+codec\t\n")
		for _, q := range r.Ratios {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t\n", q.Concurrency, fmtRatio(q.ThroughputServedOverRaw), fmtDelta(q.P50ServedMinusRawUS),
				fmtRatio(q.ThroughputServedOverRawCodec), fmtDelta(q.P50ServedMinusRawCodecUS))
		}
		_ = tw.Flush()
	}
	if firstErrors := errorLines(r); len(firstErrors) > 0 {
		fmt.Fprintln(bw)
		for _, l := range firstErrors {
			fmt.Fprintln(bw, l)
		}
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(bw)
		for _, n := range r.Notes {
			fmt.Fprintf(bw, "note: %s\n", n)
		}
	}
	return bw.Flush()
}

func writeLevels(w io.Writer, levels []Level) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "concurrency\trequests\tthroughput\tp50\tp90\tp99\tmax\terrors\t\n")
	for _, l := range levels {
		c := strconv.Itoa(l.Concurrency)
		if l.Interrupted {
			c += " (cut short)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s/s\t%s\t%s\t%s\t%s\t%d\t\n", c, l.Requests, fmtRate(l.ThroughputRPS),
			FormatMicros(l.LatencyUS.P50), FormatMicros(l.LatencyUS.P90), FormatMicros(l.LatencyUS.P99), FormatMicros(l.LatencyUS.Max), l.Errors)
	}
	_ = tw.Flush()
}

// errorLines lists the first error of each level that had errors.
func errorLines(r *Report) []string {
	var out []string
	for _, m := range []struct {
		name   string
		levels []Level
	}{{"served", r.Served}, {"raw", r.Raw}, {"raw+codec", r.RawCodec}} {
		for _, l := range m.levels {
			if l.Errors > 0 {
				out = append(out, fmt.Sprintf("errors: %s concurrency %d: %d, the first: %s", m.name, l.Concurrency, l.Errors, l.FirstError))
			}
		}
	}
	return out
}

func (s Settings) bound() string {
	switch {
	case s.Requests > 0 && s.DurationS > 0:
		return fmt.Sprintf("%d requests or %s, whichever comes first,", s.Requests, fmtSeconds(s.DurationS))
	case s.Requests > 0:
		return fmt.Sprintf("%d requests", s.Requests)
	}
	return fmtSeconds(s.DurationS)
}

func fmtSeconds(s float64) string {
	return time.Duration(s * float64(time.Second)).String()
}

// FormatMicros writes a latency given in µs with a unit that keeps three
// or four significant digits: 87.5µs, 412µs, 1.93ms, 2.41s.
func FormatMicros(us float64) string {
	switch {
	case us == 0:
		return "-"
	case us < 100:
		return strconv.FormatFloat(us, 'f', 1, 64) + "µs"
	case us < 1000:
		return strconv.FormatFloat(us, 'f', 0, 64) + "µs"
	case us < 1e6:
		return strconv.FormatFloat(us/1e3, 'f', 2, 64) + "ms"
	}
	return strconv.FormatFloat(us/1e6, 'f', 2, 64) + "s"
}

func fmtRate(r float64) string {
	if r >= 100 {
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strconv.FormatFloat(r, 'f', 1, 64)
}

func fmtRatio(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

func fmtDelta(v *float64) string {
	if v == nil {
		return "-"
	}
	if *v == 0 {
		return "0µs"
	}
	sign := "+"
	if *v < 0 {
		sign = "−"
	}
	return sign + FormatMicros(math.Abs(*v))
}

// machine describes this machine.
func machine() Machine {
	return Machine{
		CPUs:     runtime.NumCPU(),
		CPUModel: cpuModel(),
		OS:       runtime.GOOS,
		Arch:     runtime.GOARCH,
		Go:       runtime.Version(),
	}
}

// cpuModel is the first "model name" of /proc/cpuinfo ("" elsewhere).
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
