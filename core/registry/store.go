// Package registry is svc's local model store and its Hugging Face Hub
// client: 'svc pull' downloads a repository's ONNX files into the store,
// and 'svc serve ORG/NAME' finds them there.
//
// Layout under the root ($SVC_HOME, default <user cache dir>/svc):
//
//	models/<org>--<name>/snapshots/<commit>/     the repository's files at their repository paths
//	models/<org>--<name>/snapshots/<commit>/svc-manifest.json
//	models/<org>--<name>/refs/<revision>         the commit a branch or tag resolved to (revision path-escaped)
//	tmp/<org>--<name>/<commit>/                  downloads in progress (*.part files, resumable)
//	tmp/trash-*                                  snapshots being removed
//	locks/<org>--<name>.lock                     held (flock) while pulling or removing
//
// A snapshot directory appears only complete: it is assembled under tmp/
// and renamed into place. Files added later to an existing snapshot (a
// second variant chosen with --file) are renamed in one by one, complete
// and verified, before the manifest naming them replaces the old one.
package registry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/svc-dev/svc/core"
)

// ManifestFile is the manifest's name inside a snapshot directory.
const ManifestFile = "svc-manifest.json"

// ErrNotPulled is returned when a model is not in the store.
var ErrNotPulled = errors.New("not in the store")

// Store is the local model store under one root directory. Opening it does
// no I/O; directories are created when something is pulled.
type Store struct {
	root string
}

// Open returns the store rooted at root.
func Open(root string) *Store { return &Store{root: root} }

// DefaultRoot is $SVC_HOME, else <user cache dir>/svc (~/.cache/svc on
// Linux), else svc under the temporary directory.
func DefaultRoot() string {
	if h := os.Getenv("SVC_HOME"); h != "" {
		return h
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "svc")
	}
	return filepath.Join(os.TempDir(), "svc")
}

// Root is the store's directory.
func (s *Store) Root() string { return s.root }

// Manifest describes one snapshot: a repository at a commit.
type Manifest struct {
	Repo string `json:"repo"`
	// Revision is the revision asked for by the latest pull ("main" by
	// default, or a tag, branch or commit).
	Revision string `json:"revision"`
	Commit   string `json:"commit"`
	// Model is the .onnx file served, relative to the snapshot, with '/'.
	Model    string    `json:"model"`
	Files    []File    `json:"files"`
	PulledAt time.Time `json:"pulled_at"`
	// Converted is set when the repository had no ONNX file and the model
	// was exported with optimum-cli.
	Converted bool `json:"converted,omitempty"`
	// ModelInfo is what svc read from Model when it was pulled; nil when
	// the file could not be read.
	ModelInfo *ModelInfo `json:"model_info,omitempty"`
}

// File is one file of a snapshot.
type File struct {
	// Path is relative to the snapshot, with '/'.
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// LFS is set for files the Hub stores in LFS (verified against the
	// Hub's sha256).
	LFS bool `json:"lfs,omitempty"`
}

// ModelInfo is read from the model file when it is pulled.
type ModelInfo struct {
	// Version is the model's own version (a "version" metadata entry, else
	// model_version), "" when it has none.
	Version string        `json:"version,omitempty"`
	Outputs []ModelOutput `json:"outputs"`
}

// ModelOutput is one graph output: its name and shape (-1 for dynamic
// dimensions, null when the rank is unknown or the output is no tensor).
type ModelOutput struct {
	Name  string  `json:"name"`
	Shape []int64 `json:"shape"`
}

// Size is the total size of the snapshot's files.
func (m *Manifest) Size() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

func (m *Manifest) file(path string) (File, bool) {
	for _, f := range m.Files {
		if f.Path == path {
			return f, true
		}
	}
	return File{}, false
}

// Snapshot is a pulled snapshot in the store.
type Snapshot struct {
	Manifest
	// Dir is the snapshot directory.
	Dir string
	// Refs are the revisions (branches, tags) that resolved to this commit.
	Refs []string
}

// ModelFile is the path of the served .onnx file.
func (s *Snapshot) ModelFile() string { return filepath.Join(s.Dir, filepath.FromSlash(s.Model)) }

func (s *Store) repoDir(repo string) string { return filepath.Join(s.root, "models", repoKey(repo)) }
func (s *Store) snapshotDir(repo, commit string) string {
	return filepath.Join(s.repoDir(repo), "snapshots", commit)
}
func (s *Store) refsDir(repo string) string { return filepath.Join(s.repoDir(repo), "refs") }
func (s *Store) stagingDir(repo, commit string) string {
	return filepath.Join(s.root, "tmp", repoKey(repo), commit)
}
func (s *Store) lockFile(repo string) string {
	return filepath.Join(s.root, "locks", repoKey(repo)+".lock")
}

// readManifest reads a snapshot's manifest; ok is false when the snapshot
// does not exist.
func readManifest(dir string) (Manifest, bool, error) {
	var m Manifest
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("read manifest: %w", err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, false, fmt.Errorf("read manifest %s: %w", filepath.Join(dir, ManifestFile), err)
	}
	return m, true, nil
}

// snapshots lists a repository's complete snapshots, newest pull first.
func (s *Store) snapshots(repo string) ([]Snapshot, error) {
	dir := filepath.Join(s.repoDir(repo), "snapshots")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read store: %w", err)
	}
	refs, err := s.refs(repo)
	if err != nil {
		return nil, err
	}
	var out []Snapshot
	for _, e := range entries {
		if !e.IsDir() || !isCommit(e.Name()) {
			continue
		}
		snapDir := filepath.Join(dir, e.Name())
		m, ok, err := readManifest(snapDir)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		out = append(out, Snapshot{Manifest: m, Dir: snapDir, Refs: refs[m.Commit]})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].PulledAt.After(out[j].PulledAt) })
	return out, nil
}

// refs maps each commit to the revisions that resolved to it, sorted.
func (s *Store) refs(repo string) (map[string][]string, error) {
	dir := s.refsDir(repo)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read refs: %w", err)
	}
	out := map[string][]string{}
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		rev, err := url.PathUnescape(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read refs: %w", err)
		}
		commit := strings.TrimSpace(string(data))
		out[commit] = append(out[commit], rev)
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out, nil
}

// Find returns the snapshot for ref: the newest pulled when ref names no
// revision, else the one the revision (branch, tag, or commit or commit
// prefix of at least 7 characters) resolved to. The error wraps
// ErrNotPulled when there is none.
func (s *Store) Find(ref Ref) (Snapshot, error) {
	snaps, err := s.snapshots(ref.Repo)
	if err != nil {
		return Snapshot{}, err
	}
	if len(snaps) == 0 {
		return Snapshot{}, fmt.Errorf("%s: %w", ref.Repo, ErrNotPulled)
	}
	if ref.Revision == "" {
		return snaps[0], nil
	}
	for _, sn := range snaps {
		for _, r := range sn.Refs {
			if r == ref.Revision {
				return sn, nil
			}
		}
	}
	if len(ref.Revision) >= 7 && isHex(ref.Revision) {
		var found []Snapshot
		for _, sn := range snaps {
			if strings.HasPrefix(sn.Commit, ref.Revision) {
				found = append(found, sn)
			}
		}
		switch len(found) {
		case 1:
			return found[0], nil
		case 0:
		default:
			return Snapshot{}, fmt.Errorf("%s: commit prefix %q matches %d snapshots; give more of the hash", ref, ref.Revision, len(found))
		}
	}
	return Snapshot{}, fmt.Errorf("%s: %w", ref, ErrNotPulled)
}

// Lookup finds a pulled model for Resolve: id is ORG/NAME[@REVISION]. Anything
// else is not in the store.
func (s *Store) Lookup(id string) (core.Source, bool, error) {
	ref, err := ParseRef(id)
	if err != nil {
		return core.Source{}, false, nil
	}
	sn, err := s.Find(ref)
	if errors.Is(err, ErrNotPulled) {
		return core.Source{}, false, nil
	}
	if err != nil {
		return core.Source{}, false, err
	}
	return sn.Source()
}

// Source describes the snapshot for serving. The version is left empty
// when the model carries its own (the predictor reads it from the file),
// else it is the short commit: the spec's order is configuration, model
// metadata, registry revision, "1".
func (sn *Snapshot) Source() (core.Source, bool, error) {
	file := sn.ModelFile()
	if _, err := os.Stat(file); err != nil {
		return core.Source{}, false, fmt.Errorf("snapshot %s of %s is incomplete (%s is missing); remove it with 'svc rm %s@%s' and pull it again",
			ShortCommit(sn.Commit), sn.Repo, sn.Model, sn.Repo, ShortCommit(sn.Commit))
	}
	src := core.Source{
		Name:   sn.Repo,
		File:   file,
		Origin: "registry",
		Metadata: map[string]string{
			"repository": sn.Repo,
			"revision":   sn.Revision,
			"commit":     sn.Commit,
		},
	}
	if sn.ModelInfo == nil || sn.ModelInfo.Version == "" {
		src.Version = ShortCommit(sn.Commit)
	}
	labels, err := sn.labels()
	if err != nil {
		return core.Source{}, false, err
	}
	src.Labels = labels
	return src, true, nil
}

// List returns every snapshot in the store, by repository, newest pull
// first within one.
func (s *Store) List() ([]Snapshot, error) {
	entries, err := os.ReadDir(filepath.Join(s.root, "models"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read store: %w", err)
	}
	var out []Snapshot
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		org, name, ok := strings.Cut(e.Name(), "--")
		if !ok {
			continue
		}
		snaps, err := s.snapshots(org + "/" + name)
		if err != nil {
			return nil, err
		}
		out = append(out, snaps...)
	}
	return out, nil
}

// Remove deletes a pulled model: every snapshot of the repository (and its
// unfinished downloads) when ref names no revision, else the snapshot the
// revision resolves to and the refs pointing at it. It returns what was
// removed; the error wraps ErrNotPulled when there was nothing.
func (s *Store) Remove(ctx context.Context, ref Ref) ([]Snapshot, error) {
	_, err1 := os.Stat(s.repoDir(ref.Repo))
	_, err2 := os.Stat(filepath.Join(s.root, "tmp", repoKey(ref.Repo)))
	if err1 != nil && err2 != nil {
		return nil, fmt.Errorf("%s: %w", ref, ErrNotPulled)
	}
	unlock, err := s.lock(ctx, ref.Repo, nil)
	if err != nil {
		return nil, err
	}
	defer unlock()

	if ref.Revision == "" {
		snaps, err := s.snapshots(ref.Repo)
		if err != nil {
			return nil, err
		}
		_, statErr := os.Stat(s.repoDir(ref.Repo))
		if len(snaps) == 0 && statErr != nil {
			return nil, fmt.Errorf("%s: %w", ref.Repo, ErrNotPulled)
		}
		if err := s.trash(s.repoDir(ref.Repo)); err != nil {
			return nil, err
		}
		if err := s.trash(filepath.Join(s.root, "tmp", repoKey(ref.Repo))); err != nil {
			return nil, err
		}
		return snaps, nil
	}

	sn, err := s.Find(ref)
	if err != nil {
		return nil, err
	}
	if err := s.trash(sn.Dir); err != nil {
		return nil, err
	}
	for _, r := range sn.Refs {
		if err := os.Remove(filepath.Join(s.refsDir(ref.Repo), refFile(r))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("remove ref %s: %w", r, err)
		}
	}
	if left, err := s.snapshots(ref.Repo); err == nil && len(left) == 0 {
		if err := s.trash(s.repoDir(ref.Repo)); err != nil {
			return nil, err
		}
	}
	return []Snapshot{sn}, nil
}

// trash moves dir out of sight in one rename, then deletes it.
func (s *Store) trash(dir string) error {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	tmp := filepath.Join(s.root, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	dst := filepath.Join(tmp, "trash-"+randomSuffix())
	if err := os.Rename(dir, dst); err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	if err := os.RemoveAll(dst); err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	return nil
}

// install makes the snapshot in staging visible. m lists every file of
// the snapshot: those in staging are moved in; the others must already be
// in the snapshot directory. A new snapshot is one directory rename; an
// existing one gets the new files one rename each, then the new manifest.
func (s *Store) install(staging string, m Manifest) (string, error) {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return "", fmt.Errorf("write manifest: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(staging, ManifestFile), append(data, '\n')); err != nil {
		return "", err
	}
	snap := s.snapshotDir(m.Repo, m.Commit)
	keep := map[string]bool{ManifestFile: true}
	for _, f := range m.Files {
		keep[filepath.FromSlash(f.Path)] = true
	}
	if _, err := os.Stat(snap); errors.Is(err, fs.ErrNotExist) {
		if err := pruneExcept(staging, keep); err != nil {
			return "", err
		}
		if err := os.MkdirAll(filepath.Dir(snap), 0o755); err != nil {
			return "", fmt.Errorf("install: %w", err)
		}
		if err := os.Rename(staging, snap); err != nil {
			return "", fmt.Errorf("install: %w", err)
		}
		return snap, nil
	}
	for _, f := range m.Files {
		rel := filepath.FromSlash(f.Path)
		src := filepath.Join(staging, rel)
		if _, err := os.Stat(src); err != nil {
			continue // already in the snapshot
		}
		dst := filepath.Join(snap, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", fmt.Errorf("install: %w", err)
		}
		if err := os.Rename(src, dst); err != nil {
			return "", fmt.Errorf("install: %w", err)
		}
	}
	if err := os.Rename(filepath.Join(staging, ManifestFile), filepath.Join(snap, ManifestFile)); err != nil {
		return "", fmt.Errorf("install: %w", err)
	}
	if err := os.RemoveAll(staging); err != nil {
		return "", fmt.Errorf("install: %w", err)
	}
	return snap, nil
}

// writeRef records that rev resolved to commit.
func (s *Store) writeRef(repo, rev, commit string) error {
	return writeFileAtomic(filepath.Join(s.refsDir(repo), refFile(rev)), []byte(commit+"\n"))
}

// writeFileAtomic writes a hidden temporary file beside path and renames
// it over path.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+randomSuffix())
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// pruneExcept removes from dir every file whose relative path is not in
// keep (leftovers of an earlier, different pull of the same commit), then
// the directories left empty.
func pruneExcept(dir string, keep map[string]bool) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel != "." {
				dirs = append(dirs, p)
			}
			return nil
		}
		if !keep[rel] {
			return os.Remove(p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Remove(dirs[i]) // fails, as wanted, when not empty
	}
	return nil
}

func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
