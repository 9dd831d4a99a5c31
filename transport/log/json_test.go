package log

import (
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// TestAppendJSONStringMatchesZap: random byte strings, weighted towards the
// bytes that need escaping and towards multi-byte and broken UTF-8, are
// escaped exactly as zap escapes them.
func TestAppendJSONStringMatchesZap(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(1, 2))
	alphabet := []string{"a", "Z", "0", " ", `"`, `\`, "\n", "\r", "\t", "\x00", "\x1f", "\x7f", "é", "日", "😀", "\xff", "\xe6\x97", "\xf0\x9f"}
	enc := zapcore.NewJSONEncoder(zapcore.EncoderConfig{LineEnding: "\n"})
	for i := 0; i < 5000; i++ {
		var sb strings.Builder
		for n := rng.IntN(12); n > 0; n-- {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := sb.String()
		buf, err := enc.EncodeEntry(zapcore.Entry{}, []zap.Field{zap.String("k", s)})
		if err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(buf.String()), `{"k":`), "}")
		buf.Free()
		if got := string(appendJSONString(nil, s)); got != want {
			t.Fatalf("%q: got %s, zap writes %s", s, got, want)
		}
	}
}

// TestAppendSecondsMatchesStrconv: durations are written as zap writes
// them, strconv's shortest form of the seconds, across the integer path
// (under a second) and the float path around it.
func TestAppendSecondsMatchesStrconv(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(3, 4))
	ds := []time.Duration{0, 1, 9, 10, 100, time.Microsecond, 183 * time.Microsecond, time.Millisecond,
		999999999, 100000000, 120000000, time.Second, time.Second + 1, -1, -time.Second, 90 * time.Minute, 1<<63 - 1}
	for i := 0; i < 200000; i++ {
		ds = append(ds, time.Duration(rng.Int64N(int64(time.Second))))
	}
	for i := 0; i < 2000; i++ {
		ds = append(ds, time.Duration(rng.Int64N(int64(3*time.Second))), time.Duration(rng.Int64N(1000))*time.Millisecond)
	}
	for _, d := range ds {
		want := strconv.AppendFloat(nil, d.Seconds(), 'f', -1, 64)
		if got := appendSeconds(nil, d); string(got) != string(want) {
			t.Fatalf("%d ns: got %s, strconv writes %s", int64(d), got, want)
		}
	}
}
