package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// CPUAffinity is runtime.cpu_affinity: how --workers N pins its worker
// processes to cores. Off (the default, or "off"), "auto" (disjoint sets
// of the cores this process may use, one per worker), or explicit sets,
// one list of cores per worker ([[0,1],[2,3]]).
type CPUAffinity struct {
	// Mode is "" (off), "auto" or "sets" (Sets given).
	Mode string
	Sets [][]int
}

// On reports whether the workers are to be pinned.
func (a CPUAffinity) On() bool { return a.Mode == "auto" || a.Mode == "sets" }

// UnmarshalYAML reads auto, off, or a list of lists of core numbers.
func (a *CPUAffinity) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if err := n.Decode(&a.Mode); err != nil {
			return err
		}
		if a.Mode == "off" {
			a.Mode = "" // off and absent are one setting
		}
		return nil
	}
	var sets [][]int
	if err := n.Decode(&sets); err != nil {
		return fmt.Errorf("line %d: runtime.cpu_affinity: want auto, off, or one list of cores per worker such as [[0,1],[2,3]]", n.Line)
	}
	a.Mode, a.Sets = "sets", sets
	return nil
}

// check says what is wrong with the setting ("" when nothing).
func (a CPUAffinity) check() string {
	switch a.Mode {
	case "", "off", "auto":
		return ""
	case "sets":
	default:
		return fmt.Sprintf("must be auto, off, or one list of cores per worker such as [[0,1],[2,3]]; got %q", a.Mode)
	}
	if len(a.Sets) == 0 {
		return "has no sets: give one list of cores per worker, or auto"
	}
	seen := map[int]int{}
	for i, set := range a.Sets {
		if len(set) == 0 {
			return fmt.Sprintf("set %d is empty: each worker needs at least one core", i+1)
		}
		for _, c := range set {
			if c < 0 {
				return fmt.Sprintf("set %d has core %d: cores are numbered from 0", i+1, c)
			}
			if j, ok := seen[c]; ok {
				return fmt.Sprintf("core %d is in set %d and set %d: the sets must not overlap", c, j+1, i+1)
			}
			seen[c] = i
		}
	}
	return ""
}
