package main_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/svc-dev/svc/cmd/genmodels/slowload"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
)

// The bounds on loading a model (docs/reload.md, "Bounds"): svc loads
// only regular files, within runtime.max_model_size, and a reload that
// does not end within reload.timeout fails; the old version serves on.

// memoryCeiling is more than any server of these tests needs: one that
// grows past it (reading /dev/zero, were the bounds missing) is killed
// before it takes the machine's memory.
const memoryCeiling = 2 << 30

// guardMemory kills the process group of pid once the process's resident
// memory grows past memoryCeiling, and reports whether it did; it looks
// until done is closed.
func guardMemory(pid int, done <-chan struct{}) *atomic.Bool {
	killed := &atomic.Bool{}
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if residentBytes(pid) > memoryCeiling {
				killed.Store(true)
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				return
			}
		}
	}()
	return killed
}

// residentBytes is the resident memory of process pid (0 when unknown).
func residentBytes(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// paddedModel is the test model name with pad bytes more: a doc_string
// (ModelProto field 6) appended, which replaces the model's own.
func paddedModel(t *testing.T, name string, pad int) []byte {
	t.Helper()
	b := protowire.AppendTag(readTestModel(t, name), 6, protowire.BytesType)
	return protowire.AppendBytes(b, bytes.Repeat([]byte("x"), pad))
}

// externalModel copies testdata/models/external_data (the classifier with
// its weights in model.onnx.data: 720 and 60 bytes) into a new directory
// and returns the model file.
func externalModel(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "external")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"model.onnx", "model.onnx.data"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "models", "external_data", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "model.onnx")
}

// The files that are no regular files, each made at path by a rename over
// what is there (a directory replaces it).
var (
	makeFIFO = func(t *testing.T, path string) {
		t.Helper()
		if err := syscall.Mkfifo(path+".tmp", 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}
	makeDevZero = func(t *testing.T, path string) {
		t.Helper()
		if err := os.Symlink("/dev/zero", path+".tmp"); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}
	makeDir = func(t *testing.T, path string) {
		t.Helper()
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(path, 0o755); err != nil {
			t.Fatal(err)
		}
	}
)

// writeConfig writes an svc.yml and returns its path.
func writeConfig(t *testing.T, yml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(p, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// startRefused runs 'svc serve path' and waits for it to exit before it
// serves; it returns the log. It fails t when the server serves, has
// neither served nor exited within patience (blocked reading the model),
// or grows past memoryCeiling.
func startRefused(t *testing.T, path, cfg string) string {
	t.Helper()
	cmd := svcCmd(t, nil, "serve", path, "--name", "model", "--config", cfg, "--host", "127.0.0.1", "--port", "0")
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	killed := guardMemory(cmd.Process.Pid, done)
	timeout := time.NewTimer(patience)
	defer timeout.Stop()
	for {
		out, grew := stdout.next()
		if urlLine.MatchString(out) {
			t.Fatalf("svc served %s; want its start refused\n%s", path, stderr)
		}
		select {
		case <-grew:
			continue
		case <-done:
		case <-timeout.C:
			t.Fatalf("svc neither served %s nor exited within %v\n%s", path, patience, stderr)
		}
		break
	}
	if killed.Load() {
		t.Fatalf("svc grew past %d bytes loading %s; killed", memoryCeiling, path)
	}
	if waitErr == nil {
		t.Fatalf("svc exited 0 without serving\n%s", stderr)
	}
	return stderr.String()
}

// TestModelFileRefusedAtStart: a model that is no regular file (a FIFO, a
// link to /dev/zero; external data that is a FIFO or a directory) or
// that is larger than runtime.max_model_size (the file alone, or with its
// external data) fails start-up at once, with a message that names the
// file, and for the size the size and the key. Before, a FIFO blocked the
// start for ever, /dev/zero was read until the OOM killer came, and every
// size loaded.
func TestModelFileRefusedAtStart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		config string
		// setup makes the model to serve and returns its path and what
		// the refusal says.
		setup func(t *testing.T) (path string, want []string)
	}{
		{"fifo", "", func(t *testing.T) (string, []string) {
			p := filepath.Join(t.TempDir(), "model.onnx")
			makeFIFO(t, p)
			return p, []string{`model file "` + p + `" is a named pipe (FIFO), not a regular file`}
		}},
		{"link to /dev/zero", "", func(t *testing.T) (string, []string) {
			p := filepath.Join(t.TempDir(), "model.onnx")
			makeDevZero(t, p)
			return p, []string{`model file "` + p + `" (a link to "/dev/zero") is a character device, not a regular file`}
		}},
		{"over runtime.max_model_size", "runtime:\n  max_model_size: 1KiB\n", func(t *testing.T) (string, []string) {
			p := filepath.Join(t.TempDir(), "model.onnx")
			renameIn(t, paddedModel(t, "reload_v2.onnx", 2000), p)
			return p, []string{`model file "` + p + `" is 2.1 KiB (`, "more than runtime.max_model_size = 1.0 KiB: raise runtime.max_model_size"}
		}},
		{"external data a fifo", "", func(t *testing.T) (string, []string) {
			p := externalModel(t)
			makeFIFO(t, p+".data")
			return filepath.Dir(p), []string{`external data file "` + p + `.data" is a named pipe (FIFO), not a regular file`}
		}},
		{"external data a directory", "", func(t *testing.T) (string, []string) {
			p := externalModel(t)
			makeDir(t, p+".data")
			return filepath.Dir(p), []string{`external data file "` + p + `.data" is a directory, not a regular file`}
		}},
		{"external data over runtime.max_model_size", "runtime:\n  max_model_size: 750\n", func(t *testing.T) (string, []string) {
			p := externalModel(t)
			return filepath.Dir(p), []string{`external data file "` + p + `.data" is 60 bytes, which brings model "` + p +
				`" with its external data to 780 bytes, more than runtime.max_model_size = 750 bytes`}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, want := tt.setup(t)
			log := startRefused(t, path, writeConfig(t, tt.config))
			for _, w := range want {
				if !strings.Contains(log, w) {
					t.Errorf("start-up log lacks %q\n%s", w, log)
				}
			}
		})
	}
}

// TestModelFileRefusedAtReload: at a reload, by each trigger (POST
// .../load, SIGHUP, gRPC RepositoryModelLoad, the watch), a model that
// is no regular file or is larger than runtime.max_model_size fails the
// reload with the reason, the index shows it (UNAVAILABLE, not LOADING),
// and the old version serves on. Before, the FIFO and the external data
// FIFO blocked the reload for ever, /dev/zero was read until the memory
// ran out, and the large model loaded.
func TestModelFileRefusedAtReload(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		trigger  string // load, sighup, grpc, watch
		external bool   // serve externalModel, else reload_v1
		config   string
		// swap changes what file (the model served) holds and returns
		// what the refusal says.
		swap func(t *testing.T, file string) string
	}{
		{"fifo", "load", false, "", func(t *testing.T, file string) string {
			makeFIFO(t, file)
			return `model file "` + file + `" is a named pipe (FIFO), not a regular file`
		}},
		{"link to /dev/zero", "sighup", false, "", func(t *testing.T, file string) string {
			makeDevZero(t, file)
			return `model file "` + file + `" (a link to "/dev/zero") is a character device, not a regular file`
		}},
		{"over runtime.max_model_size", "grpc", false, "runtime:\n  max_model_size: 1KiB\n", func(t *testing.T, file string) string {
			renameIn(t, paddedModel(t, "reload_v2.onnx", 2000), file)
			return "more than runtime.max_model_size = 1.0 KiB: raise runtime.max_model_size"
		}},
		{"external data a fifo", "watch", true, "reload:\n  watch: true\n  settle: 50ms\n", func(t *testing.T, file string) string {
			makeFIFO(t, file+".data")
			return `external data file "` + file + `.data" is a named pipe (FIFO), not a regular file`
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name+", by "+tt.trigger, func(t *testing.T) {
			file, body := filepath.Join(t.TempDir(), "model.onnx"), `{"x": [[1, 2]]}`
			if tt.external {
				file, body = externalModel(t), `{"input": [[1, 2, 3, 4]]}`
			} else {
				copyModel(t, "reload_v1.onnx", file)
			}
			port := freePort(t)
			s := startServer(t, filepath.Dir(file), "--name", "model", "--config", writeConfig(t, tt.config), "--grpc-port", port)
			killed := guardMemory(s.cmd.Process.Pid, s.done)
			before, version := s.predict(body), reloadIndex(t, s)[0]["version"]
			if before.Status != http.StatusOK {
				t.Fatalf("predict: %d %s", before.Status, before.Body)
			}
			if tt.trigger == "watch" {
				s.waitLog("watching the model for changes", 1, nil)
			}
			want := tt.swap(t, file)
			reloadRefused(t, s, tt.trigger, port, want)
			if killed.Load() {
				t.Fatalf("the server grew past %d bytes reloading; killed", memoryCeiling)
			}
			if ix := reloadIndex(t, s); len(ix) != 2 || ix[0]["state"] != "READY" || ix[0]["version"] != version ||
				ix[1]["state"] != "UNAVAILABLE" || !strings.Contains(ix[1]["reason"], want) {
				t.Errorf("index after the refused reload: %v, want READY %s and UNAVAILABLE with %q", ix, version, want)
			}
			if after := s.predict(body); after.Status != http.StatusOK || !bytes.Equal(after.Body, before.Body) {
				t.Errorf("after the refused reload: %d %s, want the old version's %s", after.Status, after.Body, before.Body)
			}
			s.stopNoPanic()
		})
	}
}

// reloadRefused reloads s by trigger and checks that the reload failed
// saying want.
func reloadRefused(t *testing.T, s *server, trigger, grpcPort, want string) {
	t.Helper()
	failed := func(rec map[string]any) bool { return strings.Contains(rec["error"].(string), want) }
	switch trigger {
	case "load":
		if r := s.do(http.MethodPost, "/v2/repository/models/model/load", "", nil); r.Status != http.StatusBadRequest || !strings.Contains(oipError(t, r), want) {
			t.Fatalf("load: %d %s, want 400 with %q", r.Status, r.Body, want)
		}
	case "grpc":
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		_, err := grpcClient(t, "127.0.0.1:"+grpcPort).Service().RepositoryModelLoad(ctx, &inference.RepositoryModelLoadRequest{ModelName: "model"})
		wantGRPCCode(t, err, codes.InvalidArgument, want)
	case "sighup":
		if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		s.waitLog("model reload failed; the previous version keeps serving", 1, failed)
	case "watch":
		s.waitLog("model reload failed; the previous version keeps serving", 1, failed)
	}
}

// TestReloadTimeoutServesOn: a reload that has not ended within
// reload.timeout (a model whose session takes seconds to create, against
// 1s) fails with the reason, the index shows it (UNAVAILABLE, not
// LOADING) and the old version serves on; the next reload, of a good
// model, succeeds while the slow one still loads, and the slow one's
// sessions are closed when it ends. Before, the slow reload succeeded
// after its seconds, and a stuck one held every reload after it.
//
// The margins: creating the slow model's session folds a 196 GFLOP
// product on one thread (3 to 10 s, slowload's documentation), a reload
// of reload_v2.onnx takes about 50 ms under -race on 2 busy cores.
func TestReloadTimeoutServesOn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "model.onnx")
	copyModel(t, "reload_v1.onnx", file)
	s := startServer(t, file, "--name", "model", "--config", writeConfig(t, "reload:\n  timeout: 1s\n"))
	if err := slowload.Write(file + ".slow"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(file+".slow", file); err != nil {
		t.Fatal(err)
	}
	const want = "the previous version keeps serving: the new version did not load within reload.timeout (1s)"
	if r := s.do(http.MethodPost, "/v2/repository/models/model/load", "", nil); r.Status != http.StatusBadRequest || !strings.Contains(oipError(t, r), want) {
		t.Fatalf("load of the slow model: %d %s, want 400 with %q", r.Status, r.Body, want)
	}
	if ix := reloadIndex(t, s); len(ix) != 2 || ix[0]["state"] != "READY" || ix[0]["version"] != "1" ||
		ix[1]["state"] != "UNAVAILABLE" || !strings.Contains(ix[1]["reason"], want) {
		t.Errorf("index after the reload past its timeout: %v", ix)
	}
	if r := s.predict(`{"x": [[1, 2]]}`); r.Status != http.StatusOK || string(r.Body) != `{"y":[[101,102]]}` {
		t.Errorf("after the reload past its timeout: %d %s, want version 1's answer", r.Status, r.Body)
	}

	copyModel(t, "reload_v2.onnx", file)
	if r := s.do(http.MethodPost, "/v2/repository/models/model/load", "", nil); r.Status != http.StatusOK || r.JSON(t)["version"] != "2" {
		t.Fatalf("load of a good model after the timeout: %d %s", r.Status, r.Body)
	}
	if r := s.predict(`{"x": [[1, 2]]}`); r.Status != http.StatusOK || string(r.Body) != `{"y":[[-3,-6]]}` {
		t.Errorf("after the good reload: %d %s, want version 2's answer", r.Status, r.Body)
	}
	if ix := reloadIndex(t, s); len(ix) != 1 || ix[0]["state"] != "READY" || ix[0]["version"] != "2" {
		t.Errorf("index after the good reload: %v", ix)
	}
	s.waitLog("a reload abandoned at reload.timeout has ended; what it loaded is closed", 1, nil)
	s.stopNoPanic()
}

// installFiles runs build/install-files.sh, the install step of make
// build and of the release archives (install.sh), with args.
func installFiles(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{filepath.Join(repoRoot, "build", "install-files.sh")}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install-files.sh %v: %v\n%s", args, err, out)
	}
}

// stageInstall writes into a new directory what an install brings: the
// svc binary and lib/ with the ONNX Runtime library and its link, as the
// release archives hold them, each file with marker appended (new bytes,
// as a new build has; the ELF loader ignores what follows the last
// segment).
func stageInstall(t *testing.T, marker string) string {
	t.Helper()
	stage := t.TempDir()
	lib, err := filepath.EvalSymlinks(ortLib)
	if err != nil {
		t.Fatal(err)
	}
	for src, dst := range map[string]string{svcBin: "svc", lib: filepath.Join("lib", "libonnxruntime.so.1")} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(stage, filepath.Dir(dst)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(stage, dst), append(b, marker...), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("libonnxruntime.so.1", filepath.Join(stage, "lib", "libonnxruntime.so")); err != nil {
		t.Fatal(err)
	}
	return stage
}

// inode is the inode number of path (symlinks followed).
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// mappings returns the lines of /proc/PID/maps that map path.
func mappings(t *testing.T, pid int, path string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		t.Fatalf("the server's mappings (has it died?): %v", err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 6 && strings.Join(f[5:], " ") == path {
			out = append(out, line)
		}
	}
	return out
}

// lastBytes is the end of s, at most n bytes.
func lastBytes(s string, n int) string { return s[max(len(s)-n, 0):] }

// TestInstallUnderLoad: a server runs from an install (its binary, and
// lib/ with ONNX Runtime, where it finds it) while the install step
// rewrites that install three times with new bytes, under steady
// requests: every request is answered, and the server stays alive.
// Each install renamed new files into place: the library and the binary
// have new inodes, the link is still a link, and the running process
// still maps the library it loaded, now deleted (its old inode), and runs
// its old binary. Before, make build copied the library over itself (cp
// -P, the same inode): a running server died with SIGBUS, SIGSEGV or
// SIGILL inside ONNX Runtime.
func TestInstallUnderLoad(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "svc")
	stage := stageInstall(t, "install 0")
	installFiles(t, dir, filepath.Join(stage, "lib"), filepath.Join(stage, "svc"))
	libFile := filepath.Join(dir, "lib", "libonnxruntime.so.1")
	loadedLib, loadedBin := inode(t, libFile), inode(t, filepath.Join(dir, "svc"))
	// ONNXRUNTIME_LIB empty: svc finds lib/ next to its executable.
	s := startServerBin(t, filepath.Join(dir, "svc"), []string{"ONNXRUNTIME_LIB="}, model("reload_v1.onnx"))
	pid := s.cmd.Process.Pid
	maps := mappings(t, pid, libFile)
	if len(maps) == 0 {
		t.Fatalf("the server does not map %s", libFile)
	}
	load := startReloadLoad(s, 4, "1")
	// The clients stop however the test ends.
	finish := sync.OnceFunc(func() { load.finish(t) })
	defer finish()
	lib, bin := loadedLib, loadedBin
	for round := 1; round <= 3; round++ {
		stage := stageInstall(t, "install "+strconv.Itoa(round))
		before := load.total.Load()
		installFiles(t, dir, filepath.Join(stage, "lib"), filepath.Join(stage, "svc"))
		newLib, newBin := inode(t, libFile), inode(t, filepath.Join(dir, "svc"))
		if newLib == lib || newBin == bin {
			t.Errorf("install %d wrote in place: library inode %d (was %d), binary inode %d (was %d)", round, newLib, lib, newBin, bin)
		}
		lib, bin = newLib, newBin
		if target, err := os.Readlink(filepath.Join(dir, "lib", "libonnxruntime.so")); err != nil || target != "libonnxruntime.so.1" {
			t.Errorf("install %d: lib/libonnxruntime.so is no link to libonnxruntime.so.1: %q, %v", round, target, err)
		}
		// Requests answered after the install, before the next.
		waitUntil(t, s.done, fmt.Sprintf("20 answers after install %d", round), func() error {
			if n := load.total.Load() - before; n < 20 {
				return fmt.Errorf("%d answers; the server's log ends:\n%s", n, lastBytes(s.stderr.String(), 3000))
			}
			return nil
		})
		select {
		case <-s.done:
			t.Fatalf("the server died after install %d: %v\n%s", round, s.err, lastBytes(s.stderr.String(), 3000))
		default:
		}
		if got := mappings(t, pid, libFile+" (deleted)"); len(got) != len(maps) {
			t.Errorf("install %d: the server maps %d pieces of the deleted library, want the %d it loaded:\n%s", round, len(got), len(maps), strings.Join(got, "\n"))
		}
		for _, m := range mappings(t, pid, libFile+" (deleted)") {
			if f := strings.Fields(m); f[4] != strconv.FormatUint(loadedLib, 10) {
				t.Errorf("install %d: the server maps inode %s, want the library it loaded, %d: %s", round, f[4], loadedLib, m)
			}
		}
		if exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); err != nil || exe != filepath.Join(dir, "svc")+" (deleted)" {
			t.Errorf("install %d: the server runs %q (%v), want its old binary, deleted", round, exe, err)
		}
	}
	finish()
	s.stopNoPanic()
}
