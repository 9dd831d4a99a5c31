package main_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/svc-dev/svc/ci/hostile"
	grpcapi "github.com/svc-dev/svc/transport/grpcapi"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
)

// The bounds tests send what an attacker sends (ci/hostile) and expect
// each to be refused before its work starts, naming the limit and its
// key, by a server that keeps its memory and answers valid requests
// throughout. Their memory is measured on a build without the race
// detector, whose shadow memory would multiply it: on what users run.

// memory is what /proc/PID/status says of a process's memory, in bytes.
type memory struct{ rss, peak int64 }

func (s *server) memory() memory {
	s.t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		s.t.Fatal(err)
	}
	var m memory
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			m.rss = kb << 10
		case "VmHWM:":
			m.peak = kb << 10
		}
	}
	return m
}

// resetPeak resets the process's peak RSS (VmHWM) to its RSS now, so that
// the peak measured afterwards is the attacks', not the model load's.
func (s *server) resetPeak() {
	s.t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.cmd.Process.Pid), []byte("5"), 0); err != nil {
		s.t.Fatal(err)
	}
}

// attackBound is how much a server's peak RSS may grow over a whole run of
// attacks: far above what a refusal costs (a few MiB for the largest body),
// and below what any finding took before it was bounded (from 140 MB for
// one truncated BMP to the whole machine).
const attackBound = 128 << 20

// attack is one hostile request and what it must get: an HTTP status (or
// a gRPC code) and a part of the message.
type attack struct {
	name string
	send func() (int, string)
	want int
	msg  string
}

// run sends each attack, checks its answer, then a valid request (valid
// returns whether it was answered right), and finally that the server's
// peak RSS grew by less than attackBound.
func runAttacks(t *testing.T, s *server, attacks []attack, valid func() bool) {
	t.Helper()
	if !valid() {
		t.Fatal("a valid request failed before the attacks")
	}
	s.resetPeak()
	base := s.memory()
	for _, a := range attacks {
		before := s.memory().rss
		got, msg := a.send()
		t.Logf("%s: rss %d -> %d MiB, peak %d MiB", a.name, before>>20, s.memory().rss>>20, s.memory().peak>>20)
		if got != a.want || !strings.Contains(msg, a.msg) {
			t.Errorf("%s: %d %q, want %d holding %q", a.name, got, msg, a.want, a.msg)
		}
		if !valid() {
			t.Fatalf("%s: a valid request failed after it", a.name)
		}
	}
	if m := s.memory(); m.peak-base.rss > attackBound {
		t.Errorf("the server's peak RSS grew by %d MiB (from %d MiB), more than %d MiB", (m.peak-base.rss)>>20, base.rss>>20, attackBound>>20)
	} else {
		t.Logf("peak RSS %d MiB, %d MiB over %d MiB before the attacks", m.peak>>20, (m.peak-base.rss)>>20, base.rss>>20)
	}
}

// detailOf is a v1 or v2 error's message.
func detailOf(r response) (int, string) {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	if d, ok := m["detail"].(string); ok {
		return r.Status, d
	}
	if e, ok := m["error"].(string); ok {
		return r.Status, e
	}
	return r.Status, string(r.Body)
}

func grpcCode(err error) (int, string) {
	st, _ := status.FromError(err)
	return int(st.Code()), st.Message()
}

// pictureList is a JSON list of n base64 pictures.
func pictureList(p []byte, n int) string {
	enc := `"` + base64.StdEncoding.EncodeToString(p) + `"`
	return "[" + strings.TrimSuffix(strings.Repeat(enc+",", n), ",") + "]"
}

// multipartPictures is a multipart body of n files of field input.
func multipartPictures(t *testing.T, input string, p []byte, n int) (*bytes.Buffer, string) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for range n {
		w, err := mw.CreateFormFile(input, "p.gif")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(p)
	}
	_ = mw.Close()
	return &body, mw.FormDataContentType()
}

// v2Pictures is a v2 REST inference request of n base64 pictures.
func v2Pictures(input string, p []byte, n int) string {
	return `{"inputs":[{"name":"` + input + `","datatype":"BYTES","shape":[` + strconv.Itoa(n) + `],"data":` + pictureList(p, n) + `}]}`
}

// TestBoundsPictures: findings 1, 2 and 5 of the bounds review, through
// every protocol that takes pictures. A batch of one-pixel GIFs made a
// tensor of N whole items before decoding any (260,000 of them asked for
// 156 GB and killed the process); a JPEG of empty scans behind a stray
// byte went past the scan cap (23 s of CPU for 58 KB); a truncated BMP
// header cost 140 MB, a 16-bit PNG of zeros 387 MB, four of them at once
// 1.5 GB. Each is now refused before it is decoded.
func TestBoundsPictures(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	s := startServerBin(t, plainBin(t), nil, "cls", "--config", ocrConfig(t), "--grpc-port", port)
	attacks, valid := pictureAttacks(t, s, grpcClient(t, "127.0.0.1:"+port))
	runAttacks(t, s, attacks, valid)
	s.stopNoPanic()
}

// pictureAttacks are the attacks on s, serving PaddleOCR cls (its gRPC
// client c), and the valid request sent between them.
func pictureAttacks(t *testing.T, s *server, c *grpcapi.Client) ([]attack, func() bool) {
	gif := hostile.GIF1x1()
	post := func(ctype string, body []byte, headers ...string) func() (int, string) {
		return func() (int, string) {
			return detailOf(s.do(http.MethodPost, "/predict", ctype, bytes.NewReader(body), headers...))
		}
	}
	v2 := func(body string) func() (int, string) {
		return func() (int, string) {
			return detailOf(s.do(http.MethodPost, "/v2/models/cls/infer", "application/json", strings.NewReader(body)))
		}
	}
	grpcPictures := func(p []byte, n int) func() (int, string) {
		return func() (int, string) {
			pics := make([][]byte, n)
			for i := range pics {
				pics[i] = p
			}
			_, err := c.Infer(context.Background(), &inference.ModelInferRequest{ModelName: "cls", Inputs: []*inference.ModelInferRequest_InferInputTensor{{
				Name: "x", Datatype: "BYTES", Shape: []int64{int64(n)}, Contents: &inference.InferTensorContents{BytesContents: pics}}}})
			return grpcCode(err)
		}
	}
	png16 := hostile.ZeroPNG16(6000, 6000)
	scans := hostile.ProgressiveJPEG(6000, 6000, 1000, true)
	parallel := func() (int, string) {
		var wg sync.WaitGroup
		got := make([]response, 4)
		for i := range got {
			wg.Go(func() { got[i] = s.do(http.MethodPost, "/predict", "image/png", bytes.NewReader(png16)) })
		}
		wg.Wait()
		for _, r := range got[1:] {
			if r.Status != got[0].Status {
				return r.Status, "the four answers differ"
			}
		}
		return detailOf(got[0])
	}
	many, manyType := multipartPictures(t, "x", gif, 2000)
	attacks := []attack{
		{"2,000 GIFs, v1 JSON", post("application/json", []byte(`{"x":`+pictureList(gif, 2000)+`}`)), 413, "Input 'x': 2000 pictures, more than the 64 one request may send (limits.max_images)"},
		{"260,000 GIFs, v1 JSON", post("application/json", []byte(`{"x":`+pictureList(gif, 260_000)+`}`)), 413, "260000 pictures, more than the 64"},
		{"2,000 GIFs, multipart", post(manyType, many.Bytes()), 413, "(limits.max_images)"},
		{"2,000 GIFs, v2 REST", v2(v2Pictures("x", gif, 2000)), 413, "(limits.max_images)"},
		{"2,000 GIFs, gRPC", grpcPictures(gif, 2000), int(codes.ResourceExhausted), "(limits.max_images)"},
		{"1,000 empty scans behind a stray byte", post("image/jpeg", scans), 400, "jpeg of 6000×6000 pixels in more than 11 scans"},
		{"99 scans at 36 megapixels", post("image/jpeg", hostile.ProgressiveJPEG(6000, 6000, 99, false)), 400, "(limits.max_jpeg_scan_pixels)"},
		{"scans, gRPC", grpcPictures(scans, 1), int(codes.InvalidArgument), "(limits.max_jpeg_scan_pixels)"},
		{"a truncated BMP", post("image/bmp", hostile.TruncatedBMP(6000, 6000)), 400, "bmp of 6000×6000 pixels truncated"},
		{"a 16-bit PNG of zeros", post("image/png", png16), 413, "more than the 256 MiB that requests may hold at once (limits.request_memory)"},
		{"four of them at once", parallel, 413, "(limits.request_memory)"},
		{"a 16-bit PNG, v2 REST", v2(v2Pictures("x", png16, 1)), 413, "(limits.request_memory)"},
		{"too many pixels together", post("application/json", []byte(`{"x":`+pictureList(hostile.ProgressiveJPEG(6000, 6000, 1, false), 5)+`}`)), 413, "pictures of 180000000 pixels together, more than the 160000000 one request may send (limits.max_request_pixels)"},
	}
	valid := func() bool {
		r := s.do(http.MethodPost, "/predict", "application/json", strings.NewReader(`{"x":`+pictureList(gif, 64)+`}`))
		var out map[string][]any
		return r.Status == http.StatusOK && json.Unmarshal(r.Body, &out) == nil && len(out["softmax_0.tmp_0"]) == 64
	}
	return attacks, valid
}

// TestBoundsText: finding 3. {"text": ["a"] × 99,999 + ["hello " × 60]},
// a 500 KB body, took 8.6 GB and 20–35 s on examples/text-embed; a million
// one-letter texts was a Go out-of-memory fatal error. Both are now
// refused before the texts are tokenized, and tokenizing stops at the text
// that takes a request past limits.max_tokens, in every protocol. The
// server runs with limits.max_tokens 16384: at its default, 262,144,
// 2,048 texts of this model's 48 tokens at most cannot reach it.
func TestBoundsText(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte("limits:\n  max_tokens: 16384\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServerBin(t, plainBin(t), nil, filepath.Join(repoRoot, "examples", "text-embed"), "--grpc-port", port, "-c", cfg)
	attacks, valid := textAttacks(t, s, grpcClient(t, "127.0.0.1:"+port))
	runAttacks(t, s, attacks, valid)
	if !strings.Contains(string(s.do(http.MethodPost, "/predict", "application/json", strings.NewReader(`{"text": `+mustJSON(t, manyTexts(2048, "a b c"))+`}`)).Body), `"embedding"`) {
		t.Error("2,048 short texts, within every limit, were refused")
	}
	s.stopNoPanic()
}

// manyTexts is n texts "a", the last one last.
func manyTexts(n int, last string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "a"
	}
	out[n-1] = last
	return out
}

// textAttacks are the attacks on s, serving examples/text-embed (its
// gRPC client c), and the valid request sent between them.
func textAttacks(t *testing.T, s *server, c *grpcapi.Client) ([]attack, func() bool) {
	texts := manyTexts
	long := strings.Repeat("hello ", 60)
	// 2,048 texts of 48 tokens (the model's most): 98,304 tokens.
	longs := slices.Repeat([]string{long}, 2048)
	v1 := func(ts []string) func() (int, string) {
		body, _ := json.Marshal(map[string][]string{"text": ts})
		return func() (int, string) {
			return detailOf(s.do(http.MethodPost, "/predict", "application/json", bytes.NewReader(body)))
		}
	}
	v2 := func(ts []string) func() (int, string) {
		data, _ := json.Marshal(ts)
		body := `{"inputs":[{"name":"text","datatype":"BYTES","shape":[` + strconv.Itoa(len(ts)) + `],"data":` + string(data) + `}]}`
		return func() (int, string) {
			return detailOf(s.do(http.MethodPost, "/v2/models/text-embed/infer", "application/json", strings.NewReader(body)))
		}
	}
	rpc := func(ts []string) func() (int, string) {
		b := make([][]byte, len(ts))
		for i, x := range ts {
			b[i] = []byte(x)
		}
		return func() (int, string) {
			_, err := c.Infer(context.Background(), &inference.ModelInferRequest{ModelName: "text-embed", Inputs: []*inference.ModelInferRequest_InferInputTensor{{
				Name: "text", Datatype: "BYTES", Shape: []int64{int64(len(ts))}, Contents: &inference.InferTensorContents{BytesContents: b}}}})
			return grpcCode(err)
		}
	}
	attacks := []attack{
		{"100,000 texts, one long", v1(texts(100_000, long)), 413, "Input 'text': 100000 texts, more than the 2048 one request may send (limits.max_texts)"},
		{"a million one-letter texts", v1(texts(1_000_000, "a")), 413, "(limits.max_texts)"},
		{"2,048 long texts", v1(longs), 413, "Input 'text': the texts up to item 341 are 16416 tokens, more than the 16384 one request may send (limits.max_tokens)"},
		{"100,000 texts, v2 REST", v2(texts(100_000, long)), 413, "(limits.max_texts)"},
		{"2,048 long texts, v2 REST", v2(longs), 413, "(limits.max_tokens)"},
		{"100,000 texts, gRPC", rpc(texts(100_000, long)), int(codes.ResourceExhausted), "(limits.max_texts)"},
		{"2,048 long texts, gRPC", rpc(longs), int(codes.ResourceExhausted), "(limits.max_tokens)"},
	}
	valid := func() bool {
		r := s.do(http.MethodPost, "/predict", "application/json", strings.NewReader(`{"text": ["hello world", "a", "b"]}`))
		var out map[string][][]float64
		return r.Status == http.StatusOK && json.Unmarshal(r.Body, &out) == nil && len(out["embedding"]) == 3
	}
	return attacks, valid
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// cpu is the CPU time the process has used so far, in clock ticks.
func (s *server) cpu() int64 {
	s.t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		s.t.Fatal(err)
	}
	// The fields after the command's name, which is in parentheses.
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return utime + stime
}

// TestBoundsDeadline: finding 7. With X-Request-Timeout: 2s, a costly
// JPEG answered 504 after 11.4 s: the deadline did not cover decoding,
// and the work went on after the client left. Now the deadline counts
// from the request's arrival, decoding stops when it passes or when the
// client leaves, and the answer is 504 (DEADLINE_EXCEEDED on gRPC). What
// is asserted is the CPU the server spent, against what decoding the
// whole request costs, never a duration.
func TestBoundsDeadline(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	s := startServerBin(t, plainBin(t), nil, "cls", "--config", ocrConfig(t), "--grpc-port", port)
	c := grpcClient(t, "127.0.0.1:"+port)
	// 40 pictures of 100 passes over 4 megapixels each: every limit
	// allows them, and decoding them all is seconds of CPU.
	costly := hostile.ProgressiveJPEG(2000, 2000, 99, true)
	body := func(n int) string { return `{"x":` + pictureList(costly, n) + `}` }
	idle := func() {
		t.Helper()
		waitGauge(t, s, "svc_inference_in_flight", "at 0", func(v float64) bool { return v == 0 })
	}
	// What decoding four of them costs: the whole request costs ten times
	// that.
	before := s.cpu()
	if r := s.do(http.MethodPost, "/predict", "application/json", strings.NewReader(body(4))); r.Status != http.StatusOK {
		t.Fatalf("four costly pictures: %d %s", r.Status, r.Body)
	}
	whole := 10 * (s.cpu() - before)
	t.Logf("decoding 40 pictures costs about %d ticks", whole)

	spent := func(name string, send func()) {
		t.Helper()
		before := s.cpu()
		send()
		idle()
		if got := s.cpu() - before; got*3 > whole {
			t.Errorf("%s: the server spent %d ticks, a third or more of the %d the whole request costs: decoding went on", name, got, whole)
		}
	}
	spent("X-Request-Timeout", func() {
		r := s.do(http.MethodPost, "/predict", "application/json", strings.NewReader(body(40)), "X-Request-Timeout", "500ms")
		if st, msg := detailOf(r); st != http.StatusGatewayTimeout || !strings.Contains(msg, "timeout of 500ms passed") {
			t.Errorf("X-Request-Timeout: %d %q, want 504", st, msg)
		}
	})
	spent("parameters.timeout", func() {
		r := s.do(http.MethodPost, "/v2/models/cls/infer", "application/json", strings.NewReader(
			`{"parameters":{"timeout":500000},"inputs":[{"name":"x","datatype":"BYTES","shape":[40],"data":`+pictureList(costly, 40)+`}]}`))
		if st, msg := detailOf(r); st != http.StatusGatewayTimeout || !strings.Contains(msg, "timeout of 500ms passed") {
			t.Errorf("parameters.timeout: %d %q, want 504", st, msg)
		}
	})
	spent("gRPC deadline", func() {
		pics := make([][]byte, 40)
		for i := range pics {
			pics[i] = costly
		}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_, err := c.Infer(ctx, &inference.ModelInferRequest{ModelName: "cls", Inputs: []*inference.ModelInferRequest_InferInputTensor{{
			Name: "x", Datatype: "BYTES", Shape: []int64{40}, Contents: &inference.InferTensorContents{BytesContents: pics}}}})
		if code, _ := grpcCode(err); code != int(codes.DeadlineExceeded) {
			t.Errorf("gRPC deadline: %v, want DEADLINE_EXCEEDED", err)
		}
	})
	spent("client gone", func() {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/predict", strings.NewReader(body(40)))
		req.Header.Set("Content-Type", "application/json")
		done := make(chan struct{})
		go func() {
			defer close(done)
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
				t.Errorf("client gone: answered %d", resp.StatusCode)
			}
		}()
		s.waitInFlight(1)
		cancel()
		<-done
	})
	s.stopNoPanic()
}
