package workers

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// CPUsEnv holds the cores a pinned worker runs on, comma-separated.
const CPUsEnv = "SVC_WORKER_CPUS"

// AffinityKey is the configuration key of pinning, named by its errors.
const AffinityKey = "runtime.cpu_affinity"

// PlanAffinity gives each of n workers its set of cores, out of allowed
// (the cores this process may run on: its affinity mask, which a cgroup's
// cpuset narrows): with sets nil, disjoint runs of allowed of sizes as
// even as can be (auto); otherwise sets, which must be n and lie within
// allowed. Pinning that cannot apply (fewer cores than workers, allowed
// unknown) returns nil and why, and the workers run unpinned; explicit
// sets that cannot be are an error naming AffinityKey.
func PlanAffinity(allowed []int, n int, sets [][]int) (plan [][]int, why string, err error) {
	if len(allowed) == 0 {
		return nil, "the cores this process may use are unknown", nil
	}
	allowed = slices.Sorted(slices.Values(allowed))
	if sets != nil {
		if len(sets) != n {
			return nil, "", fmt.Errorf("%s: %d sets of cores for %d workers: give one set per worker", AffinityKey, len(sets), n)
		}
		for i, set := range sets {
			for _, c := range set {
				if !slices.Contains(allowed, c) {
					return nil, "", fmt.Errorf("%s: set %d has core %d, which this process may not use (it may use %s)", AffinityKey, i+1, c, FormatCPUs(allowed))
				}
			}
		}
		return sets, "", nil
	}
	if len(allowed) < n {
		return nil, fmt.Sprintf("%d workers on %d cores (%s): fewer cores than workers", n, len(allowed), FormatCPUs(allowed)), nil
	}
	plan = make([][]int, n)
	at := 0
	for i := range plan {
		size := len(allowed) / n
		if i < len(allowed)%n {
			size++
		}
		plan[i] = allowed[at : at+size : at+size]
		at += size
	}
	return plan, "", nil
}

// FormatCPUs writes cores as Linux lists them (Cpus_allowed_list):
// ranges such as 0-3,6.
func FormatCPUs(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// cpusFromEnv reads CPUsEnv (nil: not pinned).
func cpusFromEnv() []int {
	v := os.Getenv(CPUsEnv)
	if v == "" {
		return nil
	}
	var cpus []int
	for f := range strings.SplitSeq(v, ",") {
		c, err := strconv.Atoi(f)
		if err != nil || c < 0 {
			return nil
		}
		cpus = append(cpus, c)
	}
	return cpus
}

func joinCPUs(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}
