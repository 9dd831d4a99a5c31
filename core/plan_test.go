package core

import "testing"

func TestCPUPlan(t *testing.T) {
	tests := []struct {
		cores, configured, threads int
		slots                      RunSlots
	}{
		{2, 0, 1, 2},
		{1, 0, 1, 1},
		{16, 0, 8, 2},
		{2, 2, 2, 1},
		{8, 3, 3, 2},
		{4, 16, 16, 1},
	}
	for _, tt := range tests {
		th, sl := CPUPlan(tt.cores, tt.configured)
		if th != tt.threads || sl != tt.slots {
			t.Errorf("CPUPlan(%d, %d) = %d, %d; want %d, %d", tt.cores, tt.configured, th, sl, tt.threads, tt.slots)
		}
	}
}
