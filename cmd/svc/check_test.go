package main_test

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runSlow runs another svc binary with a deadline long enough for shader
// compilation on a software GPU; it returns the exit code and output.
func runSlow(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := cmdFor(t, bin, env, args...)
	c := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	c.Env, c.Dir = cmd.Env, cmd.Dir
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	if ctx.Err() != nil {
		t.Fatalf("svc %v did not finish in 5 minutes\n%s\n%s", args, stdout.String(), stderr.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// checkRow returns the line of provider name in the --check table.
func checkRow(t *testing.T, out, name string) string {
	t.Helper()
	_, table, ok := strings.Cut(out, "\ncheck of ")
	if !ok {
		t.Fatalf("no check table in\n%s", out)
	}
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return line
		}
	}
	t.Fatalf("no %s row in the check table\n%s", name, table)
	return ""
}

var webgpuPlacement = regexp.MustCompile(`  (\S+) +WebGpuExecutionProvider (\d+), CPUExecutionProvider (\d+)$`)

// 'svc providers --check MODEL' in a webgpu build on the SwiftShader Vulkan
// driver: the CPU and WebGPU really run PaddleOCR cls; the table gives
// WebGPU's difference from the CPU (within 1e-4), its node placement (most
// nodes on WebGPU) and times. Without an adapter, the webgpu row says why
// it did not run and the CPU still does.
func TestProvidersCheck(t *testing.T) {
	t.Parallel()
	bin := webgpuBin(t)
	t.Run("webgpu on SwiftShader", func(t *testing.T) {
		code, stdout, stderr := runSlow(t, bin, swiftShader(t, ""), "providers", "--check", thirdParty(t, "paddleocr-cls"), "--runs", "2")
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		if !strings.Contains(stdout, "PROVIDER  LOAD") || !strings.Contains(stdout, "MAX |DIFF| VS CPU  NODES") {
			t.Errorf("no table header:\n%s", stdout)
		}
		row := checkRow(t, stdout, "webgpu")
		m := webgpuPlacement.FindStringSubmatch(row)
		if m == nil {
			t.Fatalf("webgpu row %q: want its difference and a placement on WebGPU and the CPU", row)
		}
		diff, err := strconv.ParseFloat(m[1], 64)
		gpu, _ := strconv.Atoi(m[2])
		cpu, _ := strconv.Atoi(m[3])
		if err != nil || diff > 1e-4 {
			t.Errorf("WebGPU differs from the CPU by %s (> 1e-4)", m[1])
		}
		if gpu < 3*cpu {
			t.Errorf("nodes on WebGPU %d, on the CPU %d: want most on WebGPU", gpu, cpu)
		}
		cpuRow := checkRow(t, stdout, "cpu")
		if !regexp.MustCompile(`  1×  +reference +CPUExecutionProvider \d+$`).MatchString(cpuRow) {
			t.Errorf("cpu row %q", cpuRow)
		}
		t.Logf("\n%s\n%s", row, cpuRow)
	})
	t.Run("no adapter", func(t *testing.T) {
		code, stdout, stderr := runSlow(t, bin, swiftShader(t, "/nonexistent.json"), "providers", "--check", model("classifier.onnx"))
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		if row := checkRow(t, stdout, "webgpu"); !strings.HasSuffix(row, "not usable: Failed to get a WebGPU adapter: No supported adapters (no usable Vulkan driver: install one, e.g. mesa-vulkan-drivers 25 or newer, or point VK_ICD_FILENAMES at one)") {
			t.Errorf("webgpu row %q", row)
		}
		if row := checkRow(t, stdout, "cpu"); !regexp.MustCompile(`reference +CPUExecutionProvider 3$`).MatchString(row) {
			t.Errorf("cpu row %q", row)
		}
	})
	t.Run("unknown model", func(t *testing.T) {
		code, _, stderr := runSvc(t, nil, "providers", "--check", "no-such-model")
		if code == 0 || !strings.HasPrefix(stderr, "svc: error: ") || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "no-such-model") {
			t.Errorf("exit %d, stderr %q: want a one-line error naming the model", code, stderr)
		}
	})
}
