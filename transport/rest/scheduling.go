package rest

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/transport"
)

// The /predict headers that schedule a request.
const (
	// HeaderTimeout is the request's own timeout, a duration with its
	// unit ("250ms", "2s", "1500us"); it counts the time the request
	// waits in the queue, and is bounded by runtime.timeout. A request
	// still queued when it passes never runs (504).
	HeaderTimeout = "X-Request-Timeout"
	// HeaderPriority is the request's priority as Triton numbers it: 1
	// is high (it overtakes queued work), 0 (the default) and larger
	// numbers are normal.
	HeaderPriority = "X-Request-Priority"
)

var (
	timeoutKey  = http.CanonicalHeaderKey(HeaderTimeout)
	priorityKey = http.CanonicalHeaderKey(HeaderPriority)
)

// scheduling returns r's context with the priority and timeout its
// headers ask for (bound caps the timeout; 0: no cap), and the function
// that releases the timeout.
func scheduling(r *http.Request, bound time.Duration) (context.Context, context.CancelFunc, error) {
	ctx := r.Context()
	if v, ok := r.Header[priorityKey]; ok {
		n, err := strconv.ParseUint(strings.TrimSpace(v[0]), 10, 64)
		if err != nil {
			return nil, nil, badHeader(fmt.Sprintf("Invalid %s header '%s': expected a non-negative integer (1: high, 0 or more: normal)", HeaderPriority, transport.Quote(v[0])))
		}
		ctx = core.WithPriority(ctx, core.PriorityFromTriton(n))
	}
	if v, ok := r.Header[timeoutKey]; ok {
		d, err := time.ParseDuration(strings.TrimSpace(v[0]))
		if err != nil || d <= 0 {
			return nil, nil, badHeader(fmt.Sprintf("Invalid %s header '%s': expected a positive duration with its unit, such as 250ms or 2s", HeaderTimeout, transport.Quote(v[0])))
		}
		c, cancel := core.WithRequestTimeout(ctx, d, bound)
		return c, cancel, nil
	}
	return ctx, func() {}, nil
}

// badHeader is a refused scheduling header: its message is the client's
// whole answer (400).
type badHeader string

func (e badHeader) Error() string { return string(e) }
