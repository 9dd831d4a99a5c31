package stream

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/core/tensor"
)

// TestWatch: with no message under way the next must begin within idle;
// a message begun must be whole within whole; nothing is timed while a
// message waits for its answer; a stale tick says nothing.
func TestWatch(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { return now }
	const idle, whole = 10 * time.Second, 3 * time.Second
	wantIdle := "no message for 10s (sequence.max_idle): the stream closes and its sequence ends"
	wantWhole := "a message not whole within 3s (limits.read_timeout): the stream closes"
	type step struct {
		do      string // begin, read, answered, or "" (nothing)
		advance time.Duration
		want    string // expired's reason ("": none)
	}
	tests := []struct {
		name  string
		whole time.Duration
		steps []step
	}{
		{name: "idle from the start", whole: whole, steps: []step{{advance: idle - time.Second}, {advance: time.Second, want: wantIdle}}},
		{name: "a message begun is timed by whole", whole: whole, steps: []step{
			{advance: idle - time.Second}, {do: "begin"}, {advance: whole - time.Second}, {advance: time.Second, want: wantWhole},
		}},
		{name: "nothing while a step is answered", whole: whole, steps: []step{
			{do: "begin"}, {do: "read"}, {advance: time.Hour}, {do: "answered"}, {advance: idle - time.Second}, {advance: time.Second, want: wantIdle},
		}},
		{name: "a message begun during a step", whole: whole, steps: []step{
			{do: "begin"}, {do: "read"}, {do: "begin"}, {advance: whole, want: wantWhole},
		}},
		{name: "pipelined messages", whole: whole, steps: []step{
			{do: "begin"}, {do: "read"}, {do: "begin"}, {do: "read"}, {do: "answered"}, {advance: time.Hour}, {do: "answered"}, {advance: idle, want: wantIdle},
		}},
		{name: "no read timeout", whole: 0, steps: []step{{do: "begin"}, {advance: 1000 * time.Hour}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWatch(idle, tt.whole, clock)
			defer w.stop()
			for i, s := range tt.steps {
				switch s.do {
				case "begin":
					w.begin()
				case "read":
					w.read()
				case "answered":
					w.answered()
				}
				now = now.Add(s.advance)
				why, ok := w.expired()
				if why != s.want || ok != (s.want != "") {
					t.Fatalf("step %d (%s, +%v): expired %q %v, want %q", i, s.do, s.advance, why, ok, s.want)
				}
			}
		})
	}
	w := newWatch(idle, whole, clock)
	w.stop()
	if why, ok := w.expired(); ok {
		t.Errorf("a stopped watch expired: %q", why)
	}
}

// TestOrigin: a page may open a stream from the server's own origin or
// one that access.cors.allowed_origins allows (as CORS reads the list:
// exact, any case, a * inside the host, or * for any); another gets an
// error naming the key; a client without Origin is no browser and passes.
func TestOrigin(t *testing.T) {
	tests := []struct {
		name    string
		allowed []string
		origin  string
		ok      bool
	}{
		{name: "no origin", origin: "", ok: true},
		{name: "own origin", origin: "http://svc.example:8080", ok: true},
		{name: "own origin, other scheme", origin: "https://svc.example:8080", ok: true},
		{name: "other origin, no list", origin: "https://app.example", ok: false},
		{name: "listed", allowed: []string{"https://app.example"}, origin: "https://app.example", ok: true},
		{name: "listed, other case", allowed: []string{"https://app.example"}, origin: "https://APP.example", ok: true},
		{name: "not listed", allowed: []string{"https://app.example"}, origin: "https://evil.example", ok: false},
		{name: "listed, other scheme", allowed: []string{"https://app.example"}, origin: "http://app.example", ok: false},
		{name: "wildcard", allowed: []string{"https://*.internal.example"}, origin: "https://ui.internal.example", ok: true},
		{name: "wildcard, another domain", allowed: []string{"https://*.internal.example"}, origin: "https://internal.example.evil", ok: false},
		{name: "any", allowed: []string{"*"}, origin: "https://anyone.example", ok: true},
		{name: "not a URL", origin: "::", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(Options{AllowedOrigins: tt.allowed})
			r := httptest.NewRequest("GET", "http://svc.example:8080/v2/models/m/stream", nil)
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			err := h.checkOrigin(r)
			if tt.ok != (err == nil) {
				t.Fatalf("origin %q, allowed %v: %v, want ok=%v", tt.origin, tt.allowed, err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "a page of origin '"+tt.origin+"' may not open a stream: it is not this server's origin, and access.cors.allowed_origins does not allow it") {
				t.Errorf("error %q", err)
			}
		})
	}
}

// TestPlanRefusesQuery: the query's keys are the streamed input's
// choice, its shape and the values of the inputs that are no state; any
// other key, a state's name or a key given twice is refused, naming it
// and the keys taken.
func TestPlanRefusesQuery(t *testing.T) {
	tests := []struct {
		name  string
		specs []tensor.Spec
		state int
		query map[string][]string
		err   string
	}{
		{name: "state", specs: vadSpecs, state: 1, query: map[string][]string{"sr": {"16000"}, "state": {"1"}},
			err: "state: svc keeps state 'state', which the URL cannot give; the URL takes input=NAME, shape=D,D,..., sr=VALUE"},
		{name: "unknown", specs: vadSpecs, state: 1, query: map[string][]string{"sr": {"16000"}, "rate": {"8000"}},
			err: "the URL has the key 'rate', which a stream does not take; the URL takes input=NAME, shape=D,D,..., sr=VALUE"},
		{name: "tally", specs: tallySpecs, state: 2, query: map[string][]string{"input": {"counts"}, "token": {"x"}},
			err: "the URL has the key 'token', which a stream does not take; the URL takes input=NAME, shape=D,D,..., counts=VALUE, grid=VALUE"},
		{name: "twice", specs: vadSpecs, state: 1, query: map[string][]string{"sr": {"16000", "8000"}}, err: "the URL gives 'sr' 2 times; give it once"},
		{name: "input twice", specs: vadSpecs, state: 1, query: map[string][]string{"sr": {"16000"}, "input": {"input", "sr"}}, err: "the URL gives 'input' 2 times"},
		{name: "a long key", specs: vadSpecs, state: 1, query: map[string][]string{"sr": {"16000"}, strings.Repeat("k", 10000): {""}}, err: "the URL has the key 'kkkk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newPlan(tt.specs, stateAt(tt.state), tt.query, 1<<20)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
			if len(err.Error()) > 1000 {
				t.Errorf("the error holds the whole key: %d bytes", len(err.Error()))
			}
		})
	}
}

// TestPlanShapeFits: a shape that no binary message can fit is refused
// before the upgrade when the URL gives it (an axis of 0, more bytes than
// a message may hold, elements past what an int64 counts); when the model
// declares it, the connection is for JSON steps, and a binary message is
// answered why.
func TestPlanShapeFits(t *testing.T) {
	f32 := func(shape ...int64) []tensor.Spec {
		return []tensor.Spec{{Name: "x", DType: tensor.Float32, Shape: shape, Required: true}, {Name: "state", DType: tensor.Float32, Shape: []int64{1}, Required: true}}
	}
	tests := []struct {
		name   string
		specs  []tensor.Spec
		shape  string // ?shape= ("": none)
		limit  int64  // the message limit (0: 1 MiB; -1: none)
		err    string
		binErr string
	}{
		{name: "zero axis", specs: f32(-1, -1, -1), shape: "1,0,-1", err: "shape=1,0,-1: axis 1 is 0, so a binary message holds no element and none can fit; input 'x' is float32 [-1, -1, -1]"},
		{name: "zero axis, all fixed", specs: f32(-1, -1), shape: "1,0", err: "shape=1,0: axis 1 is 0"},
		{name: "over the limit", specs: f32(-1, -1, -1), shape: "1,1024,257", err: "shape=1,1024,257: a binary message of that shape takes more than 1048576 bytes, the most that limits.max_body_size allows a message"},
		{name: "over the limit, open axis", specs: f32(-1, -1, -1), shape: "1,262145,-1", err: "takes more than 1048576 bytes"},
		{name: "past int64", specs: f32(-1, -1, -1, -1), shape: "2147483647,2147483647,2147483647,-1", err: "takes more than 1048576 bytes"},
		{name: "past int64, no limit", specs: f32(-1, -1, -1, -1), shape: "2147483647,2147483647,2147483647,-1", limit: -1, err: "takes more than 9223372036854775807 bytes"},
		{name: "at the limit", specs: f32(-1, -1, -1), shape: "1,1024,256"},
		{name: "declared zero axis", specs: f32(-1, 0, -1), binErr: "input 'x' is float32 [-1, 0, -1]: axis 1 is 0, so a binary message holds no element and none can fit; send JSON text steps"},
		{name: "declared over the limit", specs: f32(1, 1024, 1024), binErr: "input 'x' is float32 [1, 1024, 1024]: a binary message of that shape takes more than 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := map[string][]string{}
			if tt.shape != "" {
				q["shape"] = []string{tt.shape}
			}
			limit := tt.limit
			switch limit {
			case 0:
				limit = 1 << 20
			case -1:
				limit = 0
			}
			p, err := newPlan(tt.specs, stateAt(1), q, limit)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.binErr == "" {
				if p.binErr != nil {
					t.Fatalf("binary messages: %v", p.binErr)
				}
				return
			}
			if _, err := p.binary(make([]byte, 4)); err == nil || !strings.Contains(err.Error(), tt.binErr) {
				t.Errorf("a binary message: %v, want %q", err, tt.binErr)
			}
		})
	}
}
