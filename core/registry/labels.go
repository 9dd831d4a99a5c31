package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/svc-dev/svc/core/onnxpb"
)

// labels reads id2label from the config.json nearest the model (its own
// directory, then each parent up to the repository root) and assigns the
// labels to one output: the one named "logits" unless its last dimension
// is fixed to another size, else the first output whose last dimension
// equals the number of labels. nil when there is no config.json, no
// id2label or no fitting output.
func (sn *Snapshot) labels() (map[string][]string, error) {
	cfg := sn.nearest("config.json")
	if cfg == "" {
		return nil, nil
	}
	data, err := os.ReadFile(filepath.Join(sn.Dir, filepath.FromSlash(cfg)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", cfg, err)
	}
	labels := id2label(data)
	if len(labels) == 0 {
		return nil, nil
	}
	out := labelOutput(sn.ModelInfo, len(labels))
	if out == "" {
		return nil, nil
	}
	return map[string][]string{out: labels}, nil
}

// nearest returns the snapshot file called name closest to the model:
// in the model's directory, else in the nearest parent; "" when none.
func (sn *Snapshot) nearest(name string) string {
	dir := path.Dir(sn.Model)
	for {
		p := path.Join(dir, name)
		if _, ok := sn.file(p); ok {
			return p
		}
		if dir == "." || dir == "/" {
			return ""
		}
		dir = path.Dir(dir)
	}
}

// id2label reads a Transformers config.json's id2label ({"0": "cat", ...})
// as a list indexed by id. Ids must be 0..n-1; anything else yields nil.
func id2label(configJSON []byte) []string {
	var cfg struct {
		ID2Label map[string]string `json:"id2label"`
	}
	if json.Unmarshal(configJSON, &cfg) != nil || len(cfg.ID2Label) == 0 {
		return nil
	}
	labels := make([]string, len(cfg.ID2Label))
	seen := make([]bool, len(cfg.ID2Label))
	for k, v := range cfg.ID2Label {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i >= len(labels) || seen[i] {
			return nil
		}
		labels[i], seen[i] = v, true
	}
	return labels
}

// labelOutput picks the output that carries n class scores.
func labelOutput(mi *ModelInfo, n int) string {
	if mi == nil {
		return "logits"
	}
	last := func(o ModelOutput) int64 {
		if len(o.Shape) == 0 {
			return 0
		}
		return o.Shape[len(o.Shape)-1]
	}
	for _, o := range mi.Outputs {
		if o.Name == "logits" && (last(o) < 0 || last(o) == int64(n)) {
			return o.Name
		}
	}
	for _, o := range mi.Outputs {
		if last(o) == int64(n) {
			return o.Name
		}
	}
	return ""
}

// inspectModel reads what the store keeps about a model file: its own
// version, its outputs, and the external data files it references
// (relative to its directory, sorted).
func inspectModel(file string) (*ModelInfo, []string, error) {
	m, err := onnxpb.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	mi := &ModelInfo{Outputs: []ModelOutput{}}
	if v := m.Metadata()["version"]; v != "" {
		mi.Version = v
	} else if m.ModelVersion > 0 && m.ModelVersion != math.MaxInt64 {
		mi.Version = strconv.FormatInt(m.ModelVersion, 10)
	}
	if m.Graph == nil {
		return mi, nil, nil
	}
	for _, o := range m.Graph.Outputs {
		mo := ModelOutput{Name: o.Name}
		if o.Type != nil && o.Type.Tensor != nil && o.Type.Tensor.Shape != nil {
			mo.Shape = make([]int64, len(o.Type.Tensor.Shape))
			for i, d := range o.Type.Tensor.Shape {
				mo.Shape[i] = -1
				if d.IsFixed() {
					mo.Shape[i] = d.Value
				}
			}
		}
		mi.Outputs = append(mi.Outputs, mo)
	}
	ext := map[string]bool{}
	externalLocations(m.Graph, ext, 0)
	locs := make([]string, 0, len(ext))
	for l := range ext {
		locs = append(locs, l)
	}
	sort.Strings(locs)
	return mi, locs, nil
}

// externalLocations collects the external-data files of a graph's
// initializers and of its subgraphs'.
func externalLocations(g *onnxpb.Graph, into map[string]bool, depth int) {
	if g == nil || depth > 64 {
		return
	}
	for _, t := range g.Initializers {
		if !t.IsExternal() {
			continue
		}
		if ref, err := t.External(); err == nil {
			into[ref.Location] = true
		}
	}
	for _, n := range g.Nodes {
		for _, a := range n.Attributes {
			externalLocations(a.G, into, depth+1)
			for _, sg := range a.Graphs {
				externalLocations(sg, into, depth+1)
			}
		}
	}
}
