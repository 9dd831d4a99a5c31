//go:build linux

package main_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// ONNX Runtime's Linux build, unless ORT_DISABLE_TELEMETRY is set, runs a
// shell command and keeps a database under ~/.cache/Microsoft when svc
// creates its environment; svc turns that off, and a user who sets the
// variable keeps their choice.
func TestNoTelemetryFromONNXRuntime(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		env       []string
		wantCache bool
	}{
		{name: "default", wantCache: false},
		{name: "user opts in", env: []string{"ORT_DISABLE_TELEMETRY=0"}, wantCache: true},
	}
	// ONNX Runtime's telemetry stays off on CI machines (it looks for
	// these variables): the servers start without them, or the opt-in
	// case could not show it on.
	noCI := []string{"CI", "TF_BUILD", "GITHUB_ACTIONS", "GITLAB_CI", "CIRCLECI", "TRAVIS", "JENKINS_URL",
		"CODEBUILD_BUILD_ID", "BUILDKITE", "TEAMCITY_VERSION", "APPVEYOR", "BITBUCKET_BUILD_NUMBER"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			env := slices.Concat(noCI, []string{"HOME=" + home, "XDG_CACHE_HOME="}, tc.env)
			s := startServerEnv(t, env, model("classifier.onnx"))
			if r := s.get("/health"); r.Status != 200 {
				t.Fatalf("/health = %d", r.Status)
			}
			_, err := os.Stat(filepath.Join(home, ".cache", "Microsoft"))
			if got := err == nil; got != tc.wantCache {
				t.Errorf("~/.cache/Microsoft exists = %v, want %v (stat: %v)", got, tc.wantCache, err)
			}
		})
	}
}
