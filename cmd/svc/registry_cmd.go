package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/svc-dev/svc/core/registry"
)

func pullCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "pull",
		Usage:     "download a model from the Hugging Face Hub into the local store",
		ArgsUsage: "ORG/NAME[@REVISION]",
		Description: "Downloads the repository's ONNX model (model.onnx or onnx/model.onnx unless --file\n" +
			"says otherwise), its external data, and the config.json and tokenizer files beside it\n" +
			"into $SVC_HOME (default: <user cache dir>/svc). REVISION is a branch, tag or commit\n" +
			"(default: main). HF_TOKEN authenticates gated and private repositories; HF_ENDPOINT\n" +
			"points at a mirror. An interrupted pull resumes where it stopped.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "file", Usage: "the .onnx file to serve, as a path in the repository (e.g. onnx/model_fp16.onnx)"},
			&cli.BoolFlag{Name: "convert", Usage: "export a repository without ONNX files with optimum-cli export onnx"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usageErr("pull takes exactly one ORG/NAME[@REVISION] (got %d arguments); see 'svc pull --help'", cmd.Args().Len())
			}
			ref, err := registry.ParseRef(cmd.Args().First())
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			return pull(ctx, ref, registry.PullOptions{File: cmd.String("file"), Convert: cmd.Bool("convert")}, stdout, stderr)
		},
	}
}

func pull(ctx context.Context, ref registry.Ref, opts registry.PullOptions, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	hub := registry.HubFromEnv(os.Getenv)
	hub.UserAgent = "svc/" + version
	prog := newProgress(stderr)
	p := &registry.Puller{
		Store:          registry.Open(registry.DefaultRoot()),
		Hub:            hub,
		Report:         prog.event,
		ExporterOutput: stderr,
	}
	res, err := p.Pull(ctx, ref, opts)
	prog.close()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("pull of %s interrupted; run the same svc pull again to resume", ref)
		}
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	fmt.Fprintf(stdout, "pulled %s@%s (commit %s)\n", res.Repo, res.Revision, registry.ShortCommit(res.Commit))
	model := fmt.Sprintf("%s (%s)", res.Model, res.Choice)
	if len(res.Others) > 0 {
		model = fmt.Sprintf("%s (%s; also in the repository: %s; pick one with --file)", res.Model, res.Choice, strings.Join(res.Others, ", "))
	}
	fmt.Fprintf(stdout, "  model   %s\n", model)
	fmt.Fprintf(stdout, "  files   %d, %s (%d downloaded now)\n", len(res.Files), humanSize(res.Size()), res.Downloaded)
	fmt.Fprintf(stdout, "  stored  %s\n", res.Dir)
	name := ref.Repo
	if ref.Revision != "" {
		name = ref.String()
	}
	fmt.Fprintf(stdout, "serve it with: svc serve %s\n", name)
	return nil
}

func listCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list the models pulled into the local store",
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 0 {
				return usageErr("list takes no arguments (got %d)", cmd.Args().Len())
			}
			store := registry.Open(registry.DefaultRoot())
			snaps, err := store.List()
			if err != nil {
				return err
			}
			if len(snaps) == 0 {
				fmt.Fprintf(stdout, "no models in %s; pull one with: svc pull ORG/NAME\n", store.Root())
				return nil
			}
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "MODEL\tREVISION\tCOMMIT\tSIZE\tPULLED\tFILE")
			for _, s := range snaps {
				rev := strings.Join(s.Refs, ",")
				if rev == "" {
					rev = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Repo, rev, registry.ShortCommit(s.Commit),
					humanSize(s.Size()), s.PulledAt.Local().Format("2006-01-02 15:04"), s.Model)
			}
			return tw.Flush()
		},
	}
}

func rmCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:        "rm",
		Usage:       "remove a pulled model from the local store",
		ArgsUsage:   "ORG/NAME[@REVISION]",
		Description: "Without @REVISION, removes every pulled snapshot of the repository and its unfinished\ndownloads; with it, the snapshot that revision (branch, tag or commit) resolved to.",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usageErr("rm takes exactly one ORG/NAME[@REVISION] (got %d arguments); see 'svc rm --help'", cmd.Args().Len())
			}
			ref, err := registry.ParseRef(cmd.Args().First())
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			store := registry.Open(registry.DefaultRoot())
			removed, err := store.Remove(ctx, ref)
			if errors.Is(err, registry.ErrNotPulled) {
				return fmt.Errorf("%s is not in the store (%s); 'svc list' shows what is", ref, store.Root())
			}
			if err != nil {
				return fmt.Errorf("rm %s: %w", ref, err)
			}
			if len(removed) == 0 {
				fmt.Fprintf(stdout, "removed %s (unfinished downloads only)\n", ref.Repo)
			}
			for _, s := range removed {
				fmt.Fprintf(stdout, "removed %s@%s (commit %s, %s)\n", s.Repo, s.Revision, registry.ShortCommit(s.Commit), humanSize(s.Size()))
			}
			return nil
		},
	}
}

// humanSize prints a byte count in binary units.
func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 3 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGT"[i])
}

// progress shows a pull: a redrawn bar per file on a terminal, plain lines
// otherwise (CI logs, tests).
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	tty     bool
	file    string
	started time.Time
	from    int64
	drawn   time.Time
	open    bool // a bar line is on screen without its newline
}

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	return &progress{w: w, tty: ok && isTerminal(f) && os.Getenv("TERM") != "dumb"}
}

func (p *progress) event(e registry.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Kind {
	case registry.EventInfo, registry.EventWait:
		p.endLine()
		fmt.Fprintln(p.w, e.Message)
	case registry.EventFileStart:
		p.endLine()
		p.file, p.started, p.from = e.File, time.Now(), e.Done
		if !p.tty {
			if e.Done == 0 { // a resumed download was announced already
				fmt.Fprintf(p.w, "downloading %s (%s)\n", e.File, sizeOrUnknown(e.Size))
			}
			return
		}
		p.draw(e)
	case registry.EventFileProgress:
		if p.tty && time.Since(p.drawn) >= 100*time.Millisecond {
			p.draw(e)
		}
	case registry.EventFileDone:
		if p.tty {
			if p.file == e.File {
				p.draw(e)
			}
			p.endLine()
			return
		}
		fmt.Fprintf(p.w, "verified %s (%s)\n", e.File, humanSize(e.Size))
	}
}

// draw redraws the bar line: name, bar, percentage, bytes, speed.
func (p *progress) draw(e registry.Event) {
	const width = 24
	name := e.File
	if len(name) > 30 {
		name = "…" + name[len(name)-29:]
	}
	bar, pct := strings.Repeat("·", width), "   "
	if e.Size > 0 {
		n := int(e.Done * width / e.Size)
		bar = strings.Repeat("█", n) + strings.Repeat("·", width-n)
		pct = fmt.Sprintf("%3d%%", e.Done*100/e.Size)
	}
	speed := ""
	if el := time.Since(p.started).Seconds(); el > 0.2 {
		speed = humanSize(int64(float64(e.Done-p.from)/el)) + "/s"
	}
	fmt.Fprintf(p.w, "\r\033[K%-30s %s %s %s/%s %s", name, bar, pct, humanSize(e.Done), sizeOrUnknown(e.Size), speed)
	p.drawn, p.open = time.Now(), true
}

func (p *progress) endLine() {
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}

func (p *progress) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLine()
}

func sizeOrUnknown(n int64) string {
	if n < 0 {
		return "size unknown"
	}
	return humanSize(n)
}
