package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

func TestParsePprofValue(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
		err  bool
	}{
		{"0", 0, false},
		{"2.46s", 2.46, false},
		{"10ms", 0.010, false},
		{"250us", 250e-6, false},
		{"250µs", 250e-6, false},
		{"40ns", 40e-9, false},
		{"1.5mins", 90, false},
		{"2hrs", 7200, false},
		{"12", 0, true},
		{"xs", 0, true},
		{"", 0, true},
	} {
		got, err := parsePprofValue(tt.in)
		if (err != nil) != tt.err || math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("parsePprofValue(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestParsePprofTop(t *testing.T) {
	b, err := os.ReadFile("testdata/prof-cls-c32-on.cum.txt")
	if err != nil {
		t.Fatal(err)
	}
	samples, duration, cum, flat, err := parsePprofTop(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if samples != 6.13 || duration != 4.19 {
		t.Fatalf("samples %v, duration %v", samples, duration)
	}
	for fn, want := range map[string]float64{
		fnConn:            4.92,
		fnPredict:         2.14,
		fnExternal:        0.82,
		fnDecode[0]:       1.71,
		"runtime.cgocall": 2.19,
		"github.com/svc-dev/svc/core.concatData[go.shape.float32]": 0.09, // "(inline)" dropped
	} {
		if math.Abs(cum[fn]-want) > 1e-9 {
			t.Errorf("cum[%s] = %v, want %v", fn, cum[fn], want)
		}
	}
	if flat["runtime.cgocall"] != 2.19 || flat[fnConn] != 0 {
		t.Errorf("flat: cgocall %v, conn.serve %v", flat["runtime.cgocall"], flat[fnConn])
	}

	for _, bad := range []string{
		"",
		"Duration: 4s, Total samples = 3s (75%)\nno table here\n",
		"Duration: 4s, Total samples = 3q (75%)\n      flat  flat%   sum%        cum   cum%\n",
	} {
		if _, _, _, _, err := parsePprofTop(bad); err == nil {
			t.Errorf("parsePprofTop(%q) succeeded", bad)
		}
	}
}

// profileFrom builds a profile from a -top -cum listing.
func profileFrom(t *testing.T, cumText string, cpu CPUUse) *Profile {
	t.Helper()
	p := &Profile{Name: "x", CPU: cpu}
	var err error
	if p.Samples, p.Duration, p.Cum, p.Flat, err = parsePprofTop(cumText); err != nil {
		t.Fatal(err)
	}
	return p
}

const header = "Duration: 4s, Total samples = 10s (250%)\n      flat  flat%   sum%        cum   cum%\n"

func row(cum, name string) string { return "0 0% 0% " + cum + " 0% " + name + "\n" }

func TestBreakdown(t *testing.T) {
	tests := []struct {
		name  string
		rows  string
		cpu   CPUUse
		want  map[string]float64
		total float64
	}{
		{
			name: "every part",
			rows: row("8s", fnConn) + row("7s", fnHandler) + row("3s", fnPredict) + row("1s", fnExternal) +
				row("1.5s", fnDecode[0]) + row("500ms", fnValidate) + row("200ms", fnReadBody[0]) + row("100ms", fnEncode[0]) +
				row("50ms", fnConcat) + row("50ms", fnSplit) + row("300ms", fnLog[1]) + row("400ms", fnSched) + row("200ms", fnGC),
			cpu: CPUUse{ServerCPUTotalS: 12},
			want: map[string]float64{
				partInference: 4, partDecode: 1.5, partValidate: 0.5, partReadBody: 0.2, partEncode: 0.1, partMerge: 0.1, partLog: 0.3,
				partHandler: 7 - 3 - 1.5 - 0.5 - 0.2 - 0.1 - 0.1 - 0.3, partHTTP: 1, partSched: 0.4, partGC: 0.2,
				partOther: 10 - (4 + 1.5 + 0.5 + 0.2 + 0.1 + 0.1 + 0.3 + 1.3 + 1 + 0.4 + 0.2), partUnsampled: 2,
			},
			total: 12,
		},
		{
			// The /proc figure below the samples (it is read a moment
			// earlier): the samples are the total, nothing is unsampled.
			name:  "fewer seconds than samples",
			rows:  row("9s", fnConn) + row("9s", fnHandler) + row("9s", fnPredict),
			cpu:   CPUUse{ServerCPUTotalS: 9.5},
			want:  map[string]float64{partInference: 9, partHandler: 0, partHTTP: 0, partOther: 1, partUnsampled: 0},
			total: 10,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := profileFrom(t, header+tt.rows, tt.cpu)
			parts, total := p.Breakdown()
			if total != tt.total {
				t.Errorf("total = %v, want %v", total, tt.total)
			}
			sum := 0.0
			got := map[string]float64{}
			for _, q := range parts {
				sum += q.Seconds
				got[q.Key] = q.Seconds
				if q.Seconds < 0 {
					t.Errorf("part %s is negative: %v", q.Key, q.Seconds)
				}
			}
			if math.Abs(sum-total) > 1e-9 {
				t.Errorf("parts add up to %v, not the total %v", sum, total)
			}
			for k, want := range tt.want {
				if math.Abs(got[k]-want) > 1e-9 {
					t.Errorf("%s = %v, want %v", k, got[k], want)
				}
			}
			if s := share(parts, total, partInference); math.Abs(s-tt.want[partInference]/tt.total) > 1e-9 {
				t.Errorf("inference share = %v", s)
			}
		})
	}
}

// The /predict decoding, the result encoding and the handler move to
// transport/rest: a profile classifies alike under the old and the new
// names, and the table names the function it found.
func TestBreakdownMovedFunctions(t *testing.T) {
	b, err := os.ReadFile("testdata/prof-cls-c32-on.cum.txt") // taken before the move
	if err != nil {
		t.Fatal(err)
	}
	before := string(b)
	for _, fn := range []string{fnDecode[0], fnReadBody[0]} {
		if !strings.Contains(before, "  "+fn+"\n") {
			t.Fatalf("testdata lacks %s", fn)
		}
	}
	after := strings.NewReplacer(fnDecode[0], fnDecode[1], fnReadBody[0], fnReadBody[1], fnEncode[0], fnEncode[1]).Replace(before)
	tests := []struct {
		name    string
		cum     string
		seconds map[string]float64 // by part key
		labels  map[string]string  // the function each part's name shows
	}{
		{
			name:    "before the move",
			cum:     before,
			seconds: map[string]float64{partDecode: 1.71, partReadBody: 0.13, partEncode: 0},
			labels:  map[string]string{partDecode: "core/tensor.DecodeRequest", partReadBody: "transport.readBody", partEncode: "core.(*Result).AppendJSON"},
		},
		{
			name:    "after the move",
			cum:     after,
			seconds: map[string]float64{partDecode: 1.71, partReadBody: 0.13, partEncode: 0},
			labels:  map[string]string{partDecode: "transport/rest.DecodeRequest", partReadBody: "transport/rest.readBody", partEncode: "core.(*Result).AppendJSON"},
		},
		{
			name:    "new names only",
			cum:     header + row("1s", fnDecode[1]) + row("200ms", fnReadBody[1]) + row("300ms", fnEncode[1]),
			seconds: map[string]float64{partDecode: 1, partReadBody: 0.2, partEncode: 0.3},
			labels:  map[string]string{partDecode: "transport/rest.DecodeRequest", partReadBody: "transport/rest.readBody", partEncode: "transport/rest.appendResult"},
		},
		{
			// While the code moves, a new function may wrap the old one:
			// the time counts once.
			name:    "one wrapping the other",
			cum:     header + row("1s", fnDecode[1]) + row("900ms", fnDecode[0]) + row("300ms", fnEncode[1]) + row("250ms", fnEncode[0]),
			seconds: map[string]float64{partDecode: 1, partReadBody: 0, partEncode: 0.3},
			labels:  map[string]string{partDecode: "transport/rest.DecodeRequest", partReadBody: "transport.readBody", partEncode: "transport/rest.appendResult"},
		},
		{
			name:    "none sampled",
			cum:     header + row("1s", fnPredict),
			seconds: map[string]float64{partDecode: 0, partReadBody: 0, partEncode: 0},
			labels:  map[string]string{partDecode: "core/tensor.DecodeRequest", partReadBody: "transport.readBody", partEncode: "core.(*Result).AppendJSON"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts, _ := profileFrom(t, tt.cum, CPUUse{}).Breakdown()
			byKey := map[string]Part{}
			for _, q := range parts {
				byKey[q.Key] = q
			}
			for key, want := range tt.seconds {
				if got := byKey[key].Seconds; math.Abs(got-want) > 1e-9 {
					t.Errorf("%s = %v s, want %v", key, got, want)
				}
			}
			for key, fn := range tt.labels {
				if want := "`" + fn + "`"; !strings.HasSuffix(byKey[key].Name, want) {
					t.Errorf("%s is named %q, want it to end in %s", key, byKey[key].Name, want)
				}
			}
		})
	}
}

func TestLoadShare(t *testing.T) {
	for _, tt := range []struct {
		cpu  CPUUse
		want float64
	}{
		{CPUUse{ServerCPUS: 3, BenchCPUS: 1}, 0.25},
		{CPUUse{ServerCPUS: 0, BenchCPUS: 0}, 0},
		{CPUUse{ServerCPUS: 6, BenchCPUS: 0}, 0},
	} {
		if got := tt.cpu.LoadShare(); got != tt.want {
			t.Errorf("%+v: LoadShare = %v, want %v", tt.cpu, got, tt.want)
		}
	}
}

func TestTrimTop(t *testing.T) {
	in := "File: svc\nBuild ID: abc\nType: cpu\nTime: 2026-01-01\nDuration: 4s, Total samples = 1s (25%)\n      flat  flat%\n"
	want := "Type: cpu\nDuration: 4s, Total samples = 1s (25%)\n      flat  flat%"
	if got := trimTop(in); got != want {
		t.Errorf("trimTop = %q, want %q", got, want)
	}
}

// writeProfileFiles writes the four files of profiled run name into dir,
// with the listing of testdata/.
func writeProfileFiles(t *testing.T, dir, name string, run bench.Report, cpuJSON string) {
	t.Helper()
	cum, err := os.ReadFile("testdata/prof-cls-c32-on.cum.txt")
	if err != nil {
		t.Fatal(err)
	}
	top, err := os.ReadFile("testdata/prof-cls-c32-on.top.txt")
	if err != nil {
		t.Fatal(err)
	}
	runJSON := mustJSON(t, run)
	for file, content := range map[string][]byte{
		"prof-" + name + ".json":     runJSON,
		"prof-" + name + ".cpu.json": []byte(cpuJSON),
		"prof-" + name + ".cum.txt":  cum,
		"prof-" + name + ".top.txt":  top,
	} {
		if err := os.WriteFile(filepath.Join(dir, file), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadProfile(t *testing.T) {
	dir := t.TempDir()
	run := bench.Report{Settings: bench.Settings{Bodies: 8, DurationS: 4}, Served: []bench.Level{lvl(32, 600, 50000)}}
	writeProfileFiles(t, dir, profBatchOn, run, `{"wall_s": 4.1, "server_cpu_s": 6.5, "server_cpu_total_s": 6.67, "bench_cpu_s": 0.7}`)
	p, err := readProfile(dir, profBatchOn)
	if err != nil || p == nil {
		t.Fatalf("readProfile: %v, %v", p, err)
	}
	if p.CPU.ServerCPUTotalS != 6.67 || p.Samples != 6.13 || p.requests() != 108 {
		t.Fatalf("profile: cpu %+v, samples %v, requests %d", p.CPU, p.Samples, p.requests())
	}
	parts, total := p.Breakdown()
	if total != 6.67 || math.Abs(share(parts, total, partUnsampled)-0.54/6.67) > 1e-9 {
		t.Fatalf("total %v, unsampled share %v", total, share(parts, total, partUnsampled))
	}

	var b bytes.Buffer
	writeProfile(&b, p, "a title")
	md := b.String()
	for _, want := range []string{
		"**Profile: a title.** `svc serve` with `SVC_CPUPROFILE`, loaded by `svc bench --url` at concurrency 32 for 4 s (100 requests, 600/s, p50 50.00ms).",
		"**the load generator took 10 % of the CPU the two used**",
		"| inference: `core.(*Predictor).Predict` (ONNX Runtime through cgo) and ONNX Runtime's own threads (`runtime._ExternalCode`) | 2.96 | 44.4 % |",
		"| not in the profile: CPU time of the process the Go profiler did not sample | 0.54 | 8.1 % |",
		"`go tool pprof -top -nodecount=25 build/artifacts/bench/prof-cls-c32-on.prof`",
		"      flat  flat%   sum%        cum   cum%\n     2.19s 35.73% 35.73%      2.19s 35.73%  runtime.cgocall\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("profile section lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Build ID") {
		t.Error("profile section keeps the build ID")
	}

	// A missing file: no profile, no error.
	if err := os.Remove(filepath.Join(dir, "prof-"+profBatchOn+".top.txt")); err != nil {
		t.Fatal(err)
	}
	if p, err := readProfile(dir, profBatchOn); p != nil || err != nil {
		t.Fatalf("without top.txt: %v, %v", p, err)
	}
}

func TestWriteWhy(t *testing.T) {
	missed, metT := met(false), met(true)
	targets := []Target{
		{Key: "tiny-p50", Goal: "goal A", Met: missed, Miss: "10.0 µs"},
		{Key: "cls-share", Goal: "goal B", Met: metT},
		{Key: "batch-gain", Goal: "goal C", Met: missed, Miss: "0.20 against 0.80"},
		{Key: "memory", Goal: "goal D", Met: nil},
	}
	d := Data{
		Tiny: &bench.Report{Served: []bench.Level{lvl(1, 5000, 166)}, Raw: []bench.Level{lvl(1, 100000, 6)}},
		Raw:  rawBatch([]float64{600}, []float64{840}),
		Tune: Tuning{
			"default": {rep([3]float64{1, 250, 4000}, [3]float64{32, 550, 58000})},
			"nobatch": {rep([3]float64{1, 250, 4000}, [3]float64{32, 500, 60000})},
		},
		Profiles: map[string]*Profile{
			profBatchOff: profileFrom(t, header+row("10s", fnConn)+row("10s", fnHandler)+row("4s", fnPredict)+row("5s", fnDecode[0]), CPUUse{ServerCPUS: 9, ServerCPUTotalS: 10, BenchCPUS: 1}),
		},
	}
	var b bytes.Buffer
	writeWhy(&b, targets, d)
	md := b.String()
	for _, want := range []string{
		"## Missed targets: by how much and why",
		"### goal A\n\n**Missed by 10.0 µs.**",
		"runs the model (6.0µs in process)",
		"(The profile was not taken.)",
		"### goal C\n\n**Missed by 0.20 against 0.80.**",
		// f = 0.4, g = 0.4: 1/(0.6 + 0.4/1.4) − 1 = +12.9 %, ratio 0.32.
		"inference is 40 % of the server's CPU (40 % if all the time",
		"the served gain would be about +12.9 % (Amdahl's law: 1 ÷ (1 − 0.40 + 0.40 ÷ 1.40) − 1), a ratio of about 0.32: the target is out of reach on this model",
		"The measured gain, +10.0 %, is 78 % of that estimate.",
		"**Profile: PaddleOCR cls, concurrency 32, batching off.**",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("why lacks %q:\n%s", want, md)
		}
	}
	for _, unwanted := range []string{"goal B", "goal D"} {
		if strings.Contains(md, unwanted) {
			t.Errorf("why explains a target that was not missed: %s", unwanted)
		}
	}

	// With both profiles: the table per request; a gain at the estimate.
	runOf := func(rps float64, requests int64) bench.Report {
		l := lvl(32, rps, 50000)
		l.Requests = requests
		return bench.Report{Machine: bench.Machine{CPUs: 2}, Served: []bench.Level{l}}
	}
	d.Profiles[profBatchOff].Run = runOf(500, 1000)
	d.Profiles[profBatchOff].CPU.WallS = 5
	on := profileFrom(t, header+row("10s", fnConn)+row("10s", fnHandler)+row("3s", fnPredict)+row("5s", fnDecode[0]), CPUUse{ServerCPUS: 8, ServerCPUTotalS: 10, BenchCPUS: 1, WallS: 5})
	on.Run = runOf(560, 1000)
	d.Profiles[profBatchOn] = on
	d.Tune["default"] = []bench.Report{rep([3]float64{32, 564, 1}), rep([3]float64{32, 500, 1}), rep([3]float64{32, 620, 1})}
	d.Tune["nobatch"] = []bench.Report{rep([3]float64{32, 500, 1}), rep([3]float64{32, 450, 1}), rep([3]float64{32, 550, 1})}
	b.Reset()
	writeWhy(&b, targets[2:3], d)
	md = b.String()
	for _, want := range []string{
		// Served +12.7 % (the median of 1.128, 1.111, 1.127) against the estimate of +12.9 %.
		"The measured gain, +12.7 %, is as much as that estimate allows (99 % of it;",
		"| server CPU | 8000 | 9000 | -11 % |",
		"| of which inference | 3000 | 4000 | -25 % |",
		"| cores busy (server and svc bench) | 90 % | 100 % | |",
		"| throughput | 560/s | 500/s | +12 % |",
		"With batching on, the inference CPU per request changed by -25 % (in process, a row costs 29 % less at batch 8 than at batch 1) and the server's CPU per request by -11 %",
		"The cores were less busy with batching on (90 % against 100 %)",
		"Throughput changed by +12 % between these two single runs (in the rounds, single runs of the defaults at concurrency 32 ranged from 11 % below to 10 % above their median)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("why lacks %q:\n%s", want, md)
		}
	}

	// p50 at concurrency 1: the rounds go both ways, or not.
	for _, tt := range []struct {
		on   []float64
		want string
	}{
		{[]float64{4200, 3800, 4100}, "Round by round, p50 on ÷ off was 1.05, 0.95, 1.02: batching on was slower in 2 of 3 rounds. The ratio goes both ways, so the miss is most likely the run-to-run noise"},
		{[]float64{4200, 4400, 4100}, "Round by round, p50 on ÷ off was 1.05, 1.10, 1.02: batching on was slower in 3 of 3 rounds.\n"},
	} {
		d.Tune["nobatch"] = []bench.Report{rep([3]float64{1, 250, 4000}), rep([3]float64{1, 250, 4000}), rep([3]float64{1, 250, 4000})}
		d.Tune["default"] = nil
		for _, v := range tt.on {
			d.Tune["default"] = append(d.Tune["default"], rep([3]float64{1, 250, v}))
		}
		b.Reset()
		writeWhy(&b, []Target{{Key: "batch-p50", Goal: "goal E", Met: missed, Miss: "1.0 percentage points"}}, d)
		if !strings.Contains(b.String(), tt.want) || !strings.Contains(b.String(), "`core.(*Batcher).runAlone`") {
			t.Errorf("why p50 lacks %q:\n%s", tt.want, b.String())
		}
	}

	// Side by side, the pairs are the measurement.
	d.Tune[sideOff] = []bench.Report{rep([3]float64{1, 250, 2000}), rep([3]float64{1, 250, 2000})}
	d.Tune[sideOn] = []bench.Report{rep([3]float64{1, 250, 2200}), rep([3]float64{1, 250, 1900})}
	b.Reset()
	writeWhy(&b, []Target{{Key: "batch-p50", Goal: "goal E", Met: missed, Miss: "1.0 percentage points"}}, d)
	if want := "Pair by pair (two servers side by side), p50 on ÷ off was 1.10, 0.95: batching on was slower in 1 of 2 pairs. The ratio goes both ways"; !strings.Contains(b.String(), want) {
		t.Errorf("why p50 lacks %q:\n%s", want, b.String())
	}
	delete(d.Tune, sideOn)
	delete(d.Tune, sideOff)

	b.Reset()
	writeWhy(&b, targets[1:2], d)
	if b.Len() != 0 {
		t.Errorf("nothing missed, yet:\n%s", b.String())
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
