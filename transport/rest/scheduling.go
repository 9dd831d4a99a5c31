package rest

import (
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

// scheduling reads the timeout and priority r's headers ask for (0 and
// PriorityNormal when they say nothing).
func scheduling(r *http.Request) (time.Duration, core.Priority, error) {
	p := core.PriorityNormal
	if v, ok := r.Header[priorityKey]; ok {
		n, err := strconv.ParseUint(strings.TrimSpace(v[0]), 10, 64)
		if err != nil {
			return 0, p, badHeader(fmt.Sprintf("Invalid %s header '%s': expected a non-negative integer (1: high, 0 or more: normal)", HeaderPriority, transport.Quote(v[0])))
		}
		p = core.PriorityFromTriton(n)
	}
	if v, ok := r.Header[timeoutKey]; ok {
		d, err := time.ParseDuration(strings.TrimSpace(v[0]))
		if err != nil || d <= 0 {
			return 0, p, badHeader(fmt.Sprintf("Invalid %s header '%s': expected a positive duration with its unit, such as 250ms or 2s", HeaderTimeout, transport.Quote(v[0])))
		}
		return d, p, nil
	}
	return 0, p, nil
}

// badHeader is a refused scheduling header: its message is the client's
// whole answer (400).
type badHeader string

func (e badHeader) Error() string { return string(e) }
