package log

import (
	"bytes"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// EncoderConfig is the encoder configuration of svc's log lines: zap's
// production keys, "ts" for the time, written as ISO 8601 in the local zone.
func EncoderConfig() zapcore.EncoderConfig {
	c := zap.NewProductionEncoderConfig()
	c.TimeKey = "ts"
	c.EncodeTime = ISO8601TimeEncoder
	return c
}

// NewJSONCore is the core of svc's JSON log: zap's JSON encoder with
// LogEncoderConfig, writing to out at level.
//
// Access-log lines are the one kind of line a busy server writes thousands
// of a second, so the core formats them itself, the same bytes zap's
// encoder would write, with a handful of appends straight into the
// Writer's buffer (a pooled buffer for another destination):
// zap's encoder costs several times more per line (a cloned encoder, a
// key, separator and escaping pass per field), and the issue this answers
// bounds the access log at 2 % of the server's CPU. Every other line goes
// through zap unchanged.
func NewJSONCore(out zapcore.WriteSyncer, level zapcore.LevelEnabler) zapcore.Core {
	cfg := EncoderConfig()
	return &JSONCore{
		Core: zapcore.NewCore(zapcore.NewJSONEncoder(cfg), out, level),
		out:  out,
	}
}

// JSONCore is a zap core that can also write an access-log line directly
// (WriteAccess).
type JSONCore struct {
	zapcore.Core
	out zapcore.WriteSyncer
	// context is the fields added by With, encoded by zap: `"k":v,...`
	// without braces (empty when there are none).
	context []byte
}

// With keeps the fast access-log path, with the new fields encoded once by
// zap's own encoder.
func (c *JSONCore) With(fields []zapcore.Field) zapcore.Core {
	inner := c.Core.With(fields)
	if len(fields) == 0 {
		return &JSONCore{Core: inner, out: c.out, context: c.context}
	}
	// An encoder with no entry keys writes just the fields: {"k":v}\n.
	enc := zapcore.NewJSONEncoder(zapcore.EncoderConfig{
		LineEnding:     "\n",
		EncodeTime:     ISO8601TimeEncoder,
		EncodeDuration: zapcore.SecondsDurationEncoder,
	})
	buf, err := enc.EncodeEntry(zapcore.Entry{}, fields)
	if err != nil {
		return inner // the slow path writes whatever zap can
	}
	encoded := bytes.TrimSuffix(bytes.TrimSpace(buf.Bytes()), []byte("}"))
	encoded = bytes.TrimPrefix(encoded, []byte("{"))
	ctx := make([]byte, 0, len(c.context)+1+len(encoded))
	ctx = append(ctx, c.context...)
	if len(ctx) > 0 && len(encoded) > 0 {
		ctx = append(ctx, ',')
	}
	ctx = append(ctx, encoded...)
	buf.Free()
	return &JSONCore{Core: inner, out: c.out, context: ctx}
}

// lineBuffers holds the buffers access-log lines are formatted in when the
// core's output is not a Writer.
var lineBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// WriteAccess writes one access-log line at info level, as zap's JSON
// encoder would write the entry {msg: "request"} with the fields method,
// path, status, duration (seconds), bytes, request_id, remote and
// trace_id. Into a Writer (as 'svc serve' logs) the line is formatted in
// the writer's own buffer, which spares a pooled buffer and a copy per
// line.
func (c *JSONCore) WriteAccess(line *AccessLine) {
	if lw, ok := c.out.(*Writer); ok {
		if b, ok := lw.beginLine(); ok {
			lw.endLine(c.appendAccess(b, line))
		}
		return
	}
	bp := lineBuffers.Get().(*[]byte)
	b := c.appendAccess((*bp)[:0], line)
	// Another destination's error has nowhere better to go than the log
	// that failed.
	_, _ = c.out.Write(b)
	if cap(b) <= 4096 { // a huge line (a long remote address?) is not kept
		*bp = b
		lineBuffers.Put(bp)
	}
}

// AccessLine is what one access-log line says.
type AccessLine struct {
	End                      time.Time
	Method, Path, ID, Remote string
	Trace                    string // "": none
	Status, Size             int
	Duration                 time.Duration
}

// appendAccess appends l as a JSON line to b.
func (c *JSONCore) appendAccess(b []byte, l *AccessLine) []byte {
	b = append(b, `{"level":"info","ts":"`...)
	b = appendLogTime(b, l.End)
	b = append(b, `","msg":"request"`...)
	if len(c.context) > 0 {
		b = append(b, ',')
		b = append(b, c.context...)
	}
	b = append(b, `,"method":`...)
	b = appendJSONString(b, l.Method)
	b = append(b, `,"path":`...)
	b = appendJSONString(b, l.Path)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(l.Status), 10)
	b = append(b, `,"duration":`...)
	b = appendSeconds(b, l.Duration)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, int64(l.Size), 10)
	b = append(b, `,"request_id":`...)
	b = appendJSONString(b, l.ID)
	b = append(b, `,"remote":`...)
	b = appendJSONString(b, l.Remote)
	if l.Trace != "" {
		b = append(b, `,"trace_id":"`...)
		b = append(b, l.Trace...)
		b = append(b, '"')
	}
	return append(b, "}\n"...)
}

// appendSeconds appends d in seconds as zap's SecondsDurationEncoder writes
// it: strconv's shortest 'f' form of d.Seconds(). Under a second, which is
// nearly every request, that form is exactly the nanoseconds as a decimal
// fraction with its trailing zeros dropped (a value of at most 9
// significant digits is the one such decimal that rounds to its float64),
// so it is written with integer arithmetic instead of a float conversion.
func appendSeconds(b []byte, d time.Duration) []byte {
	if d <= 0 || d >= time.Second {
		return strconv.AppendFloat(b, d.Seconds(), 'f', -1, 64)
	}
	ns := uint32(d)
	digits := 9
	for ns%10 == 0 {
		ns /= 10
		digits--
	}
	var frac [9]byte
	for i := digits - 1; i >= 0; i-- {
		frac[i] = byte('0' + ns%10)
		ns /= 10
	}
	b = append(b, '0', '.')
	return append(b, frac[:digits]...)
}

const hexDigits = "0123456789abcdef"

// plainJSON marks the bytes a JSON string holds as they are: printable
// ASCII but the quote and the backslash.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendJSONString appends s as a JSON string, escaped as zap's JSON
// encoder escapes it: quotes and backslashes, \n \r \t, other control
// bytes as \u00XX, invalid UTF-8 as \ufffd; everything else as it is.
// (The tensor codec's string encoder escapes differently, \u000a and
// U+2028 included, so a line written with it would not be zap's.)
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	// Most strings (a method, a request id, an address) need no escape:
	// find the first byte that might, a table lookup per byte, and copy
	// everything before it at once.
	i := 0
	for i < len(s) && plainJSON[s[i]] {
		i++
	}
	if i == len(s) {
		b = append(b, s...)
		return append(b, '"')
	}
	last := 0
	for i < len(s) {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b = append(b, s[last:i]...)
			b = append(b, `\ufffd`...)
			i++
			last = i
			continue
		}
		if c >= 0x20 && c != '\\' && c != '"' {
			i++
			continue
		}
		b = append(b, s[last:i]...)
		switch c {
		case '\\', '"':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		last = i
	}
	b = append(b, s[last:]...)
	return append(b, '"')
}
