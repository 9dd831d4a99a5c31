package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/onnxrt"
	"github.com/svc-dev/svc/providers"
)

// exitError carries an exit code through the command tree.
type exitError struct {
	code int
	err  error
	// quiet errors were already reported elsewhere (a worker tells its
	// supervisor, which prints them once).
	quiet bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// run builds the command tree and runs it; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// -h is --host for serve, so help is --help only.
	cli.HelpFlag = &cli.BoolFlag{Name: "help", Usage: "show help"}
	root := &cli.Command{
		Name:      "svc",
		Usage:     "serve an ONNX model over HTTP with JSON",
		Version:   version,
		Writer:    stdout,
		ErrWriter: stderr,
		Commands: []*cli.Command{
			serveCommand(stdout, stderr),
			initCommand(stdout),
			versionCommand(stdout),
			benchCommand(stdout, stderr),
			providersCommand(stdout),
			pullCommand(stdout, stderr),
			listCommand(stdout),
			rmCommand(stdout),
		},
		HideVersion: true,
		OnUsageError: func(_ context.Context, _ *cli.Command, err error, _ bool) error {
			return &exitError{code: exitUsage, err: err}
		},
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
	}
	err := root.Run(ctx, args)
	if err == nil {
		return exitOK
	}
	code := exitFailure
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	} else if strings.Contains(err.Error(), "flag provided but not defined") || strings.Contains(err.Error(), "invalid value") {
		code = exitUsage
	}
	if ee == nil || !ee.quiet {
		fmt.Fprintf(stderr, "svc: error: %s\n", oneLine(err.Error()))
	}
	return code
}

// oneLine keeps start-up failures on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func versionCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the svc, Go and ONNX Runtime versions",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Value: config.DefaultFile, Usage: "configuration file (for runtime.library)"},
		},
		Action: func(_ context.Context, cmd *cli.Command) error {
			fmt.Fprintf(stdout, "svc %s\n", version)
			fmt.Fprintf(stdout, "go %s %s/%s\n", strings.TrimPrefix(runtime.Version(), "go"), runtime.GOOS, runtime.GOARCH)
			fmt.Fprintf(stdout, "providers compiled in: %s\n", strings.Join(providers.Compiled(), ", "))
			cfg, err := config.Load(cmd.String("config"), cmd.IsSet("config"))
			if err != nil {
				return err
			}
			env, err := onnxrt.Load(onnxrt.DefaultSearch(cfg.Runtime.Library), false)
			if err != nil {
				fmt.Fprintf(stdout, "onnxruntime: not loaded (%s)\n", oneLine(err.Error()))
				return &exitError{code: exitFailure, err: err}
			}
			defer env.Close()
			fmt.Fprintf(stdout, "onnxruntime %s (%s)\n", env.Version(), env.LibraryPath())
			return nil
		},
	}
}
