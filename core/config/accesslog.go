package config

import (
	"fmt"
	"strconv"
	"strings"
)

// AccessLogMode says which requests get an access-log line.
type AccessLogMode int

// The access-log modes.
const (
	// AccessLogAll logs every request.
	AccessLogAll AccessLogMode = iota
	// AccessLogErrors logs requests answered with a status of 400 or more.
	AccessLogErrors
	// AccessLogSampled logs every error and a fraction of the other
	// requests.
	AccessLogSampled
	// AccessLogOff logs no request (handler panics are still logged).
	AccessLogOff
)

// DefaultAccessLog is serve.access_log's default.
const DefaultAccessLog = "all"

// DefaultSampleRate is the fraction of successful requests 'sampled' logs
// when it names no rate.
const DefaultSampleRate = 0.01

// AccessLog is a parsed serve.access_log value.
type AccessLog struct {
	Mode AccessLogMode
	// Rate is the fraction (0 < Rate ≤ 1) of successful requests logged
	// in sampled mode.
	Rate float64
}

// AccessLogValues describes the accepted values, for messages and help.
const AccessLogValues = "all, errors, sampled, sampled:RATE (a fraction such as 0.01, or 1%) or off"

// ParseAccessLog parses an access_log value: all, errors, off, sampled
// (DefaultSampleRate) or sampled:RATE with RATE a fraction in (0, 1] or a
// percentage such as 5%.
func ParseAccessLog(s string) (AccessLog, error) {
	name, rate, hasRate := strings.Cut(strings.TrimSpace(s), ":")
	mode := AccessLog{Rate: 1}
	switch strings.ToLower(name) {
	case "all":
		mode.Mode = AccessLogAll
	case "errors":
		mode.Mode = AccessLogErrors
	case "off":
		mode.Mode = AccessLogOff
	case "sampled":
		mode.Mode, mode.Rate = AccessLogSampled, DefaultSampleRate
		if hasRate {
			r, err := parseRate(rate)
			if err != nil {
				return AccessLog{}, err
			}
			mode.Rate = r
		}
		return mode, nil
	default:
		return AccessLog{}, fmt.Errorf("must be one of %s; got %q", AccessLogValues, s)
	}
	if hasRate {
		return AccessLog{}, fmt.Errorf("takes a rate only in sampled mode (sampled:0.01); got %q", s)
	}
	return mode, nil
}

func parseRate(s string) (float64, error) {
	t := strings.TrimSpace(s)
	div := 1.0
	if p, ok := strings.CutSuffix(t, "%"); ok {
		t, div = strings.TrimSpace(p), 100
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || !(f > 0) || f/div > 1 {
		return 0, fmt.Errorf("sample rate must be a fraction in (0, 1] such as 0.01, or a percentage such as 1%%; got %q", s)
	}
	return f / div, nil
}

// String gives the value back in the form ParseAccessLog reads.
func (a AccessLog) String() string {
	switch a.Mode {
	case AccessLogErrors:
		return "errors"
	case AccessLogOff:
		return "off"
	case AccessLogSampled:
		return "sampled:" + strconv.FormatFloat(a.Rate, 'g', -1, 64)
	}
	return "all"
}

// AccessLogPolicy is the serve section's access-log policy: its
// access_log value parsed, DefaultAccessLog when it is empty (a Serve not
// built from Default).
func (s Serve) AccessLogPolicy() (AccessLog, error) {
	mode := s.AccessLog
	if mode == "" {
		mode = DefaultAccessLog
	}
	policy, err := ParseAccessLog(mode)
	if err != nil {
		return AccessLog{}, fmt.Errorf("serve.access_log %w", err)
	}
	return policy, nil
}
