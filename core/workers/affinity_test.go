package workers_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/svc-dev/svc/core/workers"
)

func TestPlanAffinity(t *testing.T) {
	tests := []struct {
		name    string
		allowed []int
		n       int
		sets    [][]int
		want    [][]int
		why     string
		err     string
	}{
		{"two workers, two cores", []int{0, 1}, 2, nil, [][]int{{0}, {1}}, "", ""},
		{"uneven", []int{0, 1, 2, 3, 4}, 2, nil, [][]int{{0, 1, 2}, {3, 4}}, "", ""},
		{"a cpuset's cores", []int{6, 2, 3, 7}, 2, nil, [][]int{{2, 3}, {6, 7}}, "", ""},
		{"fewer cores than workers", []int{0}, 2, nil, nil, "2 workers on 1 cores (0): fewer cores than workers", ""},
		{"cores unknown", nil, 2, nil, nil, "unknown", ""},
		{"explicit", []int{0, 1, 2, 3}, 2, [][]int{{0, 2}, {1, 3}}, [][]int{{0, 2}, {1, 3}}, "", ""},
		{"explicit, a set per worker", []int{0, 1, 2, 3}, 2, [][]int{{0, 1, 2}}, nil, "", "runtime.cpu_affinity: 1 sets of cores for 2 workers"},
		{"explicit, an absent core", []int{0, 1}, 2, [][]int{{0}, {9}}, nil, "", "runtime.cpu_affinity: set 2 has core 9, which this process may not use (it may use 0-1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why, err := workers.PlanAffinity(tt.allowed, tt.n, tt.sets)
			if !reflect.DeepEqual(got, tt.want) || !strings.Contains(why, tt.why) || (tt.why == "") != (why == "") {
				t.Errorf("plan %v, why %q; want %v, %q", got, why, tt.want, tt.why)
			}
			if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("error %v, want %q", err, tt.err)
			}
		})
	}
}

func TestFormatCPUs(t *testing.T) {
	for _, tt := range []struct {
		cpus []int
		want string
	}{{[]int{0}, "0"}, {[]int{0, 1, 2, 3}, "0-3"}, {[]int{0, 2, 3, 4, 7}, "0,2-4,7"}, {nil, ""}} {
		if got := workers.FormatCPUs(tt.cpus); got != tt.want {
			t.Errorf("FormatCPUs(%v) = %q, want %q", tt.cpus, got, tt.want)
		}
	}
}
