package workers

import (
	"testing"
)

func TestInheritedListeners(t *testing.T) {
	tests := []struct {
		env      string
		want     map[string]uintptr
		statusFD uintptr
		bad      bool
	}{
		{"", map[string]uintptr{}, 3, false},
		{"http:3", map[string]uintptr{"http": 3}, 4, false},
		{"http:3,grpc:4", map[string]uintptr{"http": 3, "grpc": 4}, 5, false},
		{"grpc:4,http:3", map[string]uintptr{"http": 3, "grpc": 4}, 5, false},
		{"http", nil, 0, true},
		{"http:x", nil, 0, true},
		{":3", nil, 0, true},
		{"http:2", nil, 0, true}, // stdin/stdout/stderr are not sockets
		{"http:3,", nil, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv(ListenersEnv, tt.env)
			got, status, err := inherited()
			if tt.bad {
				if err == nil {
					t.Fatalf("no error; got %v, status fd %d", got, status)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if status != tt.statusFD || len(got) != len(tt.want) {
				t.Fatalf("got %v status %d, want %v status %d", got, status, tt.want, tt.statusFD)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s: fd %d, want %d", k, got[k], v)
				}
			}
		})
	}
}
