package main

import (
	"io"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"
)

// newLogger writes JSON lines to stderr, or a console format when stderr is
// a terminal; SVC_LOG_FORMAT=json|console overrides. --verbose turns on
// debug logs.
func newLogger(w io.Writer, verbose bool) (*zap.Logger, error) {
	level := zapcore.InfoLevel
	if verbose {
		level = zapcore.DebugLevel
	}
	encCfg := zap.NewProductionEncoderConfig()
	encCfg.TimeKey = "ts"
	encCfg.EncodeTime = zapcore.ISO8601TimeEncoder
	format := os.Getenv("SVC_LOG_FORMAT")
	if format == "" {
		format = "json"
		if f, ok := w.(*os.File); ok && isTerminal(f) {
			format = "console"
		}
	}
	var enc zapcore.Encoder
	if format == "console" {
		encCfg.EncodeLevel = zapcore.CapitalColorLevelEncoder
		enc = zapcore.NewConsoleEncoder(encCfg)
	} else {
		enc = zapcore.NewJSONEncoder(encCfg)
	}
	core := zapcore.NewCore(enc, zapcore.AddSync(w), level)
	return zap.New(core), nil
}

// isTerminal is true for a real terminal (not /dev/null or a pipe).
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
