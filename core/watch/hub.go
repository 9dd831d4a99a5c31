package watch

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/svc-dev/svc/core/registry"
)

// HubOptions configure FollowHub.
type HubOptions struct {
	// Ref is the model as served: a repository with the revision it
	// follows ("" = the revision of its latest pull).
	Ref registry.Ref
	// Puller pulls the new commit into its Store.
	Puller *registry.Puller
	// Interval is how often the Hub is asked for the revision's commit.
	Interval time.Duration
	// Reload is called after each pull of a new commit.
	Reload func(ctx context.Context) error
	Log    *zap.Logger
}

// FollowHub asks the Hub every Interval for the commit the followed
// revision points at; when it is not the commit served, it pulls it and
// reloads. A revision that is a commit never moves: it is not followed.
// Errors (the Hub unreachable, a pull that fails) are logged and tried
// again at the next interval. It returns when ctx ends.
func FollowHub(ctx context.Context, o HubOptions) {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	t := time.NewTicker(o.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pulled, err := followOnce(ctx, o)
		switch {
		case err != nil && ctx.Err() == nil:
			o.Log.Warn("following the model's revision on the Hub", zap.String("model", o.Ref.String()), zap.Error(err))
		case pulled != "":
			o.Log.Info("the followed revision has a new commit; pulled, reloading", zap.String("model", o.Ref.String()), zap.String("commit", registry.ShortCommit(pulled)))
			if err := o.Reload(ctx); err != nil && ctx.Err() == nil {
				o.Log.Debug("reload after a pull", zap.Error(err))
			}
		}
	}
}

// followOnce pulls the followed revision's commit when it is not the one
// in the store, and returns it ("" when nothing was pulled).
func followOnce(ctx context.Context, o HubOptions) (string, error) {
	sn, err := o.Puller.Store.Find(o.Ref)
	if err != nil {
		return "", err
	}
	rev := o.Ref.Revision
	if rev == "" {
		rev = sn.Revision
	}
	if rev == "" {
		rev = "main"
	}
	if strings.HasPrefix(sn.Commit, rev) && len(rev) >= 7 {
		return "", nil // a commit: nothing to follow
	}
	info, err := o.Puller.Hub.Info(ctx, o.Ref.Repo, rev)
	if err != nil {
		return "", err
	}
	if info.SHA == sn.Commit {
		return "", nil
	}
	res, err := o.Puller.Pull(ctx, registry.Ref{Repo: o.Ref.Repo, Revision: rev}, registry.PullOptions{File: sn.Model})
	if err != nil {
		return "", fmt.Errorf("pull %s@%s: %w", o.Ref.Repo, rev, err)
	}
	return res.Commit, nil
}
