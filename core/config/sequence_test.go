package config

import (
	"strings"
	"testing"
)

func TestSequenceRefused(t *testing.T) {
	tests := []struct {
		give string
		want string
	}{
		{"sequence: {max_idle: 0s}", "sequence.max_idle must be positive"},
		{"sequence: {max_active: 0}", "sequence.max_active must be at least 1"},
		{"sequence: {max_batch_size: -1}", "sequence.max_batch_size must be at least 1"},
		{"sequence: {max_id_length: 0}", "sequence.max_id_length must be at least 48 bytes, the length of the ids svc gives the sequences of gRPC and WebSocket streams"},
		{"sequence: {max_id_length: 47}", "sequence.max_id_length must be at least 48 bytes"},
		{"sequence: {max_id_length: many}", "max_id_length"},
		{"sequence: {max_connections: 0}", "sequence.max_connections must be at least 1"},
		{"models: {vad: {path: m.onnx, sequence: {context: {input: 0}}}}", "models.vad.sequence.context.input must be at least 1"},
		{"models: {vad: {path: m.onnx, sequence: {states: {state: ''}}}}", "models.vad.sequence.states.state names no output"},
		{"sequence: {max_idle: 1s, idle: 2}", "idle"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			_, err := Load(write(t, tt.give+"\n"), true)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	c := Default()
	if !c.Sequence.BatchingOn() || c.Sequence.MaxIdle.Std().Seconds() != 60 || c.Sequence.MaxIDLength != 256 || c.Sequence.MaxConnections != 1000 {
		t.Errorf("defaults %+v", c.Sequence)
	}
	c, err := Load(write(t, "sequence: {max_id_length: 1KiB, max_connections: 3}\n"), true)
	if err != nil || c.Sequence.MaxIDLength != 1024 || c.Sequence.MaxConnections != 3 {
		t.Errorf("max_id_length: 1KiB, max_connections: 3: %+v %v", c.Sequence, err)
	}
}
