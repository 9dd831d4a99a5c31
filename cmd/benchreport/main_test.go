package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

func lvl(c int, rps, p50 float64) bench.Level {
	return bench.Level{Concurrency: c, Requests: 100, ThroughputRPS: rps, LatencyUS: bench.Latency{P50: p50}}
}

func TestTargets(t *testing.T) {
	tests := []struct {
		name string
		tiny *bench.Report
		cls  *bench.Report
		mem  *Memory
		want []string // result per target
	}{
		{
			name: "all met",
			tiny: &bench.Report{Served: []bench.Level{lvl(1, 5000, 180), lvl(2, 8000, 220)}, Raw: []bench.Level{lvl(1, 60000, 40)}},
			cls:  &bench.Report{Served: []bench.Level{lvl(1, 150, 6000), lvl(4, 300, 12000)}, RawCodec: []bench.Level{lvl(1, 200, 5000), lvl(4, 360, 11000)}},
			mem:  &Memory{Requests1: 2008, RSSKiB1: 50000, Requests2: 20016, RSSKiB2: 54000},
			want: []string{"**met**", "**met**", "**met**"},
		},
		{
			name: "all missed",
			tiny: &bench.Report{Served: []bench.Level{lvl(1, 3000, 245.3)}, Raw: []bench.Level{lvl(1, 70000, 9.6)}},
			cls:  &bench.Report{Served: []bench.Level{lvl(4, 250, 12000)}, RawCodec: []bench.Level{lvl(2, 400, 5000)}},
			mem:  &Memory{Requests1: 2008, RSSKiB1: 50000, Requests2: 20016, RSSKiB2: 56000},
			want: []string{"**missed**", "**missed**", "**missed**"},
		},
		{
			name: "served errors miss",
			tiny: &bench.Report{Served: []bench.Level{{Concurrency: 1, Requests: 10, Errors: 10}}, Raw: []bench.Level{lvl(1, 70000, 9.6)}},
			cls:  &bench.Report{Served: []bench.Level{{Concurrency: 1, Requests: 100, Errors: 3, ThroughputRPS: 400}}, RawCodec: []bench.Level{lvl(1, 400, 5000)}},
			mem:  &Memory{Requests1: 2008, RSSKiB1: 50000, Requests2: 20016, RSSKiB2: 50000, Errors: 1},
			want: []string{"**missed**", "**missed**", "**missed**"},
		},
		{
			name: "nothing measured",
			tiny: &bench.Report{Served: []bench.Level{lvl(2, 3000, 245)}},
			want: []string{"not checked", "not checked", "not checked"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Targets(tt.tiny, tt.cls, tt.mem)
			if len(got) != 3 {
				t.Fatalf("%d targets", len(got))
			}
			for i, tg := range got {
				if tg.result() != tt.want[i] {
					t.Errorf("target %d (%s): %s (%s), want %s", i, tg.Goal, tg.result(), tg.Measured, tt.want[i])
				}
			}
		})
	}
	got := Targets(&bench.Report{Served: []bench.Level{lvl(1, 3000, 245.3)}, Raw: []bench.Level{lvl(1, 70000, 9.6)}}, nil, nil)
	if got[0].Measured != "235.7 µs (served p50 245.3 µs, raw p50 9.6 µs)" {
		t.Fatalf("measured = %q", got[0].Measured)
	}
}

func TestParseGoBench(t *testing.T) {
	out := `goos: linux
pkg: github.com/svc-dev/svc/core/tensor
cpu: AMD EPYC
BenchmarkDecode/classifier-2                  	 2879102	       390.6 ns/op	  84.48 MB/s	       109.1 cpu-MB/s	     128 B/op	       5 allocs/op
BenchmarkEncode/int64_8x512-2  24238  53986 ns/op  0 B/op  0 allocs/op
PASS
ok  	github.com/svc-dev/svc/core/tensor	14.838s
`
	rows := parseGoBench(out)
	if len(rows) != 2 || rows[0].Pkg != "github.com/svc-dev/svc/core/tensor" || rows[0].N != 2879102 || len(rows[0].Metrics) != 5 {
		t.Fatalf("rows = %+v", rows)
	}
	var b bytes.Buffer
	writeGoBench(&b, rows)
	want := "| core/tensor | BenchmarkDecode/classifier-2 | 390.6 | 84.48 | 128 | 5 | 109.1 cpu-MB/s |"
	if !strings.Contains(b.String(), want) {
		t.Fatalf("table lacks %q:\n%s", want, b.String())
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	put := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tiny := bench.Report{
		Machine: bench.Machine{CPUs: 2, CPUModel: "AMD EPYC", OS: "linux", Arch: "amd64", Go: "go1.26"},
		Served:  []bench.Level{lvl(1, 3000, 245.3)}, Raw: []bench.Level{lvl(1, 70000, 9.6)}, RawCodec: []bench.Level{lvl(1, 60000, 11)},
	}
	b, _ := json.Marshal(tiny)
	put(fileTiny, string(b))
	put(fileMemory, `{"rss_kib_1": 51200, "rss_kib_2": 52224}`)
	put(fileMemory1, `{"settings": {"bodies": 8}, "served": [{"concurrency": 4, "requests": 2000}]}`)
	put(fileMemory2, `{"settings": {"bodies": 8}, "served": [{"concurrency": 4, "requests": 18000}]}`)
	put(fileCommands, "build/bin/svc bench testdata/models/classifier.onnx --json")
	put(fileEnv, "date: 2026-01-01T00:00:00Z\ncommit: abc123\nload_before: 0.10 0.20 0.30\nload_after: 1.00 0.50 0.40\ncls_status: 1\n")
	put(fileGoBench, "pkg: github.com/svc-dev/svc/openapi\nBenchmarkValidate/small-2  532509  5056 ns/op  6.53 MB/s  2152 B/op  27 allocs/op\n")

	for i, rps := range []float64{560, 540, 550, 550} {
		on := rep([3]float64{1, 250, 4000 + float64(i)}, [3]float64{8, 500, 16000}, [3]float64{32, rps, 58000})
		off := rep([3]float64{1, 250, 4100}, [3]float64{8, 450, 17000}, [3]float64{32, 500, 62000})
		put(fmt.Sprintf("tune-default-r%d.json", i+1), string(mustJSON(t, on)))
		put(fmt.Sprintf("tune-nobatch-r%d.json", i+1), string(mustJSON(t, off)))
	}
	put(fileRawBatch, string(mustJSON(t, rawBatch([]float64{600}, []float64{840}))))
	writeProfileFiles(t, dir, profBatchOff, bench.Report{Machine: bench.Machine{CPUs: 2}, Settings: bench.Settings{DurationS: 4}, Served: []bench.Level{lvl(32, 500, 60000)}}, `{"wall_s": 4, "server_cpu_s": 6, "server_cpu_total_s": 6.67, "bench_cpu_s": 2}`)

	out := filepath.Join(dir, "BENCHMARKS.md")
	if err := run([]string{"-dir", dir, "-out", out}, nil); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# Benchmarks",
		"at commit `abc123`",
		"- CPU: AMD EPYC, 2 cores. **The load generator shares them with the server**",
		"before the run: 0.10 0.20 0.30; after: 1.00 0.50 0.40",
		"| tiny model, concurrency 1: p50(/predict) − p50(raw) ≤ 150 µs | 235.7 µs (served p50 245.3 µs, raw p50 9.6 µs) | **missed** |",
		"| PaddleOCR cls: best served throughput ≥ 80 % of best raw+codec throughput | not measured | not checked |",
		"| 50.0 MiB after 2008 requests, 51.0 MiB after 20016 (+2.0 %) | **met** |",
		"build/bin/svc bench testdata/models/classifier.onnx --json",
		"| openapi | BenchmarkValidate/small-2 | 5056 | 6.53 | 2152 | 27 |  |",
		"```\nsvc bench:  (version ) at \n",
		"served: HTTP POST /predict\n  concurrency  requests  throughput    p50  p90  p99  max  errors\n            1       100      3000/s  245µs    -    -    -       0\n",
		"Best served throughput 3000.0/s (concurrency 1); best raw 70000.0/s (concurrency 1); best raw+codec 60000.0/s (concurrency 1).",
		"Not measured (svc bench exited with status 1).",
		"VmRSS from `/proc/<pid>/status` was 50.0 MiB after 2008",
		// served +10 %, raw +40 %: ratio 0.25.
		"| PaddleOCR cls, concurrency 32: served gain from batching (on ÷ off − 1) ≥ 80 % of ONNX Runtime's in-process gain at batch 8 over batch 1 (rows/s) | 0.25 (served gain +10.0 %, in-process gain +40.0 %; the medians over the rounds of on ÷ off and of batch 8 ÷ batch 1. Medians: served 550/s on, 500/s off; in process 840 rows/s at batch 8, 600 at batch 1) | **missed** |",
		"| PaddleOCR cls, concurrency 1: p50 with batching on ≤ 1.05 × p50 with batching off | 0.976 (the median over 4 rounds of on ÷ off; medians: on 4.00ms, off 4.10ms) | **met** |",
		"svc bench took 25 % of the CPU the server and it used together",
		"### tiny model, concurrency 1: p50(/predict) − p50(raw) ≤ 150 µs\n\n**Missed by 85.7 µs (57 % over the 150 µs budget).**",
		"**Missed by 0.55 (a ratio of 0.25 against 0.80)",
		"**Profile: PaddleOCR cls, concurrency 32, batching off.** `svc serve` with `SVC_CPUPROFILE`, loaded by `svc bench --url` at concurrency 32 for 4 s (100 requests, 500/s, p50 60.00ms). Over the run the server used 6.00 s of CPU and svc bench 2.00 s: **the load generator took 25 % of the CPU the two used**, which together is 100 % of the 2 cores for 4.0 s.",
		"| on (default) | 4.00ms (4.00ms–4.00ms) | 250 (250–250) | 500 (500–500) | 550 (540–560) |",
		"- `batching.enabled`, now true: batching off is clearly worse (c=8 req/s -10 %, c=32 req/s -9 %): keep the default.",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("BENCHMARKS.md lacks %q:\n%s", want, md)
		}
	}
	// The sections in order.
	last := -1
	for _, h := range []string{"## Machine", "## Targets", "## Missed targets", "## Dynamic batching", "## Session tuning", "## svc bench: tiny model", "## svc bench: PaddleOCR cls", "## Memory", "## Go benchmarks", "## Commands"} {
		i := strings.Index(string(md), "\n"+h)
		if i <= last {
			t.Errorf("section %q at %d, after the previous one at %d", h, i, last)
		}
		last = i
	}
}
