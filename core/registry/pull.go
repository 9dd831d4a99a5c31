package registry

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// EventKind tells what an Event reports.
type EventKind int

// Event kinds.
const (
	// EventInfo is a status line in Message.
	EventInfo EventKind = iota
	// EventWait says the pull waits for another one (Message).
	EventWait
	// EventFileStart starts (or resumes) downloading File: Size bytes in
	// all (-1 unknown), Done already on disk.
	EventFileStart
	// EventFileProgress reports Done of Size bytes of File.
	EventFileProgress
	// EventFileDone says File is complete and verified.
	EventFileDone
)

// Event reports the progress of a pull.
type Event struct {
	Kind    EventKind
	Message string
	File    string
	Size    int64
	Done    int64
}

// Puller downloads Hub repositories into a Store.
type Puller struct {
	Store *Store
	Hub   *Hub
	// Report receives progress events, from the pulling goroutine; nil
	// discards them.
	Report func(Event)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Retries is how many times a failed request is retried (resuming a
	// broken download where it stopped); 4 when zero, none when negative.
	Retries int
	// Backoff is the wait before retry n (1, 2, ...); 500 ms × n when nil.
	Backoff func(n int) time.Duration
	// Exporter is the command --convert runs ("optimum-cli", looked up on
	// the PATH, when empty).
	Exporter string
	// ExporterOutput receives the exporter's output (discarded when nil).
	ExporterOutput io.Writer
}

// PullOptions adjust a pull.
type PullOptions struct {
	// File is the .onnx file to serve, a path in the repository ("" = the
	// default choice: model.onnx or onnx/model.onnx).
	File string
	// Convert exports a repository without ONNX files with optimum-cli.
	Convert bool
}

// Pulled is the result of a pull.
type Pulled struct {
	Snapshot
	// Choice says how the model file was chosen.
	Choice string
	// Others lists the repository's other ONNX files.
	Others []string
	// Downloaded counts the files this pull fetched (0 when everything was
	// already in the store).
	Downloaded int
}

// ChecksumError is a downloaded file that does not match what the Hub
// announced. The download is discarded.
type ChecksumError struct {
	File      string
	Algorithm string
	Want, Got string
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("%s failed verification: %s is %s, the Hub announced %s; the download was discarded, pull again",
		e.File, e.Algorithm, e.Got, e.Want)
}

// NoONNXError is a repository without an ONNX file.
type NoONNXError struct {
	Repo   string
	Commit string
	// Reason says why it was not converted.
	Reason string
}

func (e *NoONNXError) Error() string {
	return fmt.Sprintf("repository %s has no ONNX file at %s; %s", e.Repo, ShortCommit(e.Commit), e.Reason)
}

// sideFiles are pulled when they sit beside the model or in a parent
// directory: what tokenizers and pre-processors need, and config.json
// (labels).
var sideFiles = map[string]bool{
	"config.json":              true,
	"tokenizer.json":           true,
	"tokenizer_config.json":    true,
	"special_tokens_map.json":  true,
	"added_tokens.json":        true,
	"vocab.txt":                true,
	"merges.txt":               true,
	"tokenizer.model":          true,
	"preprocessor_config.json": true,
	// sentence-transformers: the modules (pooling, normalisation) that
	// turn hidden states into sentence embeddings (docs/text.md).
	"modules.json": true,
}

// poolingConfig reports whether p is a sentence-transformers Pooling
// module's configuration, 1_Pooling/config.json at the repository root.
func poolingConfig(p string) bool {
	d, b := path.Split(p)
	d = strings.TrimSuffix(d, "/")
	return b == "config.json" && d != "" && !strings.Contains(d, "/") && strings.HasSuffix(d, "_Pooling")
}

func (p *Puller) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Puller) report(e Event) {
	if p.Report != nil {
		p.Report(e)
	}
}

func (p *Puller) say(format string, args ...any) {
	p.report(Event{Kind: EventInfo, Message: fmt.Sprintf(format, args...)})
}

func (p *Puller) retries() int {
	switch {
	case p.Retries < 0:
		return 0
	case p.Retries == 0:
		return 4
	}
	return p.Retries
}

func (p *Puller) wait(ctx context.Context, n int) error {
	d := time.Duration(n) * 500 * time.Millisecond
	if p.Backoff != nil {
		d = p.Backoff(n)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// retry runs fn until it succeeds, fails for good, or runs out of retries.
func (p *Puller) retry(ctx context.Context, what string, fn func() error) error {
	for n := 0; ; n++ {
		err := fn()
		if err == nil || ctx.Err() != nil || !temporary(err) || n >= p.retries() {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		if what != "" {
			err = fmt.Errorf("%s: %w", what, err)
		}
		p.say("%v; retrying (%d of %d)", err, n+1, p.retries())
		if err := p.wait(ctx, n+1); err != nil {
			return err
		}
	}
}

// Pull downloads ref's ONNX model (with its external data and the
// config and tokenizer files beside it) into the store, or converts the
// repository with optimum-cli when it has no ONNX file and opts.Convert is
// set. Pulling what is already there only records the pull.
func (p *Puller) Pull(ctx context.Context, ref Ref, opts PullOptions) (*Pulled, error) {
	var info *RepoInfo
	err := p.retry(ctx, "repository info", func() error {
		var err error
		info, err = p.Hub.Info(ctx, ref.Repo, ref.Revision)
		return err
	})
	if err != nil {
		return nil, err
	}
	commit := info.SHA
	p.say("%s@%s is commit %s", ref.Repo, ref.revisionOrDefault(), ShortCommit(commit))

	siblings := map[string]Sibling{}
	var onnx []string
	for _, s := range info.Siblings {
		siblings[s.RFilename] = s
		if strings.EqualFold(path.Ext(s.RFilename), ".onnx") {
			onnx = append(onnx, s.RFilename)
		}
	}
	sort.Strings(onnx)
	if len(onnx) == 0 {
		return p.convert(ctx, ref, commit, opts)
	}
	if opts.Convert {
		p.say("%s has ONNX files: nothing to convert", ref.Repo)
	}
	model, choice, err := chooseModel(onnx, opts.File, ref.Repo)
	if err != nil {
		return nil, err
	}
	others := without(onnx, model)
	if len(others) > 0 {
		p.say("model %s (%s); other ONNX files: %s (pick one with --file)", model, choice, strings.Join(others, ", "))
	} else {
		p.say("model %s (%s)", model, choice)
	}
	plan, err := planFiles(info.Siblings, model)
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

	d, err := p.startDownload(ctx, ref, commit)
	if err != nil {
		return nil, err
	}
	for _, s := range plan {
		if err := d.get(s); err != nil {
			return nil, d.fail(err)
		}
	}
	if d.downloaded == 0 && d.haveSnap {
		p.say("%s at %s is already in the store", ref.Repo, ShortCommit(commit))
	}
	mi, err := d.modelInfo(model, siblings)
	if err != nil {
		return nil, err
	}
	m := Manifest{
		Repo:      ref.Repo,
		Revision:  ref.revisionOrDefault(),
		Commit:    commit,
		Model:     model,
		Files:     sortedFiles(d.files),
		PulledAt:  p.now().UTC(),
		ModelInfo: mi,
	}
	return p.finish(ref, d.staging, m, choice, others, d.downloaded)
}

// download is one pull's files: those the snapshot of the commit already
// holds, and those it fetches into staging.
type download struct {
	p        *Puller
	ctx      context.Context
	ref      Ref
	commit   string
	snap     string
	staging  string
	existing Manifest
	haveSnap bool
	// files are the snapshot's, by path; downloaded counts those fetched.
	files      map[string]File
	downloaded int
}

// startDownload reads what the store already holds of commit: files
// already in the snapshot were verified when installed.
func (p *Puller) startDownload(ctx context.Context, ref Ref, commit string) (*download, error) {
	d := &download{p: p, ctx: ctx, ref: ref, commit: commit, files: map[string]File{},
		snap: p.Store.snapshotDir(ref.Repo, commit), staging: p.Store.stagingDir(ref.Repo, commit)}
	var err error
	d.existing, d.haveSnap, err = readManifest(d.snap)
	if err != nil {
		return nil, err
	}
	if d.haveSnap {
		for _, f := range d.existing.Files {
			if st, err := os.Stat(filepath.Join(d.snap, filepath.FromSlash(f.Path))); err == nil && st.Size() == f.Size {
				d.files[f.Path] = f
			}
		}
	}
	return d, nil
}

// get fetches s into staging unless the snapshot has it.
func (d *download) get(s Sibling) error {
	if _, ok := d.files[s.RFilename]; ok {
		return nil
	}
	f, err := d.p.fetch(d.ctx, d.ref.Repo, d.commit, s, d.staging)
	if err != nil {
		return err
	}
	d.files[f.Path] = f
	d.downloaded++
	return nil
}

// fail returns err, after discarding staging when a file did not match
// its checksum.
func (d *download) fail(err error) error {
	var ce *ChecksumError
	if errors.As(err, &ce) {
		d.p.discard(d.ref.Repo, d.staging)
	}
	return err
}

// modelInfo describes model from the file fetched or kept (or from the
// snapshot's manifest when nothing changed), fetching the external data it
// refers to; nil when the file cannot be read.
func (d *download) modelInfo(model string, siblings map[string]Sibling) (*ModelInfo, error) {
	if d.haveSnap && d.existing.Model == model && d.existing.ModelInfo != nil && d.downloaded == 0 {
		return d.existing.ModelInfo, nil
	}
	modelFile := filepath.Join(d.staging, filepath.FromSlash(model))
	if _, err := os.Stat(modelFile); err != nil {
		modelFile = filepath.Join(d.snap, filepath.FromSlash(model))
	}
	mi, locs, err := inspectModel(modelFile)
	if err != nil {
		d.p.say("warning: cannot read %s (%v); svc serve will not load it either", model, err)
		mi = nil
	}
	for _, loc := range locs {
		rel := path.Join(path.Dir(model), filepath.ToSlash(loc))
		s, ok := siblings[rel]
		if !ok || !filepath.IsLocal(filepath.FromSlash(rel)) {
			d.p.discard(d.ref.Repo, d.staging)
			return nil, fmt.Errorf("%s references external data %q, which is not in %s at %s", model, loc, d.ref.Repo, ShortCommit(d.commit))
		}
		if err := d.get(s); err != nil {
			return nil, d.fail(err)
		}
	}
	return mi, nil
}

// finish installs the snapshot and records the revision.
func (p *Puller) finish(ref Ref, staging string, m Manifest, choice string, others []string, downloaded int) (*Pulled, error) {
	if err := os.MkdirAll(staging, 0o755); err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	dir, err := p.Store.install(staging, m)
	if err != nil {
		return nil, err
	}
	p.removeIfEmpty(filepath.Dir(staging))
	if rev := ref.revisionOrDefault(); !strings.HasPrefix(m.Commit, rev) {
		if err := p.Store.writeRef(ref.Repo, rev, m.Commit); err != nil {
			return nil, err
		}
	}
	refs, err := p.Store.refs(ref.Repo)
	if err != nil {
		return nil, err
	}
	return &Pulled{
		Snapshot:   Snapshot{Manifest: m, Dir: dir, Refs: refs[m.Commit]},
		Choice:     choice,
		Others:     others,
		Downloaded: downloaded,
	}, nil
}

// discard removes a pull's staging directory (after a checksum failure:
// nothing of it can be trusted).
func (p *Puller) discard(repo, staging string) {
	_ = os.RemoveAll(staging)
	p.removeIfEmpty(filepath.Dir(staging))
}

func (p *Puller) removeIfEmpty(dir string) {
	_ = os.Remove(dir) // fails, as wanted, when not empty
}

// fetch downloads one file into staging (resuming a .part file left by an
// earlier attempt), verifies it and renames it to its final name.
func (p *Puller) fetch(ctx context.Context, repo, commit string, s Sibling, staging string) (File, error) {
	rel := filepath.FromSlash(s.RFilename)
	if !filepath.IsLocal(rel) {
		return File{}, fmt.Errorf("%s has a file with an unsafe name: %q", repo, s.RFilename)
	}
	final := filepath.Join(staging, rel)
	part := final + ".part"
	size := s.size()
	if st, err := os.Stat(final); err == nil && (size < 0 || st.Size() == size) {
		// Verified by an earlier pull that stopped before installing.
		sha, _, err := hashFile(final)
		if err != nil {
			return File{}, err
		}
		return File{Path: s.RFilename, Size: st.Size(), SHA256: sha, LFS: s.LFS != nil}, nil
	}
	if err := os.MkdirAll(filepath.Dir(part), 0o755); err != nil {
		return File{}, fmt.Errorf("download %s: %w", s.RFilename, err)
	}
	var linked string
	err := p.retry(ctx, "", func() error {
		return p.download(ctx, repo, commit, s.RFilename, part, size, &linked)
	})
	if err != nil {
		return File{}, err
	}
	sha, gitSHA, err := hashFile(part)
	if err != nil {
		return File{}, err
	}
	st, err := os.Stat(part)
	if err != nil {
		return File{}, fmt.Errorf("download %s: %w", s.RFilename, err)
	}
	var bad *ChecksumError
	switch {
	case size >= 0 && st.Size() != size:
		bad = &ChecksumError{File: s.RFilename, Algorithm: "size", Want: strconv.FormatInt(size, 10), Got: strconv.FormatInt(st.Size(), 10)}
	case s.LFS != nil && s.LFS.SHA256 != "":
		if !strings.EqualFold(sha, s.LFS.SHA256) {
			bad = &ChecksumError{File: s.RFilename, Algorithm: "sha256", Want: s.LFS.SHA256, Got: sha}
		}
	case s.LFS == nil && len(s.BlobID) == 40 && isHex(s.BlobID):
		if gitSHA != s.BlobID {
			bad = &ChecksumError{File: s.RFilename, Algorithm: "git blob sha1", Want: s.BlobID, Got: gitSHA}
		}
	case linked != "":
		if !strings.EqualFold(sha, linked) {
			bad = &ChecksumError{File: s.RFilename, Algorithm: "sha256", Want: linked, Got: sha}
		}
	}
	if bad != nil {
		_ = os.Remove(part)
		return File{}, bad
	}
	if err := os.Rename(part, final); err != nil {
		return File{}, fmt.Errorf("download %s: %w", s.RFilename, err)
	}
	p.report(Event{Kind: EventFileDone, File: s.RFilename, Size: st.Size(), Done: st.Size()})
	return File{Path: s.RFilename, Size: st.Size(), SHA256: sha, LFS: s.LFS != nil}, nil
}

// download appends the rest of file to part, from part's current size.
func (p *Puller) download(ctx context.Context, repo, commit, file, part string, size int64, linked *string) error {
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("download %s: %w", file, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("download %s: %w", file, err)
	}
	off := st.Size()
	if size >= 0 && off > size {
		if err := f.Truncate(0); err != nil {
			return fmt.Errorf("download %s: %w", file, err)
		}
		off = 0
	}
	if size >= 0 && off == size {
		return nil
	}
	if off > 0 {
		p.say("resuming %s at byte %d", file, off)
	}
	d, err := p.Hub.Open(ctx, repo, commit, file, off)
	if errors.Is(err, errRangeDone) {
		return nil // verification decides
	}
	if err != nil {
		return err
	}
	defer d.Body.Close()
	if d.LinkedETag != "" {
		*linked = d.LinkedETag
	}
	if d.Offset != off {
		// The server sent the whole file.
		if err := f.Truncate(0); err != nil {
			return fmt.Errorf("download %s: %w", file, err)
		}
		off = 0
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return fmt.Errorf("download %s: %w", file, err)
	}
	total := size
	if total < 0 {
		total = d.Total
	}
	p.report(Event{Kind: EventFileStart, File: file, Size: total, Done: off})
	buf := make([]byte, 256<<10)
	done := off
	for {
		n, rerr := d.Body.Read(buf)
		if n > 0 {
			if _, err := f.Write(buf[:n]); err != nil {
				return fmt.Errorf("download %s: %w", file, err)
			}
			done += int64(n)
			p.report(Event{Kind: EventFileProgress, File: file, Size: total, Done: done})
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("download %s: connection broken at byte %d: %w", file, done, rerr)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("download %s: %w", file, err)
	}
	return nil
}

// hashFile returns a file's sha256 and its git blob id (sha1 of
// "blob <size>\x00" and the content), both in hex.
func hashFile(file string) (sha string, gitSHA string, err error) {
	f, err := os.Open(file)
	if err != nil {
		return "", "", fmt.Errorf("verify: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", "", fmt.Errorf("verify: %w", err)
	}
	h256 := sha256.New()
	h1 := sha1.New()
	fmt.Fprintf(h1, "blob %d\x00", st.Size())
	if _, err := io.Copy(io.MultiWriter(h256, h1), f); err != nil {
		return "", "", fmt.Errorf("verify %s: %w", filepath.Base(file), err)
	}
	return hexSum(h256), hexSum(h1), nil
}

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// chooseModel picks the .onnx file to serve: the one asked for, else
// model.onnx, else onnx/model.onnx, else the only one.
func chooseModel(onnx []string, want, repo string) (string, string, error) {
	if want != "" {
		want = strings.TrimPrefix(path.Clean(filepath.ToSlash(want)), "./")
		if !strings.EqualFold(path.Ext(want), ".onnx") {
			return "", "", fmt.Errorf("--file %s is not an .onnx file; the ONNX files of %s are: %s", want, repo, strings.Join(onnx, ", "))
		}
		for _, f := range onnx {
			if f == want {
				return f, "chosen with --file", nil
			}
		}
		return "", "", fmt.Errorf("--file %s is not in %s; its ONNX files are: %s", want, repo, strings.Join(onnx, ", "))
	}
	for _, name := range []string{"model.onnx", "onnx/model.onnx"} {
		for _, f := range onnx {
			if f == name {
				return f, "the default", nil
			}
		}
	}
	if len(onnx) == 1 {
		return onnx[0], "the only ONNX file", nil
	}
	return "", "", fmt.Errorf("%s has %d ONNX files and no model.onnx or onnx/model.onnx; pick one with --file: %s", repo, len(onnx), strings.Join(onnx, ", "))
}

// planFiles lists what to download for model: the model, external data
// named after it (model.onnx_data, model.onnx.data), and the config and
// tokenizer files in its directory or a parent.
func planFiles(siblings []Sibling, model string) ([]Sibling, error) {
	dir, base := path.Dir(model), path.Base(model)
	var first, rest []Sibling
	for _, s := range siblings {
		p := s.RFilename
		d, b := path.Dir(p), path.Base(p)
		switch {
		case p == model:
			first = append(first, s)
		case d == dir && (strings.HasPrefix(b, base+"_data") || strings.HasPrefix(b, base+".data")):
			rest = append(rest, s)
		case sideFiles[b] && (d == "." || d == dir || strings.HasPrefix(dir, d+"/")), poolingConfig(p):
			rest = append(rest, s)
		default:
			continue
		}
		if !filepath.IsLocal(filepath.FromSlash(p)) {
			return nil, fmt.Errorf("the repository has a file with an unsafe name: %q", p)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].RFilename < rest[j].RFilename })
	return append(first, rest...), nil
}

func sortedFiles(m map[string]File) []File {
	out := make([]File, 0, len(m))
	for _, f := range m {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func without(list []string, x string) []string {
	var out []string
	for _, s := range list {
		if s != x {
			out = append(out, s)
		}
	}
	return out
}

// walkFiles lists the files under dir (paths with '/', sorted) with their
// sizes and sha256s, leaving out the manifest.
func walkFiles(dir string) ([]File, error) {
	var out []File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel == ManifestFile {
			return nil
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		sha, _, err := hashFile(p)
		if err != nil {
			return err
		}
		out = append(out, File{Path: filepath.ToSlash(rel), Size: st.Size(), SHA256: sha})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}
