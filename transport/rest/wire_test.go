package rest

import (
	"encoding/json"
	"testing"

	"github.com/svc-dev/svc/core"
)

func TestSpecJSONShape(t *testing.T) {
	tests := []struct {
		name string
		give any
		want string
	}{
		{"tensor", NewInfo(core.ModelInfo{Inputs: []core.InputSpec{{Name: "x", Type: "float32", Shape: []int64{-1, 4}, Required: true, Kind: core.KindTensor}}}).Inputs[0], `{"name":"x","type":"float32","required":true,"shape":[-1,4]}`},
		{"rank 0", NewInfo(core.ModelInfo{Inputs: []core.InputSpec{{Name: "x", Type: "float32", Shape: []int64{}, Required: true, Kind: core.KindTensor}}}).Inputs[0], `{"name":"x","type":"float32","required":true,"shape":[]}`},
		{"unknown rank", NewInfo(core.ModelInfo{Inputs: []core.InputSpec{{Name: "x", Type: "int64", Kind: core.KindTensor}}}).Inputs[0], `{"name":"x","type":"int64","required":false}`},
		{"sequence output", NewInfo(core.ModelInfo{Outputs: []core.OutputSpec{{Name: "p", Type: "seq(map(string,float32))", Kind: core.KindSequence}}}).Outputs[0], `{"name":"p","type":"seq(map(string,float32))"}`},
		{"labels", NewInfo(core.ModelInfo{Outputs: []core.OutputSpec{{Name: "p", Type: "float32", Shape: []int64{-1, 3}, Labels: []string{"a"}, Kind: core.KindTensor}}}).Outputs[0], `{"name":"p","type":"float32","labels":["a"],"shape":[-1,3]}`},
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
