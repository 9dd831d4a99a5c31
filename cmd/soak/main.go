// Command soak runs two svc servers, each with --workers 2, under mixed
// valid and bad traffic at full concurrency for a long time (make soak; 10
// minutes by default) and checks that they hold up: no 5xx on valid
// requests, worker memory flat after warm-up, no goroutine or file
// descriptor growth. It prints a summary and, with -out, writes it into
// BENCHMARKS.md between <!-- soak:begin --> and <!-- soak:end -->.
//
//	go run ./cmd/soak -svc build/bin/svc -duration 10m -out BENCHMARKS.md
//
// It reads /proc, so it runs on Linux only.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "soak: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	o := Options{}
	fs.StringVar(&o.Svc, "svc", "build/bin/svc", "the svc binary")
	models := fs.String("models", "testdata/models/classifier.onnx,testdata/models/multi_input.onnx", "the two models to serve, comma-separated (classifier and multi_input have traffic mixes)")
	fs.DurationVar(&o.Duration, "duration", envDuration("SOAK_DURATION", 10*time.Minute), "how long to run (SOAK_DURATION)")
	fs.IntVar(&o.Concurrency, "concurrency", 16, "concurrent clients per server")
	fs.IntVar(&o.Workers, "workers", 2, "--workers of each server")
	fs.DurationVar(&o.Interval, "interval", 5*time.Second, "sampling interval")
	fs.StringVar(&o.MaxBody, "max-body", "1MiB", "limits.max_body_size of the servers (empty: the default, 16 MiB)")
	out := fs.String("out", "", "Markdown file to write the result into (its soak section)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.Models = strings.Split(*models, ",")
	o.Log = stdout
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := Run(ctx, o)
	if err != nil {
		return err
	}
	md := res.Markdown()
	fmt.Fprintln(stdout)
	fmt.Fprint(stdout, md)
	if *out != "" {
		if err := WriteSection(*out, "soak", md); err != nil {
			return err
		}
	}
	if !res.Passed() {
		return fmt.Errorf("the soak failed: %s", strings.Join(res.Failures(), "; "))
	}
	return nil
}

// envDuration reads a duration from the environment, def when unset.
func envDuration(name string, def time.Duration) time.Duration {
	if v := os.Getenv(name); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
	}
	return def
}
