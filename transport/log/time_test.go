package log

import (
	"testing"
	"time"
	_ "time/tzdata" // the zone-change cases need a zone database

	"go.uber.org/zap/zapcore"
)

// timeText encodes t with enc as a JSON log line's ts and returns it.
func timeText(t *testing.T, enc zapcore.TimeEncoder, tm time.Time) string {
	t.Helper()
	cfg := zapcore.EncoderConfig{TimeKey: "ts", EncodeTime: enc}
	buf, err := zapcore.NewJSONEncoder(cfg).EncodeEntry(zapcore.Entry{Time: tm}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	return buf.String()
}

func TestISO8601TimeEncoderMatchesZap(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	base := time.Date(2026, 11, 23, 20, 4, 52, 123_456_789, time.UTC)
	tests := []struct {
		name string
		give time.Time
	}{
		{"utc", base},
		{"same millisecond", base.Add(400 * time.Microsecond)},
		{"next millisecond", base.Add(time.Millisecond)},
		{"same second, first millisecond", base.Add(-123 * time.Millisecond)},
		{"same second, last millisecond", base.Add(875 * time.Millisecond)},
		{"next second", base.Add(time.Second)},
		{"other zone, same instant", base.In(berlin)},
		{"local", base.Local()},
		{"second boundary", time.Date(2026, 12, 31, 23, 59, 59, 999_999_999, time.UTC)},
		{"after it", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"before 1970", time.Date(1969, 12, 31, 23, 59, 59, 500_000_000, time.UTC)},
		{"five-digit year", time.Date(12026, 1, 2, 3, 4, 5, 67_000_000, berlin)},
		{"zone change within a minute", time.Date(2026, 3, 29, 0, 59, 59, 999_000_000, time.UTC).In(mustZone(t, "Europe/Berlin"))},
		{"after the change", time.Date(2026, 3, 29, 1, 0, 0, 1_000_000, time.UTC).In(mustZone(t, "Europe/Berlin"))},
		{"now", time.Now()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Twice: once formatted, once from the cache.
			for range 2 {
				got, want := timeText(t, ISO8601TimeEncoder, tt.give), timeText(t, zapcore.ISO8601TimeEncoder, tt.give)
				if got != want {
					t.Fatalf("got %s, want %s", got, want)
				}
			}
		})
	}
}

// mustZone loads a time zone from the system's database, or from Go's
// embedded copy when the system has none.
func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
