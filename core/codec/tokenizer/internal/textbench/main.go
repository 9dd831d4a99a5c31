// Command textbench measures text serving for make bench and writes its
// tables into BENCHMARKS.md, between <!-- text:begin --> and
// <!-- text:end -->:
//
//   - tokenisation throughput, MB/s of CPU time on one thread, of
//     core/codec/tokenizer (BenchmarkTokenize, go test -cpu 1) beside
//     the Hugging Face tokenizers library's (testdata/reference.js bench
//     under Node, encodeBatch with TOKENIZERS_PARALLELISM=false, and encode
//     one text at a time) on the same corpus (testdata/bench.txt) and
//     tokenizer.json files; the goal is at least half the reference's
//     better figure;
//   - the share of a text request's CPU that goes to tokenisation: svc serve
//     of the generated classifier (testdata/models/tiny_bert_classifier,
//     max_length 128) with SVC_CPUPROFILE, sequential batches of texts of
//     128 tokens, then go tool pprof -top -focus on the tokenizer's package.
//
// Run it from the repository root (make tokenizer-bench does, after make
// tokref and make build):
//
//	go run ./core/codec/tokenizer/internal/textbench [-svc build/bin/svc] [-md BENCHMARKS.md]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	svc := flag.String("svc", "build/bin/svc", "the svc binary")
	md := flag.String("md", "BENCHMARKS.md", "the file whose text section is rewritten")
	out := flag.String("out", "build/artifacts/bench/text", "where the raw outputs go")
	benchtime := flag.String("benchtime", "2s", "go test -benchtime of BenchmarkTokenize")
	requests := flag.Int("requests", 300, "requests of the CPU-share run")
	flag.Parse()
	if err := run(*svc, *md, *out, *benchtime, *requests); err != nil {
		fmt.Fprintln(os.Stderr, "textbench:", err)
		os.Exit(1)
	}
}

func run(svc, md, out, benchtime string, requests int) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var sb strings.Builder
	commit := gitCommit()
	before := loadAverage()
	rows, err := throughput(out, benchtime)
	if err != nil {
		return err
	}
	share, err := cpuShare(svc, out, requests)
	if err != nil {
		return err
	}
	fmt.Fprintf(&sb, "## Tokenisation throughput, one core (text)\n\n")
	fmt.Fprintf(&sb, "Written by `make tokenizer-bench` (part of `make bench`) at `%s` on %s, %s, %d cores; load average %s before, %s after.\n\n", commit, time.Now().UTC().Format("2006-01-02"), cpuModel(), runtime.NumCPU(), before, loadAverage())
	sb.WriteString(rows)
	sb.WriteString(share)
	return replaceSection(md, sb.String())
}

// throughput runs the Go benchmark and the reference's, and tabulates
// them.
func throughput(out, benchtime string) (string, error) {
	goCmd := []string{"go", "test", "-run", "^$", "-bench", "Tokenize", "-benchtime", benchtime, "-cpu", "1", "./core/codec/tokenizer/"}
	goOut, err := command(filepath.Join(out, "go-bench.txt"), nil, "", goCmd...)
	if err != nil {
		return "", err
	}
	type figure struct{ wall, cpu float64 }
	goMBs := map[string]figure{}
	goLine := regexp.MustCompile(`^BenchmarkTokenize/(\S+?)(?:-\d+)?\s+\d+\s+[\d.]+ ns/op\s+([\d.]+) MB/s\s+([\d.]+) cpu-MB/s`)
	for line := range strings.SplitSeq(goOut, "\n") {
		if m := goLine.FindStringSubmatch(line); m != nil {
			w, _ := strconv.ParseFloat(m[2], 64)
			c, _ := strconv.ParseFloat(m[3], 64)
			goMBs[m[1]] = figure{w, c}
		}
	}
	if len(goMBs) == 0 {
		return "", fmt.Errorf("no BenchmarkTokenize figures in:\n%s", goOut)
	}
	fixtures, _ := filepath.Glob("core/codec/tokenizer/testdata/fixtures/*.json")
	nodePath, _ := filepath.Abs("build/tokref/node_modules")
	env := []string{"NODE_PATH=" + nodePath, "TOKENIZERS_PARALLELISM=false"}
	refLine := regexp.MustCompile(`^(\S+)\treference encode ([\d.]+) MB/s\tencodeBatch ([\d.]+) MB/s\tencode ([\d.]+) cpu-MB/s\tencodeBatch ([\d.]+) cpu-MB/s\trefused (\d+)`)
	type ref struct {
		single, batch figure
		refused       bool
	}
	refs := map[string]ref{}
	var log bytes.Buffer
	for _, f := range fixtures {
		o, err := command("", env, "core/codec/tokenizer", "node", "testdata/reference.js", "bench", strings.TrimPrefix(f, "core/codec/tokenizer/"))
		log.WriteString(o)
		if err != nil {
			return "", err
		}
		if m := refLine.FindStringSubmatch(strings.TrimSpace(o)); m != nil {
			v := make([]float64, 4)
			for i := range v {
				v[i], _ = strconv.ParseFloat(m[2+i], 64)
			}
			refs[m[1]] = ref{single: figure{v[0], v[2]}, batch: figure{v[1], v[3]}, refused: m[6] != "0"}
		}
	}
	_ = os.WriteFile(filepath.Join(out, "reference-bench.txt"), log.Bytes(), 0o644)
	names := make([]string, 0, len(goMBs))
	for n := range goMBs {
		names = append(names, n)
	}
	sort.Strings(names)
	var sb strings.Builder
	sb.WriteString("The corpus `core/codec/tokenizer/testdata/bench.txt` (7.9 KB of lines in several scripts), special tokens added, through each fixture tokenizer.json: svc's tokenizer (`" + strings.Join(goCmd, " ") + "`, one text per call on one thread) and the Hugging Face tokenizers library, Rust, through its Node binding (`node testdata/reference.js bench FILE` with `TOKENIZERS_PARALLELISM=false`: `encodeBatch` of the whole corpus per call, and `encode` of one text per call; its figures include the binding's cost of handing each encoding to JavaScript, so they understate the Rust library alone). Throughput by CPU time (the benchmark thread's for svc, the Node process's for the reference), which holds better than wall-clock time on a shared machine; wall-clock figures in brackets. Goal: svc ≥ 0.5× the reference's better figure, by CPU time.\n\n")
	sb.WriteString("| tokenizer.json | svc MB/s | reference encodeBatch MB/s | reference encode MB/s | svc ÷ reference (better) | goal ≥ 0.5× |\n|---|---:|---:|---:|---:|---|\n")
	for _, n := range names {
		g := goMBs[n]
		r, ok := refs[n]
		if !ok {
			fmt.Fprintf(&sb, "| %s | %.2f (%.2f) | – | – | – | no reference figure |\n", n, g.cpu, g.wall)
			continue
		}
		if r.refused {
			fmt.Fprintf(&sb, "| %s | %.2f (%.2f) | %.2f (%.2f) | %.2f (%.2f) | – | not comparable: the reference refuses texts of the corpus (a failed encodeBatch is quick) |\n", n, g.cpu, g.wall, r.batch.cpu, r.batch.wall, r.single.cpu, r.single.wall)
			continue
		}
		best := max(r.single.cpu, r.batch.cpu)
		ratio := g.cpu / best
		verdict := "met"
		if ratio < 0.5 {
			verdict = "missed"
		}
		fmt.Fprintf(&sb, "| %s | %.2f (%.2f) | %.2f (%.2f) | %.2f (%.2f) | %.2f× | %s |\n", n, g.cpu, g.wall, r.batch.cpu, r.batch.wall, r.single.cpu, r.single.wall, ratio, verdict)
	}
	sb.WriteString("\n")
	return sb.String(), nil
}

// cpuShare profiles a server of the generated classifier under text
// requests at 128 tokens and reports the tokenizer's share of its CPU.
func cpuShare(svc, out string, requests int) (string, error) {
	dir, err := os.MkdirTemp("", "textbench")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	model, _ := filepath.Abs("testdata/models/tiny_bert_classifier/model.onnx")
	tok, _ := filepath.Abs("core/codec/tokenizer/testdata/fixtures/bert-uncased.json")
	cfg := filepath.Join(dir, "svc.yml")
	yml := fmt.Sprintf("models:\n  cls:\n    path: %s\n    text: {tokenizer: %s, max_length: 128, task: classification}\n", model, tok)
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		return "", err
	}
	prof := filepath.Join(out, "text-cls.cpu.pprof")
	cmd := exec.Command(svc, "serve", "cls", "--config", cfg, "--host", "127.0.0.1", "--port", "0")
	cmd.Env = append(os.Environ(), "SVC_CPUPROFILE="+prof)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return "", err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	url, err := serverURL(stdout)
	if err != nil {
		return "", err
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	// Eight texts a request, each past 128 tokens (truncated to 128).
	sentence := "Machine learning models serve predictions over HTTP and gRPC with ONNX Runtime; the tokenizer splits words into pieces. "
	texts := make([]string, 8)
	for i := range texts {
		texts[i] = strings.Repeat(sentence, 6+i)
	}
	body, _ := json.Marshal(map[string]any{"text": texts})
	for range requests {
		resp, err := http.Post(url+"/predict", "application/json", bytes.NewReader(body))
		if err != nil {
			return "", err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("predict: %d %s", resp.StatusCode, b)
		}
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return "", err
		}
	}
	// -focus keeps the samples whose stack has a tokenizer function: with
	// every node shown, "Showing nodes accounting for X, P% of T total"
	// is their time X of the profile's T.
	focus := `core/codec/tokenizer\.`
	pprof := []string{"go", "tool", "pprof", "-top", "-nodefraction=0", "-edgefraction=0", "-nodecount=100000", "-focus=" + focus, prof}
	top, err := command(filepath.Join(out, "text-cls.focus.txt"), nil, "", pprof...)
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`Showing nodes accounting for ([\d.]+)(m?s), [\d.]+% of ([\d.]+)(m?s) total`).FindStringSubmatch(top)
	if m == nil {
		return "", fmt.Errorf("no totals in go tool pprof's output:\n%s", top)
	}
	focused, total := seconds(m[1], m[2]), seconds(m[3], m[4])
	var sb strings.Builder
	sb.WriteString("### Tokenisation's share of a text request's CPU\n\n")
	pprof[len(pprof)-1] = "PROFILE"
	fmt.Fprintf(&sb, "`SVC_CPUPROFILE=PROFILE svc serve` of `testdata/models/tiny_bert_classifier` (the generated one-layer BERT classifier) with `text: {max_length: 128, task: classification}`, %d sequential `/predict` requests of 8 texts truncated to 128 tokens each, then `%s`: the samples with a function of core/codec/tokenizer on the stack, over all the server's samples (start-up and model load included, so the share is if anything low).\n\n", requests, strings.Join(pprof, " "))
	sb.WriteString("| model | sequence length | texts per request | server CPU profiled | in the tokenizer | share |\n|---|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(&sb, "| tiny_bert_classifier | 128 | 8 | %.2f s | %.2f s | %.1f%% |\n", total, focused, 100*focused/total)
	return sb.String(), nil
}

// seconds reads pprof's "1.23s" or "450ms".
func seconds(v, unit string) float64 {
	f, _ := strconv.ParseFloat(v, 64)
	if unit == "ms" {
		return f / 1000
	}
	return f
}

// serverURL reads svc serve's banner up to its URL line.
func serverURL(r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "URL" {
			return f[1], nil
		}
	}
	return "", errors.New("svc serve exited before printing its URL")
}

// command runs args in dir with env added, its output saved to save
// ("" none), and returns the output.
func command(save string, env []string, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	if save != "" {
		_ = os.WriteFile(save, b, 0o644)
	}
	if err != nil {
		return string(b), fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, b)
	}
	return string(b), nil
}

// replaceSection writes text between the markers of md, or appends the
// markers and text when md has none.
func replaceSection(md, text string) error {
	const begin, end = "<!-- text:begin -->", "<!-- text:end -->"
	data, err := os.ReadFile(md)
	if err != nil {
		return err
	}
	s := string(data)
	section := begin + "\n" + strings.TrimRight(text, "\n") + "\n" + end
	// The markers count on lines of their own: prose may name them.
	i, j := lineIndex(s, begin), lineIndex(s, end)
	switch {
	case i >= 0 && j > i:
		s = s[:i] + section + s[j+len(end):]
	case i < 0 && j < 0:
		s = strings.TrimRight(s, "\n") + "\n\n" + section + "\n"
	default:
		return fmt.Errorf("%s: %s and %s are not in order", md, begin, end)
	}
	return os.WriteFile(md, []byte(s), 0o644)
}

// loadAverage is the one-minute load average, "unknown" off Linux.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(data)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

// lineIndex is the offset of the first line of s that is line, or -1.
func lineIndex(s, line string) int {
	for off := 0; off <= len(s); {
		end := strings.IndexByte(s[off:], '\n')
		if end < 0 {
			end = len(s) - off
		}
		if s[off:off+end] == line {
			return off
		}
		off += end + 1
	}
	return -1
}

func gitCommit() string {
	b, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "an unknown CPU"
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "an unknown CPU"
}
