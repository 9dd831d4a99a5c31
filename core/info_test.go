package core

import (
	"encoding/json"
	"testing"
)

func TestSpecJSONShape(t *testing.T) {
	tests := []struct {
		name string
		give any
		want string
	}{
		{"tensor", InputSpec{Name: "x", Type: "float32", Shape: []int64{-1, 4}, Required: true, Kind: KindTensor}, `{"name":"x","type":"float32","required":true,"shape":[-1,4]}`},
		{"rank 0", InputSpec{Name: "x", Type: "float32", Shape: []int64{}, Required: true, Kind: KindTensor}, `{"name":"x","type":"float32","required":true,"shape":[]}`},
		{"unknown rank", InputSpec{Name: "x", Type: "int64", Kind: KindTensor}, `{"name":"x","type":"int64","required":false}`},
		{"sequence output", OutputSpec{Name: "p", Type: "seq(map(string,float32))", Kind: KindSequence}, `{"name":"p","type":"seq(map(string,float32))"}`},
		{"labels", OutputSpec{Name: "p", Type: "float32", Shape: []int64{-1, 3}, Labels: []string{"a"}, Kind: KindTensor}, `{"name":"p","type":"float32","labels":["a"],"shape":[-1,3]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.give)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Fatalf("got %s, want %s", b, tt.want)
			}
		})
	}
}

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
