package session

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/svc-dev/svc/core"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/providers"
)

// profileEvent is one event of ONNX Runtime's profile (Chrome trace
// events): each node's kernel run is a "Node" event named
// <node>_kernel_time whose args name the provider that ran it.
type profileEvent struct {
	Cat  string `json:"cat"`
	Name string `json:"name"`
	Args struct {
		Provider string `json:"provider"`
	} `json:"args"`
}

// ProfilePlacement reads the profiles ONNX Runtime wrote for prefix
// (runtime.profile: <prefix>_<date>_<time>.json, written when the session
// is destroyed) and counts the distinct nodes each provider ran a kernel
// for. Only nodes that ran are counted: a profile of at least one run is
// the ground truth of where nodes were placed.
func ProfilePlacement(prefix string) (core.Placement, error) {
	files, err := filepath.Glob(prefix + "*.json")
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", prefix, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no profile %s*.json", prefix)
	}
	nodes := map[string]map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("profile: %w", err)
		}
		var events []profileEvent
		if err := json.Unmarshal(b, &events); err != nil {
			return nil, fmt.Errorf("profile %s: %w", f, err)
		}
		for _, e := range events {
			if e.Cat != "Node" || e.Args.Provider == "" || !strings.HasSuffix(e.Name, "_kernel_time") {
				continue
			}
			if nodes[e.Args.Provider] == nil {
				nodes[e.Args.Provider] = map[string]bool{}
			}
			nodes[e.Args.Provider][strings.TrimSuffix(e.Name, "_kernel_time")] = true
		}
	}
	out := make(core.Placement, 0, len(nodes))
	for prov, ns := range nodes {
		out = append(out, core.NodeCount{Provider: prov, Nodes: len(ns)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Nodes != out[j].Nodes {
			return out[i].Nodes > out[j].Nodes
		}
		return out[i].Provider < out[j].Provider
	})
	return out, nil
}

// ProbePlacement finds out where ONNX Runtime places the model's nodes on
// provider p. On the CPU provider every node runs there: it says so without
// running anything. Providers with CostlySessions are not probed: nil, no
// error. On any other provider it creates one extra session
// with ONNX Runtime's profiler on, runs it once on zero-filled inputs (the
// warm-up's), destroys it and counts the nodes each provider ran in the
// profile. That costs one session creation and one run; the compiled
// kernels (WebGPU's shaders, for one) stay cached in the process, so the
// served sessions' warm-up that follows is the cheaper for it.
func ProbePlacement(file string, rt config.Runtime, p providers.Provider, o providers.Options) (core.Placement, error) {
	if p.Name() == providers.FallbackName {
		return core.Placement{{Provider: p.ORTName(), Nodes: core.AllNodes}}, nil
	}
	if k, ok := providers.Info(p.Name()); ok && k.CostlySessions {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "svc-placement-")
	if err != nil {
		return nil, fmt.Errorf("placement: %w", err)
	}
	defer os.RemoveAll(dir)
	rt.Profile = filepath.Join(dir, "probe")
	rt.Timeout = 0
	pred, err := New(Options{Name: "placement", File: file, Runtime: rt, Provider: p, ProviderOptions: o}, nil)
	if err != nil {
		return nil, fmt.Errorf("placement: %w", err)
	}
	if err := core.WarmUp(pred); err != nil {
		_ = pred.Close()
		return nil, fmt.Errorf("placement: %w", err)
	}
	if err := pred.Close(); err != nil {
		return nil, fmt.Errorf("placement: %w", err)
	}
	return ProfilePlacement(rt.Profile)
}
