package main

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

// The runs of build/bench-served.sh: per model, served-MODEL-raw.json
// (rawbatch: the raw baseline), served-MODEL-svcbench-cC.json (svc bench
// --url) and served-MODEL-wrk-cC.json (wrk with build/bench-wrk.lua),
// each load run with a .cpu.json.
var servedModels = []struct{ key, title, input string }{
	{"tiny", "tiny model", "testdata/models/classifier.onnx, input [1, 4]"},
	{"cls", "PaddleOCR cls", "build/models/paddleocr-cls, input x [1, 3, 48, 192]"},
	{"det", "PaddleOCR det", "build/models/paddleocr-det, input x [1, 3, 224, 256]"},
}

// LoadCPU is the CPU time the server and the load generator used over one
// load run (bench-lib.sh's with_cpu: warm-up included, for svc bench).
type LoadCPU struct {
	WallS      float64 `json:"wall_s"`
	ServerCPUS float64 `json:"server_cpu_s"`
	ClientCPUS float64 `json:"client_cpu_s"`
}

// percent is CPU seconds per wall second, as top shows it: 100 % is one
// core.
func (c LoadCPU) percent(s float64) string {
	if c.WallS <= 0 {
		return ""
	}
	return fmt.Sprintf("%.0f %%", 100*s/c.WallS)
}

// Wrk is what build/bench-wrk.lua writes when a wrk run ends.
type Wrk struct {
	Requests    int64  `json:"requests"`
	DurationUS  int64  `json:"duration_us"`
	Non200      int64  `json:"non200"`
	FirstNon200 string `json:"first_non200"`
	Errors      struct {
		Connect int64 `json:"connect"`
		Read    int64 `json:"read"`
		Write   int64 `json:"write"`
		Status  int64 `json:"status"`
		Timeout int64 `json:"timeout"`
	} `json:"errors"`
	LatencyUS struct {
		Mean float64 `json:"mean"`
		P50  float64 `json:"p50"`
		P90  float64 `json:"p90"`
		P99  float64 `json:"p99"`
		Max  float64 `json:"max"`
	} `json:"latency_us"`
	// MeasuredUS is the script's own timing of each request, without
	// wrk's correction for coordinated omission (WRK_LATENCY=1); nil when
	// the run did not time requests.
	MeasuredUS *struct {
		Count int64   `json:"count"`
		Mean  float64 `json:"mean"`
		P50   float64 `json:"p50"`
		P90   float64 `json:"p90"`
		P99   float64 `json:"p99"`
		Max   float64 `json:"max"`
	} `json:"measured_us"`
	Threads int `json:"threads"`
	Bodies  int `json:"bodies"`
}

// Failed counts the requests that did not get a 200: other statuses and
// socket errors (connect, read, write, timeout).
func (w *Wrk) Failed() int64 {
	return w.Non200 + w.Errors.Connect + w.Errors.Read + w.Errors.Write + w.Errors.Timeout
}

// RPS is the 200 answers per second of the run.
func (w *Wrk) RPS() float64 {
	if w.DurationUS <= 0 {
		return 0
	}
	return float64(w.Requests-w.Non200) / (float64(w.DurationUS) / 1e6)
}

// ServedLevel is one concurrency level of one model: the svc bench run
// and the wrk run against the same server (nil: missing).
type ServedLevel struct {
	Concurrency int
	Bench       *bench.Report
	BenchCPU    *LoadCPU
	Wrk         *Wrk
	WrkCPU      *LoadCPU
}

// benchLevel is the svc bench run's measured level.
func (l ServedLevel) benchLevel() *bench.Level {
	if l.Bench == nil || len(l.Bench.Served) == 0 {
		return nil
	}
	return &l.Bench.Served[0]
}

// ServedModel is one model's runs.
type ServedModel struct {
	Key, Title, Input string
	Raw               *RawBatch
	Levels            []ServedLevel
}

// Served holds the models that have runs, in servedModels order.
type Served []ServedModel

var servedLevelFile = regexp.MustCompile(`^served-([a-z]+)-(svcbench|wrk)-c([0-9]+)\.json$`)

// readServed reads what build/bench-served.sh wrote.
func readServed(dir string) (Served, error) {
	names, err := filepath.Glob(filepath.Join(dir, "served-*.json"))
	if err != nil {
		return nil, err
	}
	levels := map[string]map[int]*ServedLevel{}
	for _, path := range names {
		m := servedLevelFile.FindStringSubmatch(filepath.Base(path))
		if m == nil {
			continue
		}
		c, _ := strconv.Atoi(m[3])
		if levels[m[1]] == nil {
			levels[m[1]] = map[int]*ServedLevel{}
		}
		l := levels[m[1]][c]
		if l == nil {
			l = &ServedLevel{Concurrency: c}
			levels[m[1]][c] = l
		}
		base := filepath.Base(path)
		cpu := &LoadCPU{}
		ok, err := readJSON(dir, strings.TrimSuffix(base, ".json")+".cpu.json", cpu)
		if err != nil {
			return nil, err
		}
		if !ok {
			cpu = nil
		}
		if m[2] == "svcbench" {
			l.Bench, l.BenchCPU = &bench.Report{}, cpu
			if _, err := readJSON(dir, base, l.Bench); err != nil {
				return nil, err
			}
		} else {
			l.Wrk, l.WrkCPU = &Wrk{}, cpu
			if _, err := readJSON(dir, base, l.Wrk); err != nil {
				return nil, err
			}
		}
	}
	var out Served
	for _, sm := range servedModels {
		m := ServedModel{Key: sm.key, Title: sm.title, Input: sm.input}
		var raw RawBatch
		ok, err := readJSON(dir, "served-"+sm.key+"-raw.json", &raw)
		if err != nil {
			return nil, err
		}
		if ok {
			m.Raw = &raw
		}
		for _, l := range levels[sm.key] {
			m.Levels = append(m.Levels, *l)
		}
		slices.SortFunc(m.Levels, func(a, b ServedLevel) int { return a.Concurrency - b.Concurrency })
		if m.Raw != nil || len(m.Levels) > 0 {
			out = append(out, m)
		}
	}
	return out, nil
}

// BaselineMode is one in-process mode of the raw baseline: items/s over
// the repetitions.
type BaselineMode struct {
	Label string
	Items Stat
}

// Baseline lists the raw baseline's modes (batch 1 and batch 8 on one
// session, N sessions × T threads at batch 1) and picks the strongest: the
// mode whose best repetition reached the most items/s (on a shared
// machine, the least disturbed run). The baseline is that repetition's
// items/s, Items.Max.
func Baseline(r *RawBatch) (modes []BaselineMode, best *BaselineMode) {
	if r == nil {
		return nil, nil
	}
	for _, b := range r.Batches() {
		modes = append(modes, BaselineMode{Label: fmt.Sprintf("batch %d, one session", b), Items: r.Rows(b)})
	}
	type key struct{ n, t int }
	var keys []key
	for _, run := range r.Runs {
		if k := (key{run.Sessions, run.Threads}); run.Sessions > 0 && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		var vals []float64
		var errs int64
		for _, run := range r.Runs {
			if run.Sessions == k.n && run.Threads == k.t {
				vals = append(vals, run.RowsPerS)
				errs += run.Level.Errors
			}
		}
		modes = append(modes, BaselineMode{Label: fmt.Sprintf("%d %s × %d %s, batch 1", k.n, plural(k.n, "session"), k.t, plural(k.t, "thread")), Items: statOf(vals, errs)})
	}
	for i := range modes {
		if modes[i].Items.ok() && (best == nil || modes[i].Items.Max > best.Items.Max) {
			best = &modes[i]
		}
	}
	return modes, best
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// ServedTargets checks that every served run answered only 200s (svc
// bench's errors, wrk's non-200 answers and socket errors).
func ServedTargets(s Served) []Target {
	t := Target{Key: "served-200", Goal: "served ÷ raw baseline rows (tiny model, PaddleOCR cls and det; svc bench and wrk): every answer a 200", Measured: "not measured"}
	var runs, failed int64
	var where []string
	for _, m := range s {
		for _, l := range m.Levels {
			if bl := l.benchLevel(); bl != nil {
				runs++
				if bl.Errors > 0 {
					failed += bl.Errors
					where = append(where, fmt.Sprintf("%s c=%d svc bench %d", m.Title, l.Concurrency, bl.Errors))
				}
			}
			if l.Wrk != nil {
				runs++
				if n := l.Wrk.Failed(); n > 0 {
					failed += n
					where = append(where, fmt.Sprintf("%s c=%d wrk %d", m.Title, l.Concurrency, n))
				}
			}
		}
	}
	if runs == 0 {
		return []Target{t}
	}
	t.Met = met(failed == 0)
	t.Measured = fmt.Sprintf("%d failed requests in %d runs", failed, runs)
	if failed > 0 {
		t.Measured += " (" + strings.Join(where, "; ") + ")"
		t.Miss = fmt.Sprintf("%d failed requests", failed)
	}
	return []Target{t}
}

// writeServed renders the raw baseline and every served level as a ratio
// to it, with the CPU the server and the load generator used.
func writeServed(w io.Writer, s Served, cpus int) {
	fmt.Fprintln(w, "## Served ÷ raw baseline: svc bench and wrk")
	fmt.Fprintln(w)
	if len(s) == 0 {
		fmt.Fprintln(w, "Not measured.")
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintln(w, "`build/bench-served.sh`. **The raw baseline** is the best of three in-process runs of ONNX Runtime (`cmd/rawbatch`: no HTTP, no JSON, the inputs decoded beforehand): batch 1 in one closed loop on one session with ONNX Runtime's default threads, batch 8 the same way (items/s = 8 × runs/s), and one session per core with 1 intra-op thread each, each session in its own closed loop at batch 1. The table gives the median over the repetitions with their range; the baseline is the highest items/s any repetition reached (on a machine shared with other jobs, the least disturbed run), so every ratio below is against the strongest in-process figure of the run.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| model | mode | items/s | |")
	fmt.Fprintln(w, "|---|---|--:|---|")
	for _, m := range s {
		modes, best := Baseline(m.Raw)
		if len(modes) == 0 {
			fmt.Fprintf(w, "| %s | | not measured | |\n", m.Title)
			continue
		}
		for i := range modes {
			mark := ""
			if &modes[i] == best {
				mark = fmt.Sprintf("**baseline: %s**", fmtRPS(best.Items.Max))
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", m.Title, modes[i].Label, fmtStat(modes[i].Items, fmtRPS), mark)
		}
	}
	fmt.Fprintln(w)
	if d := disturbed(s); len(d) > 0 {
		fmt.Fprintf(w, "**Disturbed:** the repetitions of %s differ by more than 2× (lowest to highest), most likely because other jobs on the machine took the cores from them. Where the disturbed mode is the one that should win, the baseline is too low and that model's ratios below too high.\n\n", strings.Join(d, "; "))
	}
	fmt.Fprintf(w, "**Served**: one `svc serve MODEL` with the defaults per model, loaded at each concurrency level first by `svc bench --url` (its own warm-up, then the measured phase), then right after by [wrk](https://github.com/wg/wrk) 4.1 (`build/bench-wrk.lua`: the same request bodies svc bench sends, seed 1, rotated, POST /predict with `Content-Type: application/json`; every answer other than a 200 counted). Both are closed loops of C connections; wrk's run has no warm-up of its own (the server is warm from svc bench's). Throughput counts 200 answers per second; ÷ baseline divides it by the baseline above. CPU is the CPU time over the wall time of the run (`/proc/<pid>/stat` for the server, the shell's `times` for the load generator; svc bench's warm-up included), 100 %% = one core, %d %% = all %d cores: the load generator runs on the same cores as the server.\n", 100*cpus, cpus)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| model | concurrency | client | served | ÷ baseline | p50 | p99 | server CPU | client CPU | failed |")
	fmt.Fprintln(w, "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|")
	for _, m := range s {
		_, best := Baseline(m.Raw)
		ratio := func(rps float64) string {
			if best == nil || best.Items.Max <= 0 {
				return ""
			}
			return fmtRatio(rps / best.Items.Max)
		}
		cpu := func(c *LoadCPU) (string, string) {
			if c == nil {
				return "", ""
			}
			return c.percent(c.ServerCPUS), c.percent(c.ClientCPUS)
		}
		var bestBench, bestWrk float64
		for _, l := range m.Levels {
			if bl := l.benchLevel(); bl != nil {
				sc, cc := cpu(l.BenchCPU)
				fmt.Fprintf(w, "| %s | %d | svc bench | %.1f/s | %s | %s | %s | %s | %s | %d |\n", m.Title, l.Concurrency, bl.ThroughputRPS, ratio(bl.ThroughputRPS),
					bench.FormatMicros(bl.LatencyUS.P50), bench.FormatMicros(bl.LatencyUS.P99), sc, cc, bl.Errors)
				bestBench = max(bestBench, bl.ThroughputRPS)
			} else {
				fmt.Fprintf(w, "| %s | %d | svc bench | not measured | | | | | | |\n", m.Title, l.Concurrency)
			}
			if l.Wrk != nil {
				sc, cc := cpu(l.WrkCPU)
				failed := strconv.FormatInt(l.Wrk.Failed(), 10)
				if l.Wrk.Failed() > 0 {
					failed = "**" + failed + "**"
					if l.Wrk.FirstNon200 != "" {
						failed += " (first: " + mdEscape(clip(l.Wrk.FirstNon200, 80)) + ")"
					}
				}
				fmt.Fprintf(w, "| %s | %d | wrk | %.1f/s | %s | %s | %s | %s | %s | %s |\n", m.Title, l.Concurrency, l.Wrk.RPS(), ratio(l.Wrk.RPS()),
					bench.FormatMicros(l.Wrk.LatencyUS.P50), bench.FormatMicros(l.Wrk.LatencyUS.P99), sc, cc, failed)
				bestWrk = max(bestWrk, l.Wrk.RPS())
			} else {
				fmt.Fprintf(w, "| %s | %d | wrk | not measured | | | | | | |\n", m.Title, l.Concurrency)
			}
		}
		if best != nil && (bestBench > 0 || bestWrk > 0) {
			fmt.Fprintf(w, "| %s | best | svc bench / wrk | %.1f/s / %.1f/s | **%s / %s** | | | | | |\n", m.Title, bestBench, bestWrk, ratio(bestBench), ratio(bestWrk))
		}
	}
	fmt.Fprintln(w)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// mdEscape keeps text inside a table cell.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "`", "'").Replace(s)
}

// fmtRatio writes a ratio with two decimals, or three below 0.1.
func fmtRatio(r float64) string {
	if r < 0.1 {
		return fmt.Sprintf("%.3f", r)
	}
	return fmt.Sprintf("%.2f", r)
}

// disturbed lists the baseline modes whose repetitions differ by more
// than 2×.
func disturbed(s Served) []string {
	var out []string
	for _, m := range s {
		modes, _ := Baseline(m.Raw)
		for _, x := range modes {
			if x.Items.N > 1 && x.Items.Max > 2*x.Items.Min {
				out = append(out, fmt.Sprintf("%s, %s (%s–%s items/s)", m.Title, x.Label, fmtRPS(x.Items.Min), fmtRPS(x.Items.Max)))
			}
		}
	}
	return out
}
