package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// request is one kind of traffic in a mix: one HTTP request, or a flow of
// its own (a sequence of steps, a gRPC call, a WebSocket stream, requests
// sent together).
type request struct {
	name   string
	valid  bool
	weight int
	// An HTTP request.
	method  string
	path    string
	ctype   string
	headers []string
	body    []byte
	// want is a substring of a valid request's 200 body; check, if set,
	// checks the body too.
	want  string
	check func([]byte) error
	// flow sends the request(s) itself and judges the answer.
	flow func(ctx context.Context, p *process, rng *rand.Rand) answer
	// deadline: the request carries a deadline that passes while the
	// server works, so that a 504 (DEADLINE_EXCEEDED) is its answer too.
	deadline bool
	// leave: the client leaves this long after sending the request.
	leave time.Duration
}

// mix is a weighted list of requests.
type mix struct {
	reqs  []*request
	total int
}

func (m *mix) pick(rng *rand.Rand) *request {
	n := rng.IntN(m.total)
	for _, r := range m.reqs {
		if n < r.weight {
			return r
		}
		n -= r.weight
	}
	return m.reqs[len(m.reqs)-1]
}

func newMix(reqs []*request) *mix {
	m := &mix{reqs: reqs}
	for _, r := range reqs {
		m.total += r.weight
	}
	return m
}

// class is what kind of answer a request got.
type class int

const (
	classOK        class = iota // 200 (gRPC OK, a stream's steps) with the right body
	classWrong                  // 200 with a wrong body
	classRefused                // 4xx (gRPC INVALID_ARGUMENT, RESOURCE_EXHAUSTED, ...)
	classBusy                   // 503 with Retry-After (gRPC UNAVAILABLE): the budget was busy
	classDeadline               // 504 (DEADLINE_EXCEEDED)
	classServerErr              // another 5xx (gRPC INTERNAL, UNKNOWN, ...), a WebSocket closed 1011
	classClosed                 // the server closed the connection: a WebSocket close, or no answer
	classHeld                   // a WebSocket the server still held open when the phase ended
	classLeft                   // the client left before the answer, as it meant to
)

var classNames = [...]string{"right", "wrong body", "refused (4xx)", "503 busy", "504 deadline", "5xx", "closed", "held open", "client left"}

func (c class) String() string { return classNames[c] }

// answer is how one request, flow or connection of the soak ended.
type answer struct {
	label string // what the report counts: "200", "413", "503 busy", "gRPC RESOURCE_EXHAUSTED", "WebSocket closed 1008"
	class class
	note  string // the answer's text, for the examples of unexpected ones
}

// good says whether a request of kind k may get a: valid requests only
// the right 200; attacks and bad requests a refusal (4xx, 503 busy, a
// close), and 504 and an answer where they carry a deadline or leave.
func (k *request) good(a answer) bool {
	if k.valid {
		return a.class == classOK
	}
	switch a.class {
	case classRefused, classBusy, classClosed, classHeld:
		return true
	case classDeadline:
		return k.deadline || k.leave > 0
	case classOK, classWrong:
		return k.deadline || k.leave > 0
	case classLeft:
		return k.leave > 0
	}
	return false
}

// httpAnswer judges an HTTP answer to k.
func httpAnswer(k *request, status int, h http.Header, body []byte) answer {
	a := answer{label: strconv.Itoa(status), note: fmt.Sprintf("%d %.300s", status, body)}
	switch {
	case status == http.StatusOK:
		a.class = classOK
		if err := k.checkBody(body); err != nil {
			a.class, a.note = classWrong, fmt.Sprintf("200 %v: %.300s", err, body)
		}
	case status >= 400 && status < 500:
		a.class = classRefused
	case status == http.StatusServiceUnavailable && h.Get("Retry-After") != "":
		a.class, a.label = classBusy, "503 busy"
	case status == http.StatusGatewayTimeout:
		a.class = classDeadline
	default:
		a.class = classServerErr
	}
	return a
}

func (k *request) checkBody(body []byte) error {
	if k.want != "" && !strings.Contains(string(body), k.want) {
		return fmt.Errorf("no %q", k.want)
	}
	if k.check != nil {
		return k.check(body)
	}
	return nil
}

// grpcAnswer judges a gRPC answer: its code and message; check, for OK.
func grpcAnswer(code int, msg string, check func() error) answer {
	a := answer{label: "gRPC " + grpcCodeName(code), note: fmt.Sprintf("%s: %.300s", grpcCodeName(code), msg)}
	switch grpcCodeName(code) {
	case "OK":
		a.class = classOK
		if check != nil {
			if err := check(); err != nil {
				a.class, a.note = classWrong, "OK: "+err.Error()
			}
		}
	case "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED", "NOT_FOUND", "OUT_OF_RANGE", "FAILED_PRECONDITION",
		"UNIMPLEMENTED", "PERMISSION_DENIED", "UNAUTHENTICATED", "ALREADY_EXISTS":
		a.class = classRefused
	case "UNAVAILABLE":
		a.class, a.label = classBusy, "gRPC UNAVAILABLE (busy)"
	case "DEADLINE_EXCEEDED":
		a.class = classDeadline
	case "CANCELLED":
		a.class = classClosed
	default:
		a.class = classServerErr
	}
	return a
}

// noAnswer is a request that got no answer: the connection failed.
func noAnswer(err error) answer {
	return answer{label: "no answer", class: classClosed, note: err.Error()}
}
