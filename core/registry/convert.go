package registry

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// DefaultExporter is the command that converts a repository to ONNX.
const DefaultExporter = "optimum-cli"

const installExporter = "install it with pip install 'optimum[exporters]'"

// convert exports a repository without ONNX files with
// 'optimum-cli export onnx --model ORG/NAME DIR' and stores the result as
// the snapshot of commit. optimum downloads the repository itself (it
// honours HF_ENDPOINT and HF_TOKEN too) and has no revision option, so
// only the default branch can be converted.
func (p *Puller) convert(ctx context.Context, ref Ref, commit string, opts PullOptions) (*Pulled, error) {
	exporter, exe, err := p.exporter(ref, commit, opts)
	if err != nil {
		return nil, err
	}
	unlock, err := p.Store.lock(ctx, ref.Repo, func() {
		p.report(Event{Kind: EventWait, Message: fmt.Sprintf("waiting for another pull of %s to finish", ref.Repo)})
	})
	if err != nil {
		return nil, err
	}
	defer unlock()

	snap := p.Store.snapshotDir(ref.Repo, commit)
	staging := p.Store.stagingDir(ref.Repo, commit)
	existing, ok, err := readManifest(snap)
	if err != nil {
		return nil, err
	}
	if ok && existing.Converted {
		return p.reconverted(ref, commit, existing, exporter, opts)
	}
	files, err := p.export(ctx, ref, exporter, exe, staging)
	if err != nil {
		return nil, err
	}
	onnx := onnxOf(files)
	model, choice, err := chooseModel(onnx, opts.File, ref.Repo)
	if err != nil {
		p.discard(ref.Repo, staging)
		return nil, err
	}
	mi, _, err := inspectModel(filepath.Join(staging, filepath.FromSlash(model)))
	if err != nil {
		p.say("warning: cannot read %s (%v); svc serve will not load it either", model, err)
		mi = nil
	}
	m := Manifest{
		Repo:      ref.Repo,
		Revision:  ref.revisionOrDefault(),
		Commit:    commit,
		Model:     model,
		Files:     files,
		PulledAt:  p.now().UTC(),
		Converted: true,
		ModelInfo: mi,
	}
	return p.finish(ref, staging, m, "converted with "+exporter+", "+choice, without(onnx, model), len(files))
}

// exporter is the exporter's name and path, or why the repository cannot
// be converted: --convert not given, the exporter not installed, or a
// revision other than the default branch asked for.
func (p *Puller) exporter(ref Ref, commit string, opts PullOptions) (name, exe string, err error) {
	name = p.Exporter
	if name == "" {
		name = DefaultExporter
	}
	if !opts.Convert {
		return "", "", &NoONNXError{Repo: ref.Repo, Commit: commit, Reason: fmt.Sprintf(
			"pass --convert to export it with %s (%s), or export it yourself and serve the directory: svc serve DIR", name, installExporter)}
	}
	exe, err = exec.LookPath(name)
	if err != nil {
		return "", "", &NoONNXError{Repo: ref.Repo, Commit: commit, Reason: fmt.Sprintf(
			"--convert needs %s on the PATH: %s, or export the model yourself (%s export onnx --model %s DIR) and serve the directory: svc serve DIR",
			name, installExporter, name, ref.Repo)}
	}
	if ref.Revision != "" && ref.Revision != DefaultRevision {
		return "", "", &NoONNXError{Repo: ref.Repo, Commit: commit, Reason: fmt.Sprintf(
			"--convert exports the default branch only (%s export onnx has no revision option); pull %s without @%s, or export that revision yourself and serve the directory",
			name, ref.Repo, ref.Revision)}
	}
	return name, exe, nil
}

// reconverted serves the snapshot of commit converted before, the model
// chosen again for opts.
func (p *Puller) reconverted(ref Ref, commit string, existing Manifest, exporter string, opts PullOptions) (*Pulled, error) {
	p.say("%s at %s was converted before", ref.Repo, ShortCommit(commit))
	model, choice, err := chooseModel(onnxOf(existing.Files), opts.File, ref.Repo)
	if err != nil {
		return nil, err
	}
	m := existing
	m.Revision, m.PulledAt = ref.revisionOrDefault(), p.now().UTC()
	if model != m.Model {
		m.Model = model
		m.ModelInfo, _, _ = inspectModel(filepath.Join(p.Store.snapshotDir(ref.Repo, commit), filepath.FromSlash(model)))
	}
	return p.finish(ref, p.Store.stagingDir(ref.Repo, commit), m, "converted with "+exporter+", "+choice, without(onnxOf(m.Files), model), 0)
}

// export runs 'EXPORTER export onnx --model REPO staging' and returns the
// files it wrote, at least one of them an .onnx file. On failure staging
// is gone.
func (p *Puller) export(ctx context.Context, ref Ref, exporter, exe, staging string) ([]File, error) {
	if err := os.RemoveAll(staging); err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	if err := os.MkdirAll(staging, 0o755); err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	p.say("%s has no ONNX file: converting it with %s export onnx (this can take a while)", ref.Repo, exe)
	cmd := exec.CommandContext(ctx, exe, "export", "onnx", "--model", ref.Repo, staging)
	tail := &tailBuffer{max: 4096}
	out := p.ExporterOutput
	if out == nil {
		out = io.Discard
	}
	cmd.Stdout = out
	cmd.Stderr = io.MultiWriter(out, tail)
	if err := cmd.Run(); err != nil {
		p.discard(ref.Repo, staging)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := fmt.Sprintf("%s export onnx --model %s failed: %v", exporter, ref.Repo, err)
		if last := tail.lastLine(); last != "" {
			msg += ": " + last
		}
		return nil, fmt.Errorf("%s", msg)
	}
	files, err := walkFiles(staging)
	if err != nil {
		p.discard(ref.Repo, staging)
		return nil, fmt.Errorf("convert: %w", err)
	}
	if len(onnxOf(files)) == 0 {
		p.discard(ref.Repo, staging)
		return nil, fmt.Errorf("%s export onnx --model %s wrote no .onnx file", exporter, ref.Repo)
	}
	return files, nil
}

func onnxOf(files []File) []string {
	var out []string
	for _, f := range files {
		if strings.EqualFold(path.Ext(f.Path), ".onnx") {
			out = append(out, f.Path)
		}
	}
	return out
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

// lastLine is the last non-empty line written.
func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := bytes.Split(bytes.TrimSpace(t.b), []byte("\n"))
	return strings.TrimSpace(string(lines[len(lines)-1]))
}
