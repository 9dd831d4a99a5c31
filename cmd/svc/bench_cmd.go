package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/svc-dev/svc/cmd/internal/bench"
	"github.com/svc-dev/svc/core/config"
)

const benchDescription = `Measures POST /predict of an svc server in a closed loop (each of N
concurrent clients sends a request, waits for the answer, sends the next) at
each concurrency level, and reports requests, throughput and p50/p90/p99/max
latency and errors per level. --protocol v2-json or v2-binary sends the same
inputs to the Open Inference Protocol's POST /v2/models/{name}/infer instead,
as JSON tensors or as binary tensors (inputs and outputs); --protocol grpc
calls the gRPC ModelInfer with raw tensors (a server svc bench starts gets
--grpc-port on a free port; with --url, give --grpc-address HOST:PORT).

The server is either started by svc bench (MODEL_NAME: svc serve of this
binary on 127.0.0.1 and a free port, stopped at the end; serve flags go after
--, e.g. 'svc bench model.onnx -- --workers 2') or already running (--url;
only loopback addresses unless --allow-remote).

Inputs come from GET /info: random values of each input's type (floats in
[0,1), integers in [0,10), booleans, short lowercase words), a dynamic first
dimension set by --batch, other dynamic dimensions 1 unless --shape gives
the input's whole shape (--shape x=1,3,48,192, repeatable). Optional inputs
are left out unless --shape names them. Eight bodies are encoded once and
rotated. --input FILE.json sends one fixed body instead; with --content-type
(image/png, image/jpeg) the file is posted as it is, a picture for a model
input with image settings.

When the model file is on this machine (the path in GET /info), svc bench
then loads it in process on the CPU provider with the configuration file's
runtime settings and measures, at the same levels and on the same inputs,
'raw' (Predict only) and 'raw+codec' (the server's JSON decoder, Predict and
the JSON encoder, no HTTP; with --protocol v1 only), and prints served/raw
ratios.

Every level is bounded: --duration or --requests (the first reached), at most
10 minutes and 10,000,000 requests; a whole run stops after an hour.`

func benchCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:        "bench",
		Usage:       "measure a model's served throughput and latency against in-process inference",
		ArgsUsage:   "[MODEL_NAME] [-- SERVE_FLAGS...]",
		Description: benchDescription,
		// --shape values contain commas.
		DisableSliceFlagSeparator: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "url", Usage: "base URL of a running svc server, e.g. http://127.0.0.1:8080 (instead of MODEL_NAME)"},
			&cli.BoolFlag{Name: "allow-remote", Usage: "allow a --url host that is not a loopback address"},
			&cli.StringFlag{Name: "protocol", Value: string(bench.ProtocolV1), Usage: "API the requests go through: v1 (POST /predict, JSON), v2-json (Open Inference Protocol v2, JSON tensors), v2-binary (v2 with binary tensors in and out) or grpc (v2 over gRPC, raw tensors)"},
			&cli.StringFlag{Name: "grpc-address", Usage: "gRPC address `HOST:PORT` of the --url server (svc serve --grpc-port), for --protocol grpc"},
			&cli.StringFlag{Name: "concurrency", Value: "1,2,4,8", Usage: "concurrency levels, comma-separated (each 1-1024)"},
			&cli.DurationFlag{Name: "duration", Value: 5 * time.Second, Usage: "measured time per level (at most 10m)"},
			&cli.IntFlag{Name: "requests", Usage: "measured requests per level (at most 10000000); with --duration unset, the level ends only at this count"},
			&cli.DurationFlag{Name: "warmup", Value: time.Second, Usage: "unrecorded warm-up before each level (at most 1m)"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "timeout of one request"},
			&cli.StringFlag{Name: "input", Usage: "JSON request body `FILE` sent with every request, instead of random inputs", TakesFile: true},
			&cli.StringFlag{Name: "content-type", Usage: "media `TYPE` of the --input file, e.g. image/png to post a picture to a model input with image settings (default application/json; another type turns the in-process modes off)"},
			&cli.IntFlag{Name: "batch", Value: 1, Usage: "size of each input's dynamic first dimension"},
			&cli.StringSliceFlag{Name: "shape", Usage: "an input's whole shape, `NAME=D0,D1,...` (repeatable), e.g. x=1,3,48,192"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the random inputs"},
			&cli.BoolWithInverseFlag{Name: "raw", HideDefault: true, Usage: "measure in process too (default: when the model file is on this machine)"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document instead of tables"},
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Value: config.DefaultFile, Usage: "configuration file (runtime settings; passed on to the server svc bench starts)"},
			&cli.BoolFlag{Name: "verbose", Usage: "ONNX Runtime warnings in the in-process run"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			o, err := benchOptions(cmd, stderr)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			rep, err := bench.Run(ctx, o)
			if err != nil {
				return err
			}
			if cmd.Bool("json") {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			return rep.WriteTable(stdout)
		},
	}
}

// benchOptions turns the flags into bench.Options; mistakes are usage
// errors (exit 2).
func benchOptions(cmd *cli.Command, stderr io.Writer) (bench.Options, error) {
	o := bench.Options{
		URL:         cmd.String("url"),
		GRPCAddr:    cmd.String("grpc-address"),
		AllowRemote: cmd.Bool("allow-remote"),
		Requests:    int64(cmd.Int("requests")),
		Warmup:      cmd.Duration("warmup"),
		Timeout:     cmd.Duration("timeout"),
		InputFile:   cmd.String("input"),
		ContentType: cmd.String("content-type"),
		Batch:       int64(cmd.Int("batch")),
		Seed:        cmd.Uint64("seed"),
		Verbose:     cmd.Bool("verbose"),
		Progress:    stderr,
	}
	// --requests alone ends a level at the count; --duration (5s by
	// default) also ends it when given or left with --requests unset.
	if o.Requests == 0 || cmd.IsSet("duration") {
		o.Duration = cmd.Duration("duration")
	}
	p, err := bench.ParseProtocol(cmd.String("protocol"))
	if err != nil {
		return o, &exitError{code: exitUsage, err: err}
	}
	o.Protocol = p
	switch {
	case !cmd.IsSet("raw"):
		o.Raw = bench.RawAuto
	case cmd.Bool("raw"):
		o.Raw = bench.RawOn
	default:
		o.Raw = bench.RawOff
	}

	args := cmd.Args().Slice()
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		o.Model, args = args[0], args[1:]
	}
	o.ServeArgs = args
	for _, a := range o.ServeArgs {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "host" || name == "h" || name == "port" || name == "p" || name == "config" || name == "c") {
			return o, usageErr("serve flag %s: svc bench chooses the host and port, and passes its own --config on", a)
		}
	}

	for _, f := range strings.Split(cmd.String("concurrency"), ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return o, usageErr("invalid --concurrency %q: want comma-separated counts such as 1,2,4,8", cmd.String("concurrency"))
		}
		o.Concurrency = append(o.Concurrency, c)
	}
	if shapes := cmd.StringSlice("shape"); len(shapes) > 0 {
		o.Shapes = map[string][]int64{}
		for _, s := range shapes {
			name, dims, err := bench.ParseShape(s)
			if err != nil {
				return o, &exitError{code: exitUsage, err: err}
			}
			if _, dup := o.Shapes[name]; dup {
				return o, usageErr("--shape %s given twice", name)
			}
			o.Shapes[name] = dims
		}
	}

	cfg, err := config.Load(cmd.String("config"), cmd.IsSet("config"))
	if err != nil {
		return o, err
	}
	if err := cfg.Validate(); err != nil {
		return o, &exitError{code: exitUsage, err: err}
	}
	o.Config = cfg
	if o.Model != "" {
		exe, err := os.Executable()
		if err != nil {
			return o, fmt.Errorf("find own executable: %w", err)
		}
		o.Exe = exe
		if cmd.IsSet("config") {
			o.ServeArgs = append([]string{"--config", cmd.String("config")}, o.ServeArgs...)
		}
	}
	if err := o.Validate(); err != nil {
		return o, &exitError{code: exitUsage, err: err}
	}
	return o, nil
}
