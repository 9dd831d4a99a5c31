package watch

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/svc-dev/svc/core/registry"
	"github.com/svc-dev/svc/core/registry/hubtest"
)

// hubFixture is a fake Hub with acme/m pulled into a store of its own.
type hubFixture struct {
	hub    *hubtest.Hub
	puller *registry.Puller
	ref    registry.Ref
}

func newHubFixture(t *testing.T) hubFixture {
	t.Helper()
	hub := hubtest.New()
	t.Cleanup(hub.Close)
	hub.AddRepo("acme/m", map[string][]byte{"model.onnx": testModel(t, "reload_v1.onnx")})
	p := &registry.Puller{Store: registry.Open(filepath.Join(t.TempDir(), "svc-home")), Hub: &registry.Hub{Endpoint: hub.URL, UserAgent: "svc/test"}}
	ref, err := registry.ParseRef("acme/m")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Pull(context.Background(), ref, registry.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	return hubFixture{hub: hub, puller: p, ref: ref}
}

// TestFollowHubPollFails: a poll the Hub answers with an error is logged
// and tried again at the next interval; the next poll that sees the new
// commit pulls it and reloads, once.
func TestFollowHubPollFails(t *testing.T) {
	f := newHubFixture(t)
	f.hub.FailNext(http.StatusInternalServerError)
	commit := f.hub.Commit("acme/m", "main", map[string][]byte{"model.onnx": testModel(t, "reload_v2.onnx")})
	core, logs := observer.New(zapcore.DebugLevel)
	reloads := make(chan struct{}, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		FollowHub(ctx, HubOptions{Ref: f.ref, Puller: f.puller, Interval: time.Millisecond, Log: zap.New(core),
			Reload: func(context.Context) error { reloads <- struct{}{}; return nil }})
	}()
	<-reloads
	cancel()
	<-done

	warned := logs.FilterMessage("following the model's revision on the Hub").All()
	if len(warned) != 1 || !strings.Contains(warned[0].ContextMap()["error"].(string), "500") {
		t.Errorf("warnings of the failed poll: %v", warned)
	}
	if pulled := logs.FilterMessage("the followed revision has a new commit; pulled, reloading").All(); len(pulled) != 1 || pulled[0].ContextMap()["commit"] != commit[:7] {
		t.Errorf("pull records: %v", pulled)
	}
	if n := len(reloads); n != 0 {
		t.Errorf("%d more reloads of one commit", n)
	}
	if sn, err := f.puller.Store.Find(f.ref); err != nil || sn.Commit != commit {
		t.Errorf("the store serves %s (%v), want the new commit %s", sn.Commit, err, commit)
	}
}

// TestFollowOnce: what one poll does for each revision followed.
func TestFollowOnce(t *testing.T) {
	f := newHubFixture(t)
	sn, err := f.puller.Store.Find(f.ref)
	if err != nil {
		t.Fatal(err)
	}
	o := HubOptions{Puller: f.puller}
	tests := []struct {
		name    string
		ref     registry.Ref
		asksHub bool
		err     string
	}{
		{"main, unchanged", f.ref, true, ""},
		{"a commit is not followed", registry.Ref{Repo: "acme/m", Revision: sn.Commit}, false, ""},
		{"a repository never pulled", registry.Ref{Repo: "acme/other"}, false, "not in the store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.hub.Requests())
			o.Ref = tt.ref
			pulled, err := followOnce(context.Background(), o)
			if pulled != "" || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("followOnce = %q, %v; want nothing pulled and error %q", pulled, err, tt.err)
			}
			if asked := len(f.hub.Requests()) > before; asked != tt.asksHub {
				t.Errorf("asked the Hub: %v, want %v", asked, tt.asksHub)
			}
		})
	}
}
