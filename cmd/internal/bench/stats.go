package bench

import (
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency summarises the latencies of the successful requests of one level,
// in microseconds (rounded to 0.1 µs). Percentiles come from an HDR
// histogram with three significant digits; min and max are exact.
type Latency struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Level is the result of one concurrency level of one mode.
type Level struct {
	Concurrency int `json:"concurrency"`
	// Requests counts every request completed in the measured phase,
	// failed ones included.
	Requests int64 `json:"requests"`
	// Errors counts non-200 answers and transport errors (for the
	// in-process modes: failed runs).
	Errors int64 `json:"errors"`
	// ElapsedS is the measured phase's wall time in seconds.
	ElapsedS float64 `json:"elapsed_s"`
	// ThroughputRPS is successful requests per second.
	ThroughputRPS float64 `json:"throughput_rps"`
	// LatencyUS holds the latencies of the successful requests.
	LatencyUS Latency `json:"latency_us"`
	// StatusCodes counts HTTP statuses by code (served mode only).
	StatusCodes map[string]int64 `json:"status_codes,omitempty"`
	// FirstError is the first error seen, if any.
	FirstError string `json:"first_error,omitempty"`
	// Interrupted is set when the level was cut short (Ctrl-C, the
	// overall time cap).
	Interrupted bool `json:"interrupted,omitempty"`
}

// maxRecorded is the largest latency a histogram tracks; longer ones are
// recorded as this value. It matches the per-level time cap.
const maxRecorded = MaxDuration

// Recorder collects the outcomes of one level's requests. It is safe for
// concurrent use.
type Recorder struct {
	mu       sync.Mutex
	hist     *hdrhistogram.Histogram
	requests int64
	errors   int64
	ok       int64
	sum      time.Duration
	min, max time.Duration
	status   map[int]int64
	firstErr string
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{
		// Nanoseconds from 1 ns to the cap, three significant digits:
		// 0.1 µs resolution around 100 µs.
		hist:   hdrhistogram.New(1, int64(maxRecorded), 3),
		status: map[int]int64{},
	}
}

// Record adds one request: its latency, its HTTP status (0 when there is
// none) and its error. A request is an error when err is set or the status
// is neither 0 nor 200; only successful requests count toward latency.
func (r *Recorder) Record(d time.Duration, status int, err error) {
	if d < 1 {
		d = 1
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	if status != 0 {
		r.status[status]++
	}
	if err != nil || (status != 0 && status != 200) {
		r.errors++
		if r.firstErr == "" {
			switch {
			case err != nil:
				r.firstErr = err.Error()
			default:
				r.firstErr = "status " + strconv.Itoa(status)
			}
		}
		return
	}
	r.ok++
	r.sum += d
	if r.ok == 1 || d < r.min {
		r.min = d
	}
	if d > r.max {
		r.max = d
	}
	_ = r.hist.RecordValue(min(int64(d), int64(maxRecorded)))
}

// Level summarises what was recorded for a level that ran for elapsed.
func (r *Recorder) Level(concurrency int, elapsed time.Duration) Level {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := Level{
		Concurrency: concurrency,
		Requests:    r.requests,
		Errors:      r.errors,
		ElapsedS:    round(elapsed.Seconds(), 4),
		FirstError:  r.firstErr,
	}
	if elapsed > 0 {
		l.ThroughputRPS = round(float64(r.ok)/elapsed.Seconds(), 1)
	}
	if len(r.status) > 0 {
		l.StatusCodes = make(map[string]int64, len(r.status))
		for code, n := range r.status {
			l.StatusCodes[strconv.Itoa(code)] = n
		}
	}
	if r.ok > 0 {
		us := func(ns int64) float64 { return round(float64(ns)/1e3, 1) }
		l.LatencyUS = Latency{
			Min:  us(int64(r.min)),
			Mean: us(int64(r.sum) / r.ok),
			P50:  us(r.hist.ValueAtQuantile(50)),
			P90:  us(r.hist.ValueAtQuantile(90)),
			P99:  us(r.hist.ValueAtQuantile(99)),
			Max:  us(int64(r.max)),
		}
		// The histogram reports the top of a value's bucket; never above
		// the exact maximum.
		l.LatencyUS.P50 = math.Min(l.LatencyUS.P50, l.LatencyUS.Max)
		l.LatencyUS.P90 = math.Min(l.LatencyUS.P90, l.LatencyUS.Max)
		l.LatencyUS.P99 = math.Min(l.LatencyUS.P99, l.LatencyUS.Max)
	}
	return l
}

// round rounds x to the given number of decimals.
func round(x float64, decimals int) float64 {
	p := math.Pow10(decimals)
	return math.Round(x*p) / p
}
