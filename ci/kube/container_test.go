package kube_test

// The container test: build/image.sh builds the linux/amd64 image (twice,
// checking the image id is reproducible) and podman runs it with a model
// mounted at /mnt/models, as Kubernetes and KServe do. podman runs with runc,
// a private storage root under build/artifacts, the host network with svc
// bound to 127.0.0.1 on a free port, and bounded ulimits.
// ci/install-deps.sh installs podman, buildah, runc and catatonit.

import (
	"archive/tar"
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// version is the image version the test builds (tag svc:0.0.0-test-amd64).
const version = "0.0.0-test"

// store is the private container storage build/image.sh builds into.
var store = filepath.Join(repoRoot, "build", "artifacts", "containers")

// containersConf holds what podman needs on this kind of machine for every
// command, 'kube play' included: runc, bounded ulimits, no systemd.
const containersConf = `[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
init_path = "/usr/bin/catatonit"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
`

// podman runs podman on the private store with containersConf.
func podman(args ...string) *exec.Cmd {
	full := append([]string{
		"--root", filepath.Join(store, "root"), "--runroot", filepath.Join(store, "run"),
		"--storage-driver", "vfs", "--runtime", "runc", "--cgroup-manager", "cgroupfs", "--events-backend", "file",
	}, args...)
	cmd := exec.Command("podman", full...)
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+filepath.Join(store, "containers.conf"))
	return cmd
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// syncBuffer collects a process's output for reading while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func buildImage(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"podman", "buildah", "runc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s missing: run ci/install-deps.sh (make tools)", tool)
		}
	}
	out := filepath.Join(repoRoot, "build", "artifacts", "image-test")
	cmd := exec.Command("bash", filepath.Join(repoRoot, "build", "image.sh"), "--check-reproducible", version, "amd64")
	cmd.Env = append(os.Environ(), "OUT="+out)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("build/image.sh: %v\n%s", err, b)
	}
	t.Logf("build/image.sh:\n%s", lastLines(string(b), 4))
	if err := os.WriteFile(filepath.Join(store, "containers.conf"), []byte(containersConf), 0o644); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(out, "svc-"+version+"-linux-amd64.oci.tar")
	if st, err := os.Stat(archive); err != nil || st.Size() == 0 {
		t.Fatalf("no OCI archive at %s: %v", archive, err)
	}
	return "localhost/svc:" + version + "-amd64"
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestImage checks the image's configuration, then serves testdata models
// from /mnt/models in it: /health, /predict, /v2/health/ready, and a
// SIGTERM while requests are in flight (they finish, the exit code is 0).
func TestImage(t *testing.T) {
	image := buildImage(t)

	t.Run("config", func(t *testing.T) {
		b, err := podman("image", "inspect", "--format",
			"{{.Config.User}}|{{json .Config.Entrypoint}}|{{json .Config.Cmd}}|{{.Created.Unix}}|{{.Architecture}}", image).CombinedOutput()
		if err != nil {
			t.Fatalf("podman image inspect: %v\n%s", err, b)
		}
		got := strings.TrimSpace(string(b))
		parts := strings.Split(got, "|")
		want := []string{"65532:65532", `["/opt/svc/svc"]`, `["serve","/mnt/models","--host","0.0.0.0"]`, "", "amd64"}
		if len(parts) != len(want) {
			t.Fatalf("inspect = %q", got)
		}
		for i, w := range want {
			if w != "" && parts[i] != w {
				t.Errorf("inspect field %d = %s, want %s", i, parts[i], w)
			}
		}
		if _, err := strconv.ParseInt(parts[3], 10, 64); err != nil {
			t.Errorf("created = %q", parts[3])
		}
	})

	t.Run("licences", func(t *testing.T) { checkImageLicences(t, image) })

	t.Run("kube play", func(t *testing.T) { kubePlay(t, image) })

	t.Run("serve and drain", func(t *testing.T) {
		models := t.TempDir()
		// KServe's storage initializer: the model file and whatever else the
		// storage held.
		copyFile(t, filepath.Join(repoRoot, "testdata", "models", "slow.onnx"), filepath.Join(models, "model.onnx"))
		copyFile(t, filepath.Join(repoRoot, "testdata", "models", "README.md"), filepath.Join(models, "README.md"))
		if err := os.Chmod(models, 0o755); err != nil {
			t.Fatal(err)
		}
		c := startContainer(t, image, models, "--name", "slow")

		if got := c.get(t, "/health"); got != `{"status":"healthy","model":"slow"}` {
			t.Errorf("/health = %s", got)
		}
		if got := c.get(t, "/v2/health/ready"); got != `{"ready":true}` {
			t.Errorf("/v2/health/ready = %s", got)
		}
		if got := c.get(t, "/v2/models/slow/ready"); got != `{"name":"slow","ready":true}` {
			t.Errorf("/v2/models/slow/ready = %s", got)
		}
		status, body := c.post(t, "/predict", slowBody(1))
		if status != 200 || !strings.HasPrefix(body, `{"y":[[`) {
			t.Fatalf("/predict = %d %.200s", status, body)
		}

		// Requests in flight when SIGTERM arrives finish with 200.
		const n = 3
		type result struct {
			status int
			body   string
			err    error
		}
		results := make(chan result, n)
		for range n {
			go func() {
				resp, err := http.Post(c.url+"/predict", "application/json", strings.NewReader(slowBody(512)))
				if err != nil {
					results <- result{err: err}
					return
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				results <- result{status: resp.StatusCode, body: string(b), err: err}
			}()
		}
		c.waitInFlight(t, n)
		if b, err := podman("kill", "--signal", "TERM", c.name).CombinedOutput(); err != nil {
			t.Fatalf("podman kill: %v\n%s", err, b)
		}
		for range n {
			r := <-results
			if r.err != nil || r.status != 200 || !strings.HasPrefix(r.body, `{"y":[[`) {
				t.Errorf("in-flight request: %d %v %.200s", r.status, r.err, r.body)
			}
		}
		if code := c.wait(t); code != 0 {
			t.Fatalf("container exit code %d after SIGTERM\n%s", code, c.out)
		}
		logs := c.out.String()
		stopAt := strings.Index(logs, `"shutting down"`)
		lastReq := strings.LastIndex(logs, `"path":"/predict"`)
		if stopAt < 0 || lastReq < stopAt {
			t.Errorf("no request finished after SIGTERM:\n%s", logs)
		}
	})
}

// checkImageLicences reads the image's files (podman export of a container
// that never runs): svc's LICENSE is the repository's, in /opt/svc and in
// /usr/share/doc/svc, beside the third-party notices and the libraries'
// copyright files.
func checkImageLicences(t *testing.T, image string) {
	name := fmt.Sprintf("svc-test-licences-%d", os.Getpid())
	if b, err := podman("create", "--name", name, image).CombinedOutput(); err != nil {
		t.Fatalf("podman create: %v\n%s", err, b)
	}
	t.Cleanup(func() { _ = podman("rm", "--force", name).Run() })
	export := podman("export", name)
	stdout, err := export.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := export.Start(); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(stdout)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("podman export: %v", err)
		}
		if name := strings.TrimPrefix(h.Name, "./"); strings.Contains(name, "LICENSE") || strings.Contains(name, "NOTICES") || strings.HasSuffix(name, "/copyright") {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[strings.TrimPrefix(name, "/")] = b
		}
	}
	if err := export.Wait(); err != nil {
		t.Fatalf("podman export: %v", err)
	}
	want, err := os.ReadFile(filepath.Join(repoRoot, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"opt/svc/LICENSE", "usr/share/doc/svc/LICENSE"} {
		if got, ok := files[f]; !ok || string(got) != string(want) {
			t.Errorf("the image's /%s is not the repository's LICENSE (present: %v)", f, ok)
		}
	}
	for _, f := range []string{"opt/svc/THIRD_PARTY_NOTICES.txt", "usr/share/doc/libc6/copyright", "usr/share/doc/libstdc++6/copyright", "usr/share/doc/libgcc-s1/copyright"} {
		if len(files[f]) == 0 {
			t.Errorf("the image lacks /%s", f)
		}
	}
}

// kubePlay runs the chart's Deployment and ConfigMap with 'podman kube
// play' on the host network (svc on 127.0.0.1), the model in a podman volume
// named as the chart's PersistentVolumeClaim.
func kubePlay(t *testing.T, image string) {
	port := freePort(t)
	volume := fmt.Sprintf("svc-test-models-%d", os.Getpid())
	if b, err := podman("volume", "create", volume).CombinedOutput(); err != nil {
		t.Fatalf("podman volume create: %v\n%s", err, b)
	}
	t.Cleanup(func() { _ = podman("volume", "rm", "--force", volume).Run() })
	b, err := podman("volume", "inspect", "--format", "{{.Mountpoint}}", volume).Output()
	if err != nil {
		t.Fatalf("podman volume inspect: %v", err)
	}
	copyFile(t, filepath.Join(repoRoot, "testdata", "models", "classifier.onnx"), filepath.Join(strings.TrimSpace(string(b)), "model.onnx"))

	repo, tag, _ := strings.Cut(image, ":")
	stream := run(t, helm(t), "template", "play", chartDir,
		"--set", "model.pvc.claimName="+volume, "--set", "model.name=iris",
		"--set", "server.host=127.0.0.1", "--set", "server.port="+strconv.Itoa(port),
		"--set", "image.repository="+repo, "--set", "image.tag="+tag, "--set", "image.pullPolicy=Never")
	// podman publishes container ports, which the host network cannot have:
	// the pod runs on the host network instead, without them, and its
	// probes name the port by number.
	var deploy *appsv1.Deployment
	var configMap *corev1.ConfigMap
	for _, o := range decodeAll(t, stream) {
		switch v := o.value.(type) {
		case *appsv1.Deployment:
			deploy = v
		case *corev1.ConfigMap:
			configMap = v
		}
	}
	if deploy == nil || configMap == nil {
		t.Fatalf("no Deployment or ConfigMap in:\n%s", stream)
	}
	pod := &deploy.Spec.Template.Spec
	pod.HostNetwork = true
	main := &pod.Containers[0]
	main.Ports = nil
	for _, p := range []*corev1.Probe{main.StartupProbe, main.LivenessProbe, main.ReadinessProbe} {
		p.HTTPGet.Port = intstr.FromInt(port)
	}
	var play []byte
	for _, o := range []any{configMap, deploy} {
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		play = append(append(play, "---\n"...), b...)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "play.yaml")
	if err := os.WriteFile(file, play, 0o644); err != nil {
		t.Fatal(err)
	}
	// An empty working directory: kube play builds images from directories
	// named like them.
	kube := func(args ...string) ([]byte, error) {
		cmd := podman(append([]string{"kube", "play"}, args...)...)
		cmd.Dir = dir
		return cmd.CombinedOutput()
	}
	if b, err := kube(file); err != nil {
		t.Fatalf("podman kube play: %v\n%s", err, b)
	}
	t.Cleanup(func() { _, _ = kube("--down", file) })

	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(120 * time.Second)
	for {
		resp, err := http.Get(url + "/v2/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the played Deployment is not ready on %s: %v\n%s", url, err, podLogs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	c := &container{url: url}
	if got := c.get(t, "/v2/models/iris/ready"); got != `{"name":"iris","ready":true}` {
		t.Errorf("/v2/models/iris/ready = %s", got)
	}
	status, body := c.post(t, "/predict", `{"input": [[5.1, 3.5, 1.4, 0.2]]}`)
	if status != 200 || !strings.Contains(body, `"label":[0]`) {
		t.Errorf("/predict = %d %s", status, body)
	}
	if b, err := kube("--down", file); err != nil {
		t.Fatalf("podman kube play --down: %v\n%s", err, b)
	}
}

// podLogs returns the logs of every container in the store, for failures.
func podLogs() string {
	names, err := podman("ps", "--all", "--format", "{{.Names}}").Output()
	if err != nil {
		return err.Error()
	}
	var out strings.Builder
	for _, n := range strings.Fields(string(names)) {
		b, _ := podman("logs", n).CombinedOutput()
		fmt.Fprintf(&out, "== %s\n%s\n", n, b)
	}
	return out.String()
}

// container is a running 'podman run'.
type container struct {
	name, url string
	cmd       *exec.Cmd
	out       *syncBuffer
	done      chan struct{}
	err       error
}

func startContainer(t *testing.T, image, models string, args ...string) *container {
	t.Helper()
	port := freePort(t)
	c := &container{
		name: fmt.Sprintf("svc-test-%d-%d", os.Getpid(), port),
		url:  fmt.Sprintf("http://127.0.0.1:%d", port),
		out:  &syncBuffer{},
		done: make(chan struct{}),
	}
	run := []string{"run", "--rm", "--name", c.name, "--network=host",
		"--ulimit", "nofile=20000:20000", "--ulimit", "nproc=32768:32768",
		"-v", models + ":/mnt/models:ro", image,
		"serve", "/mnt/models", "--host", "127.0.0.1", "--port", strconv.Itoa(port)}
	c.cmd = podman(append(run, args...)...)
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("podman run: %v", err)
	}
	go func() {
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
			return
		default:
		}
		_ = podman("kill", c.name).Run()
		select {
		case <-c.done:
		case <-time.After(30 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	})
	deadline := time.Now().Add(120 * time.Second)
	for !strings.Contains(c.out.String(), "URL       "+c.url) {
		select {
		case <-c.done:
			t.Fatalf("container exited before serving: %v\n%s", c.err, c.out)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no banner within 120 s:\n%s", c.out)
		}
	}
	return c
}

func (c *container) get(t *testing.T, path string) string {
	t.Helper()
	resp, err := http.Get(c.url + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v %s", path, resp.StatusCode, err, b)
	}
	return string(b)
}

func (c *container) post(t *testing.T, path, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(c.url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	return resp.StatusCode, string(b)
}

// waitInFlight polls the Prometheus metrics until n inference requests are
// being served.
func (c *container) waitInFlight(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, c.url+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "text/plain; version=0.0.4")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET /metrics: %v", err)
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "svc_inference_in_flight") {
				continue
			}
			f := strings.Fields(line)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil && v >= float64(n) {
				resp.Body.Close()
				return
			}
		}
		resp.Body.Close()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%d requests never were in flight together\n%s", n, c.out)
}

// wait returns the container's exit code (podman run's).
func (c *container) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(120 * time.Second):
		t.Fatalf("container did not exit after SIGTERM\n%s", c.out)
	}
	if c.err == nil {
		return 0
	}
	if ee, ok := c.err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	t.Fatalf("podman run: %v", c.err)
	return -1
}

// slowBody is a /predict body for slow.onnx with batch rows.
func slowBody(batch int) string {
	row := "[" + strings.TrimSuffix(strings.Repeat("0.01,", 256), ",") + "]"
	return `{"x": [` + strings.TrimSuffix(strings.Repeat(row+",", batch), ",") + `]}`
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCUDAImage builds the CUDA variant (the linux/amd64:cuda release build
// with ONNX Runtime's CUDA and TensorRT provider libraries) and runs
// 'svc providers' in it. No machine here has an NVIDIA GPU, driver or CUDA
// libraries, so what it proves is the image's contents and the path a user
// without the NVIDIA Container Toolkit sees: both providers compiled in and
// offered by the library, not usable, the missing libraries named; the CPU
// still serves.
func TestCUDAImage(t *testing.T) {
	for _, tool := range []string{"podman", "buildah", "runc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s missing: run ci/install-deps.sh (make tools)", tool)
		}
	}
	out := filepath.Join(repoRoot, "build", "artifacts", "image-test")
	cmd := exec.Command("bash", filepath.Join(repoRoot, "build", "image.sh"), version, "amd64-cuda")
	cmd.Env = append(os.Environ(), "OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build/image.sh amd64-cuda: %v\n%s", err, b)
	}
	if err := os.WriteFile(filepath.Join(store, "containers.conf"), []byte(containersConf), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(out, "svc-"+version+"-linux-amd64-cuda.oci.tar")); err != nil || st.Size() == 0 {
		t.Fatalf("no OCI archive of the CUDA image: %v", err)
	}
	image := "localhost/svc:" + version + "-amd64-cuda"

	b, err := podman("image", "inspect", "--format", "{{.Architecture}}|{{json .Config.Env}}", image).CombinedOutput()
	if err != nil {
		t.Fatalf("podman image inspect: %v\n%s", err, b)
	}
	for _, want := range []string{"amd64|", `"NVIDIA_VISIBLE_DEVICES=all"`, `"NVIDIA_DRIVER_CAPABILITIES=compute,utility"`, `"ORT_DISABLE_TELEMETRY=1"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("image config %s lacks %s", b, want)
		}
	}

	b, err = podman("run", "--rm", "--network=host", image, "providers").CombinedOutput()
	if err != nil {
		t.Fatalf("svc providers in the CUDA image: %v\n%s", err, b)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			rows[f[0]] = line
		}
	}
	for _, tt := range []struct{ provider, prefix, why string }{
		{"cuda", "CUDAExecutionProvider yes yes no", "libcuda.so.1 not found (NVIDIA driver)"},
		{"tensorrt", "TensorrtExecutionProvider yes yes no", "libnvinfer.so.10"},
		{"cpu", "CPUExecutionProvider yes yes yes", ""},
	} {
		row := rows[tt.provider]
		if !strings.HasPrefix(strings.Join(strings.Fields(row), " "), tt.provider+" "+tt.prefix) || !strings.Contains(row, tt.why) {
			t.Errorf("%s: row %q, want %q … %q\nwhole output:\n%s", tt.provider, row, tt.prefix, tt.why, b)
		}
	}
	if !strings.Contains(string(b), "ONNX Runtime 1.29.0 (/opt/svc/lib/libonnxruntime.so") {
		t.Errorf("the output does not name the image's ONNX Runtime 1.29.0:\n%s", b)
	}
}
