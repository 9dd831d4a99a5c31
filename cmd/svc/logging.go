package main

import (
	"io"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"

	svclog "github.com/svc-dev/svc/transport/log"
)

// newLogger writes JSON lines to stderr, or a console format when stderr is
// a terminal; SVC_LOG_FORMAT=json|console overrides. --verbose turns on
// debug logs. The lines go through a svclog.Writer, so that a slow
// stderr never holds up a request: the caller owns it and closes it last.
func newLogger(w io.Writer, verbose bool) (*zap.Logger, *svclog.Writer, error) {
	level := zapcore.InfoLevel
	if verbose {
		level = zapcore.DebugLevel
	}
	encCfg := svclog.EncoderConfig()
	format := os.Getenv("SVC_LOG_FORMAT")
	if format == "" {
		format = "json"
		if f, ok := w.(*os.File); ok && isTerminal(f) {
			format = "console"
		}
	}
	out := svclog.NewWriter(w, svclog.DefaultBuffer)
	var core zapcore.Core
	if format == "console" {
		encCfg.EncodeLevel = zapcore.CapitalColorLevelEncoder
		core = zapcore.NewCore(zapcore.NewConsoleEncoder(encCfg), out, level)
	} else {
		core = svclog.NewJSONCore(out, level)
	}
	log := zap.New(core)
	out.OnDrop(func(lines uint64) {
		log.Warn("log lines dropped: the log output did not keep up", zap.Uint64("lines", lines))
	})
	return log, out, nil
}

// isTerminal is true for a real terminal (not /dev/null or a pipe).
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
