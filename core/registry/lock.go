package registry

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// lock takes the repository's lock file, waiting for another pull or
// removal of the same repository (in this or another process) to finish.
// onWait, when set, is called once if the lock is busy. The lock is an
// advisory whole-file lock (flock on Unix, LockFileEx on Windows): the
// kernel releases it when the holder exits, so a crashed pull never leaves
// a stale lock behind.
func (s *Store) lock(ctx context.Context, repo string, onWait func()) (func(), error) {
	path := s.lockFile(repo)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", repo, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", repo, err)
	}
	waited := false
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if ok {
			return func() {
				_ = unlockFile(f)
				f.Close()
			}, nil
		}
		if !waited && onWait != nil {
			onWait()
		}
		waited = true
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
