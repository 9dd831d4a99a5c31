package main_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The pages whose console blocks TestDocs runs, relative to the repository
// root: README.md and every docs/*.md.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in docs/ (%v)", err)
	}
	pages = append([]string{filepath.Join(repoRoot, "README.md")}, pages...)
	for i, p := range pages {
		pages[i], _ = filepath.Rel(repoRoot, p)
	}
	return pages
}

// defaultServe is the server a page's examples talk to until one of its
// console blocks shows another 'svc serve'.
const defaultServe = "svc serve examples/demo --grpc-port 9000"

// TestDocs runs every console block of README.md and docs/*.md, in page
// order, with bash in a scratch directory that holds examples/, testdata/
// and build/, and compares each command's output (stdout and stderr, as a
// terminal shows them) with the output the page shows. A command must exit
// 0. A command 'svc serve ARGS' (after optional VAR=value words) is not run
// by bash: it names the server the page's later examples talk to, started
// once per command line on free ports, and its shown output, if the page
// shows any, is compared with that server's banner. The examples' ports 8080 and 9000 (HTTP and
// gRPC) are rewritten to the server's. Failures name the page and line.
func TestDocs(t *testing.T) {
	t.Parallel()
	sequential(t)
	r := newDocRunner(t)
	steps := 0
	for _, page := range docPages(t) {
		text, err := os.ReadFile(filepath.Join(repoRoot, page))
		if err != nil {
			t.Fatal(err)
		}
		n, failures := r.runPage(page, string(text))
		steps += n
		for _, f := range failures {
			t.Error(f)
		}
	}
	if steps < 10 {
		t.Fatalf("the pages have %d console commands; the examples are gone", steps)
	}
	t.Logf("%d commands run and compared", steps)
}

// TestDocsCatchesDrift: a page whose shown output no longer matches, or
// whose command fails, or that talks to a server that does not start, is
// reported at the command's line.
func TestDocsCatchesDrift(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile(filepath.Join("testdata", "docs", "drift.md"))
	if err != nil {
		t.Fatal(err)
	}
	n, failures := newDocRunner(t).runPage("drift.md", string(text))
	want := []string{
		`drift.md:6: $ curl -s localhost:8080/health: output line 1: the page shows "{\"status\":\"healthy\",\"model\":\"iris\"}", got "{\"status\":\"healthy\",\"model\":\"demo\"}"`,
		`drift.md:8: $ curl -s localhost:8080/v2/health/live: output line 2: the page shows "{\"ready\":true}", got no more lines`,
		`drift.md:11: $ curl -sf localhost:8080/nowhere: exit status 22`,
		`drift.md:17: $ svc serve examples/nothing-here: the server did not start: svc exited before serving: exit status 1`,
	}
	var got []string
	for _, f := range failures {
		got = append(got, strings.SplitN(f, "\n", 2)[0])
	}
	if n != 5 || !slices.Equal(got, want) {
		t.Fatalf("%d commands, failures:\n%s\nwant 5 commands, failures:\n%s", n, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// docRunner runs pages' console blocks; servers outlive the pages.
type docRunner struct {
	t       *testing.T
	dir     string // where the commands of the current page run
	env     []string
	servers map[string]*docServer // by 'svc serve' command line
}

// docServer is a server the examples talk to.
type docServer struct {
	*server
	port, grpcPort string // what the examples' 8080 and 9000 become
	err            error  // why it did not start
}

func newDocRunner(t *testing.T) *docRunner {
	t.Helper()
	skipShort(t, "runs the pages' examples with grpcurl (make tools), curl and jq")
	tools := filepath.Join(repoRoot, "build", "tools")
	if _, err := os.Stat(filepath.Join(tools, "grpcurl")); err != nil {
		t.Fatalf("grpcurl missing in %s: run 'make tools' (make test does it)", tools)
	}
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s missing: run ci/install-deps.sh (make tools does it)", tool)
		}
	}
	// The caller's environment, less what would change the examples' output:
	// svc's own variables, proxies, and the home directory's settings
	// (~/.curlrc).
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "SVC_") && !strings.HasSuffix(strings.ToLower(name), "_proxy") &&
			!slices.Contains([]string{"ONNXRUNTIME_LIB", "HOME", "PATH", "GOMAXPROCS"}, name) {
			env = append(env, kv)
		}
	}
	env = append(env,
		"PATH="+filepath.Dir(binFor(t))+string(os.PathListSeparator)+tools+string(os.PathListSeparator)+os.Getenv("PATH"),
		"ONNXRUNTIME_LIB="+ortLib, "HOME="+t.TempDir(), "SVC_HOME="+t.TempDir(), "SVC_LOG_FORMAT=json", "LC_ALL=C")
	return &docRunner{t: t, env: env, servers: map[string]*docServer{}}
}

// scratch makes a page's working directory, with examples/, testdata/ and
// build/ (the models make fetches, which examples/ocr serves).
func (r *docRunner) scratch() error {
	r.dir = r.t.TempDir()
	for _, d := range []string{"examples", "testdata", "build"} {
		if err := os.Symlink(filepath.Join(repoRoot, d), filepath.Join(r.dir, d)); err != nil {
			return err
		}
	}
	return nil
}

// runPage runs a page's console blocks and returns how many commands ran
// and what failed, each as "page:line: ...".
func (r *docRunner) runPage(page, text string) (int, []string) {
	blocks, problems := parseDoc(text)
	if err := r.scratch(); err != nil {
		return 0, []string{fmt.Sprintf("%s: %v", page, err)}
	}
	var failures []string
	for _, p := range problems {
		failures = append(failures, fmt.Sprintf("%s:%d: malformed block: %s", page, p.line, p.msg))
	}
	serve, n := defaultServe, 0
	for _, b := range blocks {
		for _, s := range b.steps {
			n++
			at := fmt.Sprintf("%s:%d: $ %s", page, s.line, s.command)
			if isServeCommand(s.command) {
				serve = s.command
			}
			srv := r.server(serve)
			if srv.err != nil {
				failures = append(failures, fmt.Sprintf("%s:%d: $ %s: the server did not start: %v", page, s.line, serve, srv.err))
				continue
			}
			var got []string
			switch {
			case isServeCommand(s.command) && len(s.want) == 0:
				continue // the page does not show this server's banner
			case isServeCommand(s.command):
				got = outputLines(srv.stdout.String())
			default:
				out, err := r.exec(srv.rewrite(s.command))
				if err != nil {
					failures = append(failures, fmt.Sprintf("%s: %v\n%s", at, err, out))
					continue
				}
				got = outputLines(out)
			}
			want := make([]string, len(s.want))
			for i, w := range s.want {
				want[i] = srv.rewrite(w)
			}
			if m := outputMismatch(want, got); m != "" {
				failures = append(failures, fmt.Sprintf("%s: %s\nthe page shows:\n%s\ngot:\n%s", at, m, strings.Join(want, "\n"), strings.Join(got, "\n")))
			}
		}
	}
	return n, failures
}

// isServeCommand reports whether a command is 'svc serve ...', after
// optional environment assignments, and nothing more: a command with a
// pipe, a redirection or a list ('svc serve x || echo ...') runs in bash.
func isServeCommand(command string) bool {
	if strings.ContainsAny(command, "|&;<>()`$") {
		return false
	}
	words := strings.Fields(command)
	for len(words) > 0 && strings.Contains(words[0], "=") {
		words = words[1:]
	}
	return len(words) >= 2 && words[0] == "svc" && words[1] == "serve"
}

// server returns the server of a 'svc serve' command line, started on first
// use: bash runs the line with --port 0 added, its 9000 becomes a free
// port, and the banner says the HTTP port.
func (r *docRunner) server(line string) *docServer {
	if s, ok := r.servers[line]; ok {
		return s
	}
	s := &docServer{grpcPort: freePort(r.t)}
	r.servers[line] = s
	if slices.ContainsFunc(strings.Fields(line), func(w string) bool {
		return w == "--port" || w == "-p" || strings.HasPrefix(w, "--port=")
	}) {
		s.err = errors.New("the examples' server runs on the default port 8080: drop --port")
		return s
	}
	cmd := exec.Command("bash", "-c", s.rewrite(line)+" --port 0")
	cmd.Dir, cmd.Env = r.dir, r.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 10 * time.Second
	if s.server, s.err = tryLaunchServer(r.t, 90*time.Second, cmd); s.err == nil {
		s.port = s.URL[strings.LastIndex(s.URL, ":")+1:]
	}
	return s
}

// examplePorts finds the examples' ports: 8080 (HTTP) and 9000 (gRPC) as
// whole numbers.
var examplePorts = regexp.MustCompile(`(^|[^0-9.])(8080|9000)\b`)

// rewrite puts the server's ports in place of the examples' 8080 and 9000.
func (s *docServer) rewrite(text string) string {
	return examplePorts.ReplaceAllStringFunc(text, func(m string) string {
		p := s.port
		if strings.HasSuffix(m, "9000") {
			p = s.grpcPort
		}
		return m[:len(m)-4] + p
	})
}

// exec runs one command with bash (pipefail on) and returns its output.
func (r *docRunner) exec(command string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", command)
	cmd.Dir, cmd.Env = r.dir, r.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	return out.String(), err
}
