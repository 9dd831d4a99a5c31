package core

import (
	"fmt"
	"strings"
)

// NodeCount is how many graph nodes one execution provider ran.
type NodeCount struct {
	// Provider is ONNX Runtime's name, e.g. "WebGpuExecutionProvider".
	Provider string
	// Nodes is the number of distinct nodes it ran a kernel for, or
	// AllNodes.
	Nodes int
}

// AllNodes in a NodeCount means every node of the model: the CPU provider
// runs them all, so no profiling is needed to know.
const AllNodes = -1

// Placement is where a session's nodes ran, most nodes first.
type Placement []NodeCount

// String is "WebGpuExecutionProvider 175, CPUExecutionProvider 18", or
// "all on CPUExecutionProvider".
func (p Placement) String() string {
	parts := make([]string, len(p))
	for i, c := range p {
		if c.Nodes == AllNodes {
			parts[i] = "all on " + c.Provider
			continue
		}
		parts[i] = fmt.Sprintf("%s %d", c.Provider, c.Nodes)
	}
	return strings.Join(parts, ", ")
}

// Of is the number of nodes provider ran.
func (p Placement) Of(provider string) int {
	for _, c := range p {
		if c.Provider == provider {
			return c.Nodes
		}
	}
	return 0
}
