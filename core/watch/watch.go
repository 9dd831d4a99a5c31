// Package watch reloads the served model when its local file or folder
// changes: fsnotify reports the changes (writes, renames over the file,
// symlink swaps) in the directories that hold the model and the file a
// symlink points to (a model folder's parent too: a folder deleted and
// made again is watched anew), and a change is acted on only once it has settled:
// the model's size and modification time (of every file, for a folder) stay
// the same for the settle time, and the model file parses as ONNX. A
// half-written file never settles into a parseable one until it is whole,
// so it is never loaded; a file that settles and does not parse is
// reported and skipped until it changes again.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/onnxpb"
)

// Options configure a watch.
type Options struct {
	// Path is the model as served: its .onnx file, or the folder it was
	// found in (then any file under it counts).
	Path string
	// File is the .onnx file loaded from Path (Path itself for a file).
	File string
	// Settle is how long a change must stay still before it counts.
	Settle time.Duration
	// MaxSize bounds what is read of the model file to parse it
	// (runtime.max_model_size; 0: no bound).
	MaxSize int64
	// Reload is called once per settled change.
	Reload func(ctx context.Context) error
	// Skipped, when set, is called with why a settled change was not
	// reloaded (the file does not parse as ONNX).
	Skipped func(error)
	// Started, when set, is called once the watch is in place and what
	// is served now has been read: a change from then on is seen.
	Started func()
	Log     *zap.Logger
}

// Run watches until ctx ends. It returns an error only when watching
// cannot start.
func Run(ctx context.Context, o Options) error {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.File == "" {
		o.File = o.Path
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", o.Path, err)
	}
	defer w.Close()
	s := &state{o: o, w: w, watched: map[string]bool{}}
	if st, err := os.Stat(o.Path); err == nil && st.IsDir() {
		s.folder = filepath.Clean(o.Path)
	}
	if err := s.watchDirs(); err != nil {
		return err
	}
	// What is served now is the baseline: only a change from it reloads.
	s.loaded = s.fingerprint()
	s.seen = s.loaded
	if o.Started != nil {
		o.Started()
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	pending := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				s.forget(ev.Name)
			}
			if !s.relevant(ev.Name) {
				continue
			}
			// Every change restarts the settle time.
			pending = true
			timer.Reset(o.Settle)
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			o.Log.Warn("watching the model", zap.String("path", o.Path), zap.Error(err))
		case <-timer.C:
			if !pending {
				continue
			}
			_ = s.watchDirs() // a symlink may point somewhere new
			fp := s.fingerprint()
			if fp != s.seen {
				// Still changing: wait for it to settle.
				s.seen = fp
				timer.Reset(o.Settle)
				continue
			}
			pending = false
			if fp == s.loaded {
				continue
			}
			if err := check(o.File, o.MaxSize); err != nil && !refused(err) {
				s.loaded = fp // skipped until it changes again
				o.Log.Warn("the model file changed but is no ONNX model yet; waiting for the next change", zap.String("file", o.File), zap.Error(err))
				if o.Skipped != nil {
					o.Skipped(err)
				}
				continue
			}
			s.loaded = fp
			o.Log.Info("the model changed; reloading", zap.String("path", o.Path))
			if err := o.Reload(ctx); err != nil && ctx.Err() == nil {
				o.Log.Debug("reload after a change", zap.Error(err))
			}
		}
	}
}

// refused reports whether err is a model file that loading refuses (no
// regular file, or too large): waiting does not make it a model, so the
// reload runs, and refuses it where reloads report their failures.
func refused(err error) bool {
	var mf *core.ModelFileError
	return errors.As(err, &mf)
}

type state struct {
	o Options
	w *fsnotify.Watcher
	// folder is the folder served, cleaned ("" when a file is served).
	folder  string
	watched map[string]bool
	// seen is the fingerprint at the last look, loaded the one last
	// handed to Reload (or skipped).
	seen, loaded string
}

// dirs are the directories whose entries can change what is served: the
// folder served (its parent, which sees it deleted and made again, and its
// subfolders), the file's directory, and the directory of the file a
// symlink resolves to.
func (s *state) dirs() []string {
	var out []string
	if s.folder != "" {
		out = append(out, filepath.Dir(s.folder))
		_ = filepath.WalkDir(s.folder, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				out = append(out, p)
			}
			return nil
		})
	}
	out = append(out, filepath.Dir(s.o.File))
	if real, err := filepath.EvalSymlinks(s.o.File); err == nil {
		out = append(out, filepath.Dir(real))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (s *state) watchDirs() error {
	for _, d := range s.dirs() {
		if s.watched[d] {
			continue
		}
		if err := s.w.Add(d); err != nil {
			return fmt.Errorf("watch %s: %w", d, err)
		}
		s.watched[d] = true
	}
	return nil
}

// forget drops the watch of a directory that was deleted or renamed away,
// so that the next watchDirs watches the one made in its place.
func (s *state) forget(name string) {
	if s.watched[name] {
		_ = s.w.Remove(name) // already gone with a deleted directory
		delete(s.watched, name)
	}
}

// relevant reports whether a change to name can change the model.
func (s *state) relevant(name string) bool {
	if s.folder != "" && (name == s.folder || strings.HasPrefix(name, s.folder+string(filepath.Separator))) {
		return true
	}
	if name == s.o.File || filepath.Base(name) == filepath.Base(s.o.File) {
		return true
	}
	real, err := filepath.EvalSymlinks(s.o.File)
	return err == nil && name == real
}

// fingerprint names what is served now: for each file (the model file,
// through its symlinks, or every file of the folder) its resolved path,
// size and modification time.
func (s *state) fingerprint() string {
	var b strings.Builder
	add := func(p string) {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			fmt.Fprintf(&b, "%s:missing;", p)
			return
		}
		st, err := os.Stat(real)
		if err != nil {
			fmt.Fprintf(&b, "%s:missing;", p)
			return
		}
		fmt.Fprintf(&b, "%s>%s:%d:%d;", p, real, st.Size(), st.ModTime().UnixNano())
	}
	if s.folder != "" {
		_ = filepath.WalkDir(s.folder, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				add(p)
			}
			return nil
		})
		return b.String()
	}
	add(s.o.File)
	return b.String()
}

// ErrNotONNX is wrapped by the error of a settled file that does not parse.
var ErrNotONNX = errors.New("not an ONNX model")

// check parses the model file as ONNX: a file cut short does not parse.
// It reads no more than maxSize bytes (0: any), and only a regular file.
func check(file string, maxSize int64) error {
	data, err := core.ReadModelFile(file, maxSize)
	if refused(err) {
		return err
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotONNX, err)
	}
	m, err := onnxpb.UnmarshalShared(data)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotONNX, err)
	}
	if m.Graph == nil || len(m.Graph.Outputs) == 0 {
		return fmt.Errorf("%w: it has no graph outputs", ErrNotONNX)
	}
	return nil
}
