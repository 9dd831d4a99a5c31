package log

import (
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap/zapcore"
)

// iso8601Layout is zapcore.ISO8601TimeEncoder's layout.
const iso8601Layout = "2006-01-02T15:04:05.000Z0700"

// formattedSecond is one second's formatted time, split around its
// milliseconds: head ends with the second's '.', tail is the zone.
type formattedSecond struct {
	sec        int64
	loc        *time.Location
	head, tail string
}

var lastSecond atomic.Pointer[formattedSecond]

// ISO8601TimeEncoder writes the same text as zapcore.ISO8601TimeEncoder
// (2006-01-02T15:04:05.000Z0700) but formats each second once: a busy
// server logs many lines within one, and formatting a time costs more than
// the rest of an access-log line's fields.
func ISO8601TimeEncoder(t time.Time, enc zapcore.PrimitiveArrayEncoder) {
	var buf [40]byte
	enc.AppendByteString(appendLogTime(buf[:0], t))
}

// appendLogTime appends t in iso8601Layout to b. The text around the
// milliseconds is formatted once per second (a zone's offset changes on a
// second, never within one); the three digits are written each time.
func appendLogTime(b []byte, t time.Time) []byte {
	sec, loc := t.Unix(), t.Location()
	f := lastSecond.Load()
	if f == nil || f.sec != sec || f.loc != loc {
		s := t.Format(iso8601Layout)
		dot := strings.IndexByte(s, '.') // the date and the zone hold none
		f = &formattedSecond{sec: sec, loc: loc, head: s[:dot+1], tail: s[dot+4:]}
		lastSecond.Store(f)
	}
	ms := t.Nanosecond() / 1e6 // the layout truncates, as this does
	b = append(b, f.head...)
	b = append(b, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	return append(b, f.tail...)
}
