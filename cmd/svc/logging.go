package main

import (
	"io"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"

	"github.com/svc-dev/svc/transport"
)

// newLogger writes JSON lines to stderr, or a console format when stderr is
// a terminal; SVC_LOG_FORMAT=json|console overrides. --verbose turns on
// debug logs. The lines go through a transport.LogWriter, so that a slow
// stderr never holds up a request: the caller owns it and closes it last.
func newLogger(w io.Writer, verbose bool) (*zap.Logger, *transport.LogWriter, error) {
	level := zapcore.InfoLevel
	if verbose {
		level = zapcore.DebugLevel
	}
	encCfg := transport.LogEncoderConfig()
	format := os.Getenv("SVC_LOG_FORMAT")
	if format == "" {
		format = "json"
		if f, ok := w.(*os.File); ok && isTerminal(f) {
			format = "console"
		}
	}
	out := transport.NewLogWriter(w, transport.DefaultLogBuffer)
	var core zapcore.Core
	if format == "console" {
		encCfg.EncodeLevel = zapcore.CapitalColorLevelEncoder
		core = zapcore.NewCore(zapcore.NewConsoleEncoder(encCfg), out, level)
	} else {
		core = transport.NewJSONCore(out, level)
	}
	log := zap.New(core)
	out.OnDrop(func(lines uint64) {
		log.Warn("log lines dropped: the log output did not keep up", zap.Uint64("lines", lines))
	})
	return log, out, nil
}

// isTerminal is true for a real terminal (not /dev/null or a pipe).
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
