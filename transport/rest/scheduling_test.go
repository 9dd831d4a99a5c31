package rest

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/transport"
)

// TestSchedulingHeaders: /predict's X-Request-Priority and
// X-Request-Timeout headers give the request's context its level and its
// deadline (capped at runtime.timeout), and a bad value is refused with
// the message the client gets.
func TestSchedulingHeaders(t *testing.T) {
	tests := []struct {
		name     string
		headers  []string
		bound    time.Duration
		priority core.Priority
		// timeout is the request's own timeout once capped (0: none).
		timeout time.Duration
		err     string
	}{
		{name: "none"},
		{name: "high", headers: []string{HeaderPriority, "1"}, priority: core.PriorityHigh},
		{name: "high, spaced", headers: []string{HeaderPriority, " 1 "}, priority: core.PriorityHigh},
		{name: "default level", headers: []string{HeaderPriority, "0"}},
		{name: "bulk", headers: []string{HeaderPriority, "2"}},
		{name: "priority a word", headers: []string{HeaderPriority, "urgent"},
			err: "Invalid X-Request-Priority header 'urgent': expected a non-negative integer (1: high, 0 or more: normal)"},
		{name: "negative priority", headers: []string{HeaderPriority, "-1"},
			err: "Invalid X-Request-Priority header '-1': expected a non-negative integer (1: high, 0 or more: normal)"},
		{name: "empty priority", headers: []string{HeaderPriority, ""},
			err: "Invalid X-Request-Priority header '': expected a non-negative integer (1: high, 0 or more: normal)"},
		{name: "timeout", headers: []string{HeaderTimeout, "1ns"}, timeout: time.Nanosecond},
		{name: "timeout capped", headers: []string{HeaderTimeout, "1h"}, bound: time.Nanosecond, timeout: time.Nanosecond},
		{name: "timeout and priority", headers: []string{HeaderTimeout, "1ns", HeaderPriority, "1"}, priority: core.PriorityHigh, timeout: time.Nanosecond},
		{name: "bad priority before timeout", headers: []string{HeaderTimeout, "1s", HeaderPriority, "x"},
			err: "Invalid X-Request-Priority header 'x'"},
		{name: "timeout without unit", headers: []string{HeaderTimeout, "20"},
			err: "Invalid X-Request-Timeout header '20': expected a positive duration with its unit, such as 250ms or 2s"},
		{name: "zero timeout", headers: []string{HeaderTimeout, "0s"},
			err: "Invalid X-Request-Timeout header '0s': expected a positive duration"},
		{name: "negative timeout", headers: []string{HeaderTimeout, "-1s"},
			err: "Invalid X-Request-Timeout header '-1s': expected a positive duration"},
		{name: "empty timeout", headers: []string{HeaderTimeout, ""},
			err: "Invalid X-Request-Timeout header '': expected a positive duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/predict", strings.NewReader("{}"))
			for i := 0; i < len(tt.headers); i += 2 {
				r.Header.Set(tt.headers[i], tt.headers[i+1])
			}
			d, p, err := scheduling(r)
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			life := &transport.Inferences{Model: core.NewModel("m"), Limits: transport.Limits{MaxTimeout: tt.bound}}
			q := life.Step(context.Background())
			defer q.End()
			q.Schedule(d, p)
			ctx := q.Ctx
			if got := core.PriorityOf(ctx); got != tt.priority {
				t.Errorf("priority %v, want %v", got, tt.priority)
			}
			_, has := ctx.Deadline()
			if has != (tt.timeout > 0) {
				t.Fatalf("deadline %v, want one: %v", has, tt.timeout > 0)
			}
			if tt.timeout == 0 {
				return
			}
			<-ctx.Done()
			var te *core.TimeoutError
			if !errors.As(context.Cause(ctx), &te) || !te.Requested || te.After != tt.timeout {
				t.Fatalf("cause %v, want the request's TimeoutError after %v", context.Cause(ctx), tt.timeout)
			}
		})
	}
}
