package main_test

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// oneLineError checks a start-up failure: non-zero exit, nothing on stdout
// but usage, and exactly one line on stderr.
func oneLineError(t *testing.T, code int, stderr string, wantCode int, wants ...string) {
	t.Helper()
	if code != wantCode {
		t.Fatalf("exit code = %d, want %d; stderr:\n%s", code, wantCode, stderr)
	}
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if len(lines) != 1 {
		t.Fatalf("stderr has %d lines, want 1:\n%s", len(lines), stderr)
	}
	for _, w := range wants {
		if !strings.Contains(lines[0], w) {
			t.Errorf("stderr %q lacks %q", lines[0], w)
		}
	}
}

func TestStartupFailures(t *testing.T) {
	t.Parallel()
	sequential(t)
	t.Run("model not found", func(t *testing.T) {
		code, _, stderr := runSvc(t, nil, "serve", "no-such-model", "--port", "0")
		oneLineError(t, code, stderr, 1, "model not found", `"no-such-model"`, "tried path", "svc.yml")
	})
	t.Run("directory without a model", func(t *testing.T) {
		dir := t.TempDir()
		code, _, stderr := runSvc(t, nil, "serve", dir, "--port", "0")
		oneLineError(t, code, stderr, 1, "model not found", "has no model.onnx")
	})
	t.Run("not an onnx file", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "model.onnx")
		if err := os.WriteFile(f, []byte("this is not a model"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runSvc(t, nil, "serve", f, "--port", "0")
		oneLineError(t, code, stderr, 1, "load model", "model.onnx")
	})
	t.Run("port in use", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		code, stdout, stderr := runSvc(t, nil, "serve", model("classifier.onnx"), "--host", "127.0.0.1", "--port", port)
		oneLineError(t, code, stderr, 1, "port already in use", "127.0.0.1:"+port, "--port")
		if stdout != "" {
			t.Errorf("stdout on failure: %q", stdout)
		}
	})
	t.Run("runtime library set but missing", func(t *testing.T) {
		code, _, stderr := runSvc(t, []string{"ONNXRUNTIME_LIB=/nonexistent/libonnxruntime.so"}, "serve", model("classifier.onnx"), "--port", "0")
		oneLineError(t, code, stderr, 1, "ONNX Runtime library not found", "/nonexistent/libonnxruntime.so", "$ONNXRUNTIME_LIB")
	})
	t.Run("runtime library from the config file is missing", func(t *testing.T) {
		cfg := filepath.Join(t.TempDir(), "svc.yml")
		if err := os.WriteFile(cfg, []byte("runtime:\n  library: /nonexistent/lib/libonnxruntime.so\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := svcCmd(t, nil, "serve", model("classifier.onnx"), "--port", "0", "-c", cfg)
		var env []string
		for _, kv := range cmd.Env {
			if !strings.HasPrefix(kv, "ONNXRUNTIME_LIB=") {
				env = append(env, kv)
			}
		}
		cmd.Env = env
		code, _, stderr := runCmd(t, cmd)
		oneLineError(t, code, stderr, 1, "ONNX Runtime library not found", "/nonexistent/lib/libonnxruntime.so", "config runtime.library", "fix the path")
	})
	t.Run("runtime library from the config file is used", func(t *testing.T) {
		cfg := filepath.Join(t.TempDir(), "svc.yml")
		if err := os.WriteFile(cfg, []byte("runtime:\n  library: "+ortLib+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := svcCmd(t, nil, "version", "-c", cfg)
		var env []string
		for _, kv := range cmd.Env {
			if !strings.HasPrefix(kv, "ONNXRUNTIME_LIB=") {
				env = append(env, kv)
			}
		}
		cmd.Env = env
		code, stdout, stderr := runCmd(t, cmd)
		if code != 0 || !strings.Contains(stdout, "onnxruntime 1.29.0 ("+ortLib+")") {
			t.Fatalf("version with runtime.library: %d\n%s\n%s", code, stdout, stderr)
		}
	})
	t.Run("runtime library nowhere", func(t *testing.T) {
		// A copy of the binary with no lib/ beside it, no variable, and a
		// loader path that has no ONNX Runtime.
		dir := t.TempDir()
		bin := filepath.Join(dir, "svc")
		copyFile(t, svcBin, bin)
		cmd := svcCmd(t, nil)
		env := []string{}
		for _, kv := range cmd.Env {
			if !strings.HasPrefix(kv, "ONNXRUNTIME_LIB=") && !strings.HasPrefix(kv, "LD_LIBRARY_PATH=") {
				env = append(env, kv)
			}
		}
		code, _, stderr := runBinary(t, bin, env, "serve", model("classifier.onnx"), "--port", "0")
		oneLineError(t, code, stderr, 1, "ONNX Runtime library not found", filepath.Join(dir, "lib", "libonnxruntime.so"), "system loader", "make lib", "ONNXRUNTIME_LIB")
	})
	t.Run("runtime library in lib next to the executable", func(t *testing.T) {
		dir := t.TempDir()
		bin := filepath.Join(dir, "svc")
		copyFile(t, svcBin, bin)
		if err := os.MkdirAll(filepath.Join(dir, "lib"), 0o755); err != nil {
			t.Fatal(err)
		}
		copyFile(t, ortLib, filepath.Join(dir, "lib", "libonnxruntime.so.1"))
		env := []string{}
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "ONNXRUNTIME_LIB=") {
				env = append(env, kv)
			}
		}
		code, stdout, stderr := runBinary(t, bin, env, "version")
		if code != 0 || !strings.Contains(stdout, "onnxruntime 1.29.0 ("+filepath.Join(dir, "lib", "libonnxruntime.so.1")+")") {
			t.Fatalf("version via lib/: %d\n%s\n%s", code, stdout, stderr)
		}
	})
	t.Run("provider not compiled in", func(t *testing.T) {
		code, _, stderr := runSvc(t, nil, "serve", model("classifier.onnx"), "--port", "0", "--provider", "tensorrt")
		oneLineError(t, code, stderr, 1, `provider "tensorrt" is not compiled into this binary`, "go build -tags tensorrt")
	})
	t.Run("provider not in the list", func(t *testing.T) {
		code, _, stderr := runSvc(t, nil, "serve", model("classifier.onnx"), "--port", "0", "--provider", "tpu")
		oneLineError(t, code, stderr, 2, `invalid --provider "tpu"`, "cuda, coreml, rocm, directml, openvino, tensorrt, webgpu, cpu")
	})
	t.Run("no model name", func(t *testing.T) {
		code, _, stderr := runSvc(t, nil, "serve")
		oneLineError(t, code, stderr, 2, "exactly one MODEL_NAME")
	})
	t.Run("bad port value", func(t *testing.T) {
		code, _, stderr := runSvc(t, nil, "serve", model("classifier.onnx"), "--port", "eighty")
		if code != 2 || !strings.Contains(stderr, "port") {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
	})
}

func TestHelpAndHostShortFlag(t *testing.T) {
	t.Parallel()
	sequential(t)
	code, stdout, _ := runSvc(t, nil, "serve", "--help")
	if code != 0 {
		t.Fatalf("serve --help exit %d", code)
	}
	for _, want := range []string{"--port", "-p", "--host", "-h", "--workers", "--config", "-c", "--provider", "--verbose", "MODEL_NAME",
		"preferred execution provider: cuda, coreml, rocm, directml, openvino, tensorrt, webgpu, cpu (default: automatic)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, stdout)
		}
	}
	// -h is --host: serving with -h binds that host.
	cmd := svcCmd(t, nil, "serve", model("classifier.onnx"), "-h", "127.0.0.1", "-p", "0")
	var out syncBuffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() { _ = cmd.Process.Kill(); <-exited }()
	out.waitFor(t, exited, "banner with host 127.0.0.1", func(s string) bool { return strings.Contains(s, "host      127.0.0.1") })
}

func TestVersionCommand(t *testing.T) {
	t.Parallel()
	sequential(t)
	code, stdout, stderr := runSvc(t, nil, "version")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"svc test", "go 1.", "onnxruntime 1.29.0", "providers compiled in: cpu"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("version output lacks %q:\n%s", want, stdout)
		}
	}
}

// TestGracefulShutdown: requests the server has begun when SIGINT or
// SIGTERM comes are served before it exits. The requests are held (their
// bodies incomplete) until the server logs that it shuts down.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			s := startServer(t, model("slow.onnx"))
			held := make([]*heldRequest, 3)
			for i := range held {
				held[i] = holdPredict(t, s, slowBody(2))
			}
			s.waitInFlight(len(held))
			if err := s.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			s.waitLog("shutting down", 1, nil)
			statuses, errs := finishAll(held)
			// The signal above stops it: wait (signal 0 sends nothing).
			if code := s.stop(syscall.Signal(0)); code != 0 {
				t.Fatalf("exit code %d after %v\n%s", code, sig, s.stderr)
			}
			for i := range held {
				if errs[i] != nil || statuses[i] != 200 {
					t.Errorf("in-flight request %d: %d %v", i, statuses[i], errs[i])
				}
			}
			// The requests were still running when the signal arrived:
			// their access lines come after "shutting down".
			logs := s.stderr.String()
			stopAt := strings.Index(logs, `"shutting down"`)
			lastReq := strings.LastIndex(logs, `"path":"/predict"`)
			if stopAt < 0 || lastReq < stopAt {
				t.Errorf("no request finished after the signal; the test did not exercise draining:\n%s", logs)
			}
		})
	}
}

// slowBody is a request for slow.onnx with batch rows.
func slowBody(batch int) string {
	row := "[" + strings.TrimSuffix(strings.Repeat("0.01,", 256), ",") + "]"
	rows := strings.TrimSuffix(strings.Repeat(row+",", batch), ",")
	return `{"x": [` + rows + `]}`
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func runBinary(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := svcCmd(t, nil, args...)
	cmd.Path, cmd.Args[0] = bin, bin
	cmd.Env = env
	return runCmd(t, cmd)
}
