package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	grpcapi "github.com/svc-dev/svc/transport/grpcapi"
)

// BenchmarkSequenceStreams measures Silero VAD v5 serving many live audio
// streams (make bench, build/bench-sequences.sh): SEQ_BENCH_STREAMS
// streams (64) send a 512-sample chunk (32 ms of 16 kHz audio) every
// 32 ms for SEQ_BENCH_SECONDS of audio (10), over gRPC ModelStreamInfer
// and over WebSocket, with batching across sequences on and off; the
// server and this load generator share the machine. It reports each
// step's latency (p50, p99), the steps that took longer than the 32 ms a
// chunk lasts, the real-time factor (the worst stream's wall time over its
// audio time: 1.00 keeps up), and the server's CPU per second of audio.
// With SEQ_BENCH_OUT set it appends one JSON line per case there.
func BenchmarkSequenceStreams(b *testing.B) {
	streams := envInt("SEQ_BENCH_STREAMS", 64)
	seconds := envInt("SEQ_BENCH_SECONDS", 10)
	chunks := testScene(b, 1).chunks()
	steps := seconds * vadRate / vadChunk
	for _, proto := range []string{"grpc", "websocket"} {
		for _, batching := range []bool{true, false} {
			name := fmt.Sprintf("%s/batching=%v", proto, batching)
			b.Run(name, func(b *testing.B) {
				for range b.N {
					r := runStreams(b, proto, batching, streams, steps, chunks)
					b.ReportMetric(r.P50, "p50_ms")
					b.ReportMetric(r.P99, "p99_ms")
					b.ReportMetric(r.RTF, "rtf")
					b.ReportMetric(r.CPUPerAudio, "cpu_s/audio_s")
					b.ReportMetric(r.BatchedShare, "batched_share")
					if out := os.Getenv("SEQ_BENCH_OUT"); out != "" {
						line, _ := json.Marshal(r)
						f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
						if err != nil {
							b.Fatal(err)
						}
						fmt.Fprintf(f, "%s\n", line)
						f.Close()
					}
				}
			})
		}
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// streamsResult is one case of BenchmarkSequenceStreams.
type streamsResult struct {
	Proto        string  `json:"proto"`
	Batching     bool    `json:"batching"`
	Streams      int     `json:"streams"`
	AudioS       float64 `json:"audio_s"`
	P50          float64 `json:"p50_ms"`
	P99          float64 `json:"p99_ms"`
	Late         int     `json:"late_steps"`
	Steps        int     `json:"steps"`
	RTF          float64 `json:"rtf"`
	CPUPerAudio  float64 `json:"cpu_s_per_audio_s"`
	BatchedShare float64 `json:"batched_share"`
	MeanBatch    float64 `json:"mean_batch"`
}

func runStreams(b *testing.B, proto string, batching bool, streams, steps int, chunks [][]float32) streamsResult {
	b.Helper()
	cfg := vadConfig(b, fmt.Sprintf("sequence:\n  batching: %v\n", batching))
	httpPort, grpcPort := freePort(b), freePort(b)
	cmd := exec.Command(svcBin, "serve", "vad", "--config", cfg, "--host", "127.0.0.1", "--port", httpPort, "--grpc-port", grpcPort)
	cmd.Env = append(os.Environ(), "ONNXRUNTIME_LIB="+ortLib, "SVC_LOG_FORMAT=json")
	cmd.Env = append(cmd.Env, "SVC_ACCESS_LOG=off")
	cmd.Dir = b.TempDir()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	base := "http://127.0.0.1:" + httpPort
	waitUntil(b, nil, "the server ready", func() error {
		r, err := http.Get(base + "/v2/health/ready")
		if err != nil {
			return err
		}
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			return errors.New(r.Status)
		}
		return nil
	})
	var c *grpcapi.Client
	if proto == "grpc" {
		var err error
		if c, err = grpcapi.NewClient("127.0.0.1:" + grpcPort); err != nil {
			b.Fatal(err)
		}
		defer c.Close()
	}
	cpu0 := procCPU(cmd.Process.Pid)
	lat := make([][]time.Duration, streams)
	wall := make([]time.Duration, streams)
	errs := make([]error, streams)
	var wg sync.WaitGroup
	start := time.Now().Add(100 * time.Millisecond)
	for k := 0; k < streams; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Streams start spread over one chunk's time, as live ones do.
			t0 := start.Add(time.Duration(k) * 32 * time.Millisecond / time.Duration(streams))
			step, closer, err := openStream(proto, c, base)
			if err != nil {
				errs[k] = err
				return
			}
			defer closer()
			for i := 0; i < steps; i++ {
				time.Sleep(time.Until(t0.Add(time.Duration(i) * 32 * time.Millisecond)))
				sent := time.Now()
				if err := step(chunks[(i+k)%len(chunks)]); err != nil {
					errs[k] = err
					return
				}
				lat[k] = append(lat[k], time.Since(sent))
			}
			wall[k] = time.Since(t0)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	cpu := procCPU(cmd.Process.Pid) - cpu0
	var all []time.Duration
	late := 0
	for _, l := range lat {
		for _, d := range l {
			all = append(all, d)
			if d > 32*time.Millisecond {
				late++
			}
		}
	}
	slices.Sort(all)
	pct := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))]) / 1e6 }
	audio := float64(steps) * vadChunk / vadRate
	r := streamsResult{Proto: proto, Batching: batching, Streams: streams, AudioS: audio, P50: pct(0.5), P99: pct(0.99),
		Late: late, Steps: len(all), RTF: slices.Max(wall).Seconds() / audio, CPUPerAudio: cpu / (audio * float64(streams))}
	sc := scrapeBench(b, base)
	if runs := sc["svc_sequence_runs_total"]; runs > 0 {
		r.BatchedShare = sc["svc_sequence_batched_runs_total"] / runs
		r.MeanBatch = sc["svc_sequence_steps_total"] / runs
	}
	return r
}

// openStream opens one stream of the protocol; step sends a chunk and
// waits for its answer.
func openStream(proto string, c *grpcapi.Client, base string) (step func([]float32) error, closer func(), err error) {
	ctx := context.Background()
	if proto == "grpc" {
		st, err := c.Service().ModelStreamInfer(ctx)
		if err != nil {
			return nil, nil, err
		}
		return func(ch []float32) error {
				if err := st.Send(streamRequest(ch, "", false, false)); err != nil {
					return err
				}
				resp, err := st.Recv()
				if err == nil && resp.GetErrorMessage() != "" {
					err = fmt.Errorf("%s", resp.GetErrorMessage())
				}
				return err
			}, func() {
				_ = st.CloseSend()
			}, nil
	}
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v2/models/vad/stream?sr=16000", nil)
	if err != nil {
		return nil, nil, err
	}
	return func(ch []float32) error {
		if err := conn.Write(ctx, websocket.MessageBinary, float32LE(ch)); err != nil {
			return err
		}
		_, body, err := conn.Read(ctx)
		if err == nil && strings.Contains(string(body), `"error"`) {
			err = fmt.Errorf("%s", body)
		}
		return err
	}, func() { _ = conn.Close(websocket.StatusNormalClosure, "") }, nil
}

// procCPU is the CPU seconds process pid has used (user and system).
func procCPU(pid int) float64 {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

// scrapeBench reads the server's sequence counters from /metrics.
func scrapeBench(b *testing.B, base string) map[string]float64 {
	out := map[string]float64{}
	req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	req.Header.Set("Accept", textAccept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "svc_sequence") {
			f := strings.Fields(line)
			if len(f) == 2 {
				v, _ := strconv.ParseFloat(f[1], 64)
				out[f[0]] = v
			}
		}
	}
	return out
}
