package transport

import (
	"sync/atomic"
	"time"

	"go.uber.org/zap/zapcore"
)

// iso8601Layout is zapcore.ISO8601TimeEncoder's layout.
const iso8601Layout = "2006-01-02T15:04:05.000Z0700"

// formattedTime is one millisecond's formatted time.
type formattedTime struct {
	ms  int64
	loc *time.Location
	s   string
}

var lastTime atomic.Pointer[formattedTime]

// ISO8601TimeEncoder writes the same text as zapcore.ISO8601TimeEncoder
// (2006-01-02T15:04:05.000Z0700) but formats each millisecond once: a busy
// server logs many lines within one, and formatting a time costs more than
// the rest of an access-log line's fields.
func ISO8601TimeEncoder(t time.Time, enc zapcore.PrimitiveArrayEncoder) {
	enc.AppendString(formatLogTime(t))
}

// formatLogTime is t in iso8601Layout, formatted once per millisecond.
func formatLogTime(t time.Time) string {
	ms, loc := t.UnixMilli(), t.Location()
	if f := lastTime.Load(); f != nil && f.ms == ms && f.loc == loc {
		return f.s
	}
	f := &formattedTime{ms: ms, loc: loc, s: t.Format(iso8601Layout)}
	lastTime.Store(f)
	return f.s
}
