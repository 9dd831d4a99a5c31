package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"
	"go.uber.org/dig"
	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/onnxrt"
	"github.com/svc-dev/svc/core/registry"
	"github.com/svc-dev/svc/core/sched"
	"github.com/svc-dev/svc/core/seq"
	"github.com/svc-dev/svc/core/session"
	"github.com/svc-dev/svc/core/watch"
	"github.com/svc-dev/svc/core/workers"
	"github.com/svc-dev/svc/openapi"
	"github.com/svc-dev/svc/providers"
	_ "github.com/svc-dev/svc/providers/all"
	"github.com/svc-dev/svc/transport"
	"github.com/svc-dev/svc/transport/access"
	grpcapi "github.com/svc-dev/svc/transport/grpcapi"
	"github.com/svc-dev/svc/transport/metrics"
	"github.com/svc-dev/svc/transport/oip"
	"github.com/svc-dev/svc/transport/openai"
	"github.com/svc-dev/svc/transport/repository"
	"github.com/svc-dev/svc/transport/rest"
	"github.com/svc-dev/svc/transport/stream"
	"github.com/svc-dev/svc/transport/tei"
	"github.com/svc-dev/svc/transport/tracing"
)

func serveCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "serve",
		Usage:     "serve a model over HTTP",
		ArgsUsage: "MODEL_NAME",
		Description: "MODEL_NAME is a path to a .onnx file or model directory, a model named in the\n" +
			"configuration file, or a model pulled into the local registry.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "port", Aliases: []string{"p"}, Value: 8080, Usage: "port to serve on"},
			&cli.StringFlag{Name: "host", Aliases: []string{"h"}, Value: "0.0.0.0", Usage: "address to bind; 127.0.0.1 accepts local connections only"},
			&cli.IntFlag{Name: "grpc-port", Usage: "port of the Open Inference Protocol's gRPC service, on the same host; 0 = off (default: serve.grpc_port, 0; KServe uses 9000, Triton 8001)"},
			&cli.IntFlag{Name: "workers", Value: 1, Usage: "number of worker processes, each with its own copy of the model"},
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Value: config.DefaultFile, Usage: "configuration file"},
			&cli.StringFlag{Name: "provider", Usage: "preferred execution provider: " + providers.NameList() + " (default: automatic)"},
			&cli.StringFlag{Name: "access-log", Usage: "which requests get an access-log line: all, errors (status >= 400), sampled[:RATE] (errors and a RATE fraction of the rest, default 0.01) or off (default: serve.access_log, all)"},
			&cli.StringFlag{Name: "name", Usage: "name to serve the model under in /health, /info and /v2/models/NAME (default: from MODEL_NAME)"},
			&cli.BoolFlag{Name: "verbose", Usage: "verbose output"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usageErr("serve takes exactly one MODEL_NAME (got %d arguments); see 'svc serve --help'", cmd.Args().Len())
			}
			if cmd.IsSet("name") {
				if err := checkServedName(cmd.String("name")); err != nil {
					return usageErr("--name %v", err)
				}
			}
			cfg, err := loadServeConfig(cmd)
			if err != nil {
				return err
			}
			return serve(ctx, cmd.Args().First(), cmd.String("name"), cfg, cmd.Bool("verbose"), stdout, stderr)
		},
	}
}

// loadServeConfig reads the configuration file and applies flags over it.
func loadServeConfig(cmd *cli.Command) (config.Config, error) {
	cfg, err := config.Load(cmd.String("config"), cmd.IsSet("config"))
	if err != nil {
		return cfg, err
	}
	if cmd.IsSet("port") {
		cfg.Serve.Port = int(cmd.Int("port"))
	}
	if cmd.IsSet("grpc-port") {
		cfg.Serve.GRPCPort = int(cmd.Int("grpc-port"))
	}
	if cmd.IsSet("host") {
		cfg.Serve.Host = cmd.String("host")
	}
	if cmd.IsSet("workers") {
		cfg.Serve.Workers = int(cmd.Int("workers"))
	}
	if cmd.IsSet("provider") {
		cfg.Serve.Provider = cmd.String("provider")
	}
	if cmd.IsSet("access-log") {
		// Checked here, so that a bad flag is not reported at the file's line.
		if _, err := config.ParseAccessLog(cmd.String("access-log")); err != nil {
			return cfg, usageErr("--access-log %v", err)
		}
		cfg.Serve.AccessLog = cmd.String("access-log")
	}
	if cfg.Serve.Provider != "" && !providers.ValidName(cfg.Serve.Provider) {
		return cfg, &exitError{code: exitUsage, err: &providers.UsageError{Name: cfg.Serve.Provider}}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, &exitError{code: exitUsage, err: err}
	}
	return cfg, nil
}

// serve runs the server until SIGINT/SIGTERM, then drains and returns. With
// --workers N it supervises N worker processes instead (or, where processes
// cannot share a socket, runs N sessions in this process). A non-empty
// servedName (--name) replaces the model name derived from MODEL_NAME.
func serve(ctx context.Context, modelName, servedName string, cfg config.Config, verbose bool, stdout, stderr io.Writer) error {
	log, logOut, err := newLogger(stderr, verbose)
	if err != nil {
		return err
	}
	defer func() {
		// The last lines out, unless stderr stays blocked.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = logOut.Close(ctx)
	}()
	// flushLog puts what is logged before the banner on stderr before it.
	flushLog := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = logOut.Flush(ctx)
	}
	if limit := int64(cfg.Runtime.MemoryLimit); limit > 0 {
		// A soft limit: the Go heap (request bodies, tensors) is collected
		// harder as it nears the budget.
		debug.SetMemoryLimit(limit)
	}

	stopProfiles, err := startProfiles(log)
	if err != nil {
		return err
	}
	defer stopProfiles()

	// Resolve the model once, up front, so a missing model fails before
	// anything is bound or started.
	src, srcErr := resolveServed(modelName, cfg)
	if srcErr == nil && servedName != "" {
		src.Name = servedName
	}

	worker, isWorker := workers.CurrentWorker()
	if !isWorker {
		// Once, from the process the user started.
		for _, n := range cfg.Notices() {
			log.Warn(n)
		}
	}
	if isWorker {
		log = log.With(zap.Int("worker", worker.ID))
		err := srcErr
		if err == nil {
			// The supervisor watches; the worker re-resolves its model
			// when asked to reload.
			rl := reloadSetup{resolve: resolver(modelName, src, cfg)}
			err = runServer(ctx, src, rl, cfg, verbose, log, &worker, func(b transport.Banner) error {
				info, err := json.Marshal(b)
				if err != nil {
					return err
				}
				return worker.Report(workers.Status{Ready: true, Info: info})
			})
		}
		if err != nil {
			// The supervisor prints the error once; the worker stays quiet.
			_ = worker.Report(workers.Status{Error: oneLine(err.Error())})
			return &exitError{code: exitFailure, err: err, quiet: true}
		}
		return nil
	}

	if srcErr != nil {
		return srcErr
	}
	rl := reloadSetup{resolve: resolver(modelName, src, cfg)}
	if cfg.Reload.Watch && src.Origin != originPipeline {
		if src.Origin == "registry" {
			if ref, err := registry.ParseRef(modelName); err == nil {
				rl.follow = &ref
			}
		} else {
			rl.watched = watchPath(modelName, src, cfg)
		}
	}
	if cfg.Serve.Workers > 1 && workers.Supported {
		return superviseWorkers(ctx, cfg, src, rl, log, flushLog, stdout, stderr)
	}
	return runServer(ctx, src, rl, cfg, verbose, log, nil, func(b transport.Banner) error {
		flushLog()
		return b.Write(stdout)
	})
}

// startProfiles starts the profiles SVC_CPUPROFILE and SVC_MEMPROFILE ask
// for; stop writes them, the memory profile first, as the server stops.
func startProfiles(log *zap.Logger) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if path := profilePath("SVC_CPUPROFILE"); path != "" {
		// A CPU profile of the whole run, for performance work.
		f, err := os.Create(path)
		if err != nil {
			return nil, fmt.Errorf("SVC_CPUPROFILE: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("SVC_CPUPROFILE: %w", err)
		}
		stops = append(stops, func() { pprof.StopCPUProfile(); _ = f.Close() })
	}
	if path := profilePath("SVC_MEMPROFILE"); path != "" {
		// Go's allocation profile of the whole run (every sampled
		// allocation's site and size, and what is still live), written
		// when the server stops, for memory work.
		f, err := os.Create(path)
		if err != nil {
			stop()
			return nil, fmt.Errorf("SVC_MEMPROFILE: %w", err)
		}
		stops = append(stops, func() {
			runtime.GC() // the live figures as of the last collection
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				log.Warn("SVC_MEMPROFILE", zap.Error(err))
			}
			_ = f.Close()
		})
	}
	return stop, nil
}

// runServer builds the application and starts it: the listeners bind and
// the servers answer (health at once, inference with 503) while the model
// loads in the background. Once it is ready, started gets the banner; then
// it runs until a signal, drains and stops. A model that fails to load
// stops everything and fails start-up.
//
// SIGHUP reloads the model (docs/reload.md); with watched set, so does a
// settled change of the model's file or folder at that path.
func runServer(ctx context.Context, src core.Source, rl reloadSetup, cfg config.Config, verbose bool, log *zap.Logger, worker *workers.Worker, started func(transport.Banner) error) error {
	var sv served
	options, err := appOptions(src, cfg, verbose, log, worker, &sv)
	if rl.resolve != nil {
		options = append(options, fx.Supply(rl.resolve))
	}
	if err != nil {
		return err
	}
	app := fx.New(options...)
	if err := app.Err(); err != nil {
		return rootCause(err)
	}
	server, model, loader := sv.server, sv.model, sv.loader
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	if worker != nil {
		signal.Notify(sig, workers.ShutdownSignal)
	}
	defer signal.Stop(sig)
	// Registered now: SIGHUP's default would end the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	stop := func() error {
		stopCtx, cancel := context.WithTimeout(context.Background(), cfg.Serve.ShutdownGrace.Std()+5*time.Second)
		defer cancel()
		if err := app.Stop(stopCtx); err != nil {
			return fmt.Errorf("shutdown: %w", err)
		}
		return nil
	}
	if worker != nil && worker.Replacement {
		// A worker that replaces one that died shares the port with
		// workers that serve: it takes no connection before it can answer
		// them.
		loader.Start()
		select {
		case <-model.Done():
		case <-sig:
			return nil
		}
		if err := model.Err(); err != nil {
			return err
		}
	}
	if err := app.Start(ctx); err != nil {
		return rootCause(err)
	}
	// The servers answer from here on; the model loads behind them.
	loader.Start()
	log.Debug("listening", zap.String("http", server.Addr().String()), zap.String("model", src.Name), zap.String("state", model.State().String()))
	log.Debug("loading the model", zap.String("model", src.Name), zap.String("file", src.File))
	select {
	case <-model.Done():
	case s := <-sig:
		log.Debug("shutting down while the model loads", zap.String("signal", s.String()))
		model.Drain()
		return stop()
	case <-ctx.Done():
		return stop()
	}
	if err := model.Err(); err != nil {
		_ = stop()
		return err
	}
	log.Info("model ready", zap.String("model", src.Name), zap.Duration("load_time", model.LoadTime()))

	// Reloads (a worker's reload socket) are up before start-up is told.
	stopReloads := startReloads(ctx, model, src, rl, cfg, log, worker, hup)
	defer stopReloads()
	if err := started(sv.banner(cfg)); err != nil {
		log.Warn("report start-up", zap.Error(err))
	}

	var got os.Signal
	select {
	case got = <-sig:
		log.Info("shutting down", zap.String("signal", got.String()))
	case <-ctx.Done():
	}
	// Readiness turns false before the servers stop taking requests.
	model.Drain()
	// A worker stopped alone leaves the shared socket's queue to the
	// others; otherwise this process answers what the kernel accepted.
	whole := worker == nil || got == workers.ShutdownSignal
	if whole {
		waitDrainDelay(cfg.Serve.DrainDelay.Std(), sig, log)
	}
	sv.server.SetDrainOnStop(whole)
	if sv.grpc != nil {
		sv.grpc.SetDrainOnStop(whole)
	}
	if err := stop(); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// waitDrainDelay keeps serving, not ready, for serve.drain_delay, while
// load balancers and Kubernetes' endpoints stop sending connections; a
// second signal ends it early.
func waitDrainDelay(d time.Duration, sig <-chan os.Signal, log *zap.Logger) {
	if d <= 0 {
		return
	}
	log.Info("not ready; accepting for the drain delay", zap.Duration("drain_delay", d))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case s := <-sig:
		log.Info("drain delay cut short", zap.String("signal", s.String()))
	}
}

// memoryBudget is the server-wide budget of the memory that the requests
// in flight hold (limits.request_memory, limits.memory_wait), which every
// protocol that serves inferences and the metrics ask for.
func memoryBudget(l config.Limits) *budget.Memory {
	return budget.New(int64(l.RequestMemory), l.MemoryWait.Std())
}

// served holds the parts of the application that runServer drives.
type served struct {
	server *transport.HTTPServer
	grpc   *grpcapi.Server
	model  *core.Model
	loader *core.Loader
	choice providers.Choice
}

// appOptions returns the options of the application that serves src, as
// alone or as worker; building it fills sv.
func appOptions(src core.Source, cfg config.Config, verbose bool, log *zap.Logger, worker *workers.Worker, sv *served) ([]fx.Option, error) {
	options := []fx.Option{
		fx.Supply(src, log, schedConfig(&cfg, worker), core.LoadOptions{WarmUp: cfg.Runtime.WarmUp, ReloadTimeout: cfg.Reload.Timeout.Std()},
			onnxrt.LibrarySetting(cfg.Runtime.Library),
			onnxrt.Verbose(verbose),
			onnxrt.MemoryLimit(cfg.Runtime.MemoryLimit),
			providers.Requested(cfg.Serve.Provider),
			oip.ServerVersion(version),
			grpcapi.ServerVersion(version),
			codec.New(declared(src, cfg), cfg.Limits).ModelFile(src.File),
			sequenceOptions(src, cfg, worker),
		),
		fx.Provide(cfg.Sections),
		sequenceWorkers(worker),
	}
	if src.Origin == originPipeline {
		// A pipeline runs on pictures: inputs of ones would be refused.
		options = append(options, fx.Decorate(func(o core.LoadOptions) core.LoadOptions { o.WarmUp = false; return o }), pipelineOptions(src, cfg))
	}
	sample, err := warmUpSample(declared(src, cfg))
	if err != nil {
		return nil, err
	}
	options = append(options, sample)
	rc, err := responseCache(declared(src, cfg))
	if err != nil {
		return nil, err
	}
	options = append(options, rc)
	pl, err := payloadLogger(src.Name, declared(src, cfg), worker)
	if err != nil {
		return nil, err
	}
	options = append(options, pl)
	if worker != nil {
		lns, err := worker.Listeners()
		if err != nil {
			return nil, err
		}
		options = append(options,
			fx.Supply(&transport.Inherited{Listeners: transport.NewListeners(lns)}),
			fx.Supply(transport.ResponseHeaders{workers.WorkerIDHeader: strconv.Itoa(worker.ID)}),
			fx.Supply(metrics.Worker(worker.ID)),
		)
		if len(worker.CPUs) > 0 {
			options = append(options, fx.Supply(metrics.CPUs(workers.FormatCPUs(worker.CPUs))))
		}
		if worker.Sockets != "" {
			options = append(options, fx.Supply(&metrics.Peers{Dir: worker.Sockets, Self: worker.ID, Count: worker.Count}),
				// POST .../load reloads every worker, through the workers.
				fx.Supply(fx.Annotate(worker.Reloader(), fx.As(new(repository.Reloader)))))
		}
	}

	options = append(options,
		fx.WithLogger(func() fxevent.Logger {
			if verbose {
				return &fxevent.ZapLogger{Logger: log.Named("fx")}
			}
			return fxevent.NopLogger
		}),
		transport.Module,
		fx.Provide(memoryBudget),
		tracing.Module,
		access.Module,
		rest.Module,
		metrics.Module,
		oip.Module,
		grpcapi.Module,
		stream.Module,
		openai.Module,
		tei.Module,
		openapi.Module,
		repository.Module,
		onnxrt.Module,
		providers.Module(),
		core.Module,
		seq.Module,
		session.Module,
		sched.Module,
		fx.Provide(hostFromEnv),
		// The loader first: stop hooks run in reverse order of construction,
		// so the servers drain before the sessions close.
		fx.Populate(&sv.loader, &sv.model, &sv.choice, &sv.server, &sv.grpc),
		fx.StopTimeout(cfg.Serve.ShutdownGrace.Std()+5*time.Second),
	)
	return options, nil
}

// declared is what svc.yml declares for the served model's inputs and
// outputs: its entry under models: when the name resolved there.
func declared(src core.Source, cfg config.Config) config.Model {
	if src.Origin != "config" {
		return config.Model{}
	}
	return cfg.Models[src.Name]
}

// banner describes the server once its model is ready.
func (sv *served) banner(cfg config.Config) transport.Banner {
	runner, _ := sv.model.Runner()
	info := runner.Info()
	banner := transport.Banner{
		Version: version, Model: info.Name, ModelVersion: info.Version,
		Inputs: len(info.Inputs), Outputs: len(info.Outputs),
		Provider: sv.model.Provider().ORTName(),
		Host:     cfg.Serve.Host, Port: portOf(sv.server.Addr()), Workers: cfg.Serve.Workers,
		Endpoints: transport.Endpoints(sv.server.Routes),
	}
	if sv.grpc != nil {
		banner.GRPCPort = portOf(sv.grpc.Addr())
	}
	banner.ProviderNote = sv.choice.Note(sv.model.Provider())
	banner.Nodes = sv.model.Placement().String()
	return banner
}

// schedConfig is the scheduler's configuration for a process that serves
// alone or as worker: the cores it may use, the sessions it runs them on
// (--workers N sessions in one process where worker processes are not
// supported), and how ONNX Runtime's threads share them, which it also
// sets in cfg.Runtime.
func schedConfig(cfg *config.Config, worker *workers.Worker) sched.Config {
	share, sessions := sched.Cores(), 1
	if worker != nil && len(worker.CPUs) > 0 {
		// Pinned: the worker's own cores, ONNX Runtime's threads one each.
		share = len(worker.CPUs)
		if cfg.Runtime.IntraOpThreads == 0 {
			cfg.Runtime.IntraOpThreads = share
		}
	} else if worker != nil {
		share = max(1, share/worker.Count)
	} else if cfg.Serve.Workers > 1 {
		share, sessions = max(1, share/cfg.Serve.Workers), cfg.Serve.Workers
	}
	threads, slots := sched.CPUPlan(share, cfg.Runtime.IntraOpThreads)
	cfg.Runtime.IntraOpThreads = threads
	b := cfg.Batching
	return sched.Config{
		Sessions: sessions,
		Slots:    slots,
		Batching: sched.Batching{
			Enabled: b.Enabled, MaxBatchSize: b.MaxBatchSize, MaxQueueDelay: b.MaxQueueDelay.Std(), Adaptive: b.Adaptive,
		},
		ReleaseMemoryAfter: cfg.Runtime.ReleaseMemoryAfter.Std(),
		Cores:              share,
		GoProcs:            cfg.Runtime.GoProcs,
	}
}

// startReloads makes the ready model reload on SIGHUP, on a change of the
// watched path (when set) and, in a worker, when the supervisor asks on the
// worker's reload socket. The function returned stops them.
func startReloads(ctx context.Context, model *core.Model, src core.Source, rl reloadSetup, cfg config.Config, log *zap.Logger, worker *workers.Worker, hup <-chan os.Signal) func() {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	reload := func(ctx context.Context) error { _, err := model.Reload(ctx); return err }
	wg.Add(1)
	go func() {
		defer wg.Done()
		onHangup(ctx, hup, log, reload)
	}()
	rl.start(ctx, &wg, src, cfg, log, reload)
	var rs *workers.ReloadServer
	if worker != nil {
		var err error
		if rs, err = worker.ServeReload(model.Reload); err != nil {
			log.Warn("no reload socket: the supervisor cannot reload this worker", zap.Error(err))
		}
	}
	return func() {
		if rs != nil {
			_ = rs.Close()
		}
		cancel()
		wg.Wait()
	}
}

// onHangup reloads on each SIGHUP until ctx ends; the reload logs its
// outcome.
func onHangup(ctx context.Context, hup <-chan os.Signal, log *zap.Logger, reload func(context.Context) error) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			log.Info("SIGHUP: reloading the model")
			_ = reload(ctx)
		}
	}
}

// watchModel reloads on settled changes of the model at path until ctx
// ends.
func watchModel(ctx context.Context, path string, src core.Source, cfg config.Config, log *zap.Logger, reload func(context.Context) error) {
	err := watch.Run(ctx, watch.Options{Path: path, File: src.File, Settle: cfg.Reload.Settle.Std(), MaxSize: int64(cfg.Runtime.MaxModelSize), Reload: reload, Log: log,
		Started: func() {
			log.Info("watching the model for changes", zap.String("path", path), zap.Duration("settle", cfg.Reload.Settle.Std()))
		}})
	if err != nil {
		log.Error("cannot watch the model; reload it with SIGHUP or POST /v2/repository/models/NAME/load", zap.Error(err))
	}
}

// watchPath is the local path whose changes reload the model: the file or
// folder named on the command line or in svc.yml ("" for a model pulled
// from the Hub into the registry).
func watchPath(modelName string, src core.Source, cfg config.Config) string {
	switch src.Origin {
	case "path":
		return modelName
	case "config":
		p := cfg.Models[modelName].Path
		if !filepath.IsAbs(p) && cfg.File != "" {
			p = filepath.Join(filepath.Dir(cfg.File), p)
		}
		return p
	default:
		return ""
	}
}

// reloadSetup is how the served model reloads besides SIGHUP and POST
// .../load: what resolves it again for each reload, and what watches it.
type reloadSetup struct {
	resolve core.SourceResolver
	// watched is the local path watched for changes ("" = none).
	watched string
	// follow is the Hub revision followed (nil = none).
	follow *registry.Ref
}

// resolver resolves modelName again for a reload, under the name served.
func resolver(modelName string, src core.Source, cfg config.Config) core.SourceResolver {
	return func() (core.Source, error) {
		s, err := resolveServed(modelName, cfg)
		s.Name = src.Name
		return s, err
	}
}

// start runs the watcher or the Hub follower, if any, until ctx ends.
func (rl reloadSetup) start(ctx context.Context, wg *sync.WaitGroup, src core.Source, cfg config.Config, log *zap.Logger, reload func(context.Context) error) {
	switch {
	case rl.watched != "":
		wg.Add(1)
		go func() {
			defer wg.Done()
			watchModel(ctx, rl.watched, src, cfg, log, reload)
		}()
	case rl.follow != nil:
		hub := registry.HubFromEnv(os.Getenv)
		hub.UserAgent = "svc/" + version
		o := watch.HubOptions{Ref: *rl.follow, Puller: &registry.Puller{Store: registry.Open(registry.DefaultRoot()), Hub: hub},
			Interval: cfg.Reload.Interval.Std(), Reload: reload, Log: log}
		log.Info("following the model's revision on the Hub", zap.String("model", rl.follow.String()), zap.Duration("interval", o.Interval))
		wg.Add(1)
		go func() {
			defer wg.Done()
			watch.FollowHub(ctx, o)
		}()
	}
}

// superviseWorkers binds the ports once and runs the worker processes.
// SIGHUP, and a change of the watched path or of the followed Hub
// revision when set, reload the workers one at a time.
func superviseWorkers(ctx context.Context, cfg config.Config, src core.Source, rl reloadSetup, log *zap.Logger, flushLog func(), stdout, stderr io.Writer) error {
	lns, err := transport.BindAll(transport.ServeBindings(cfg.Serve.Host, cfg.Serve.Port, cfg.Serve.GRPCPort))
	if err != nil {
		return err
	}
	defer lns.Close()
	var named []workers.Named
	for _, name := range []string{transport.ListenerHTTP, transport.ListenerGRPC} {
		if !lns.Has(name) {
			continue
		}
		ln, _ := lns.Get(name)
		tcp, ok := ln.(*net.TCPListener)
		if !ok {
			return errors.New("workers need TCP listeners")
		}
		named = append(named, workers.Named{Name: name, Listener: tcp})
	}
	tcp := named[0].Listener
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var reloaders sync.WaitGroup
	defer reloaders.Wait()
	cpus, err := pinWorkers(cfg, log)
	if err != nil {
		return err
	}
	sup := workers.New(workers.Options{
		CPUs:       cpus,
		Workers:    cfg.Serve.Workers,
		Listeners:  named,
		Exe:        exe,
		Args:       os.Args[1:],
		Stdout:     io.Discard,
		Stderr:     stderr,
		Grace:      cfg.Serve.ShutdownGrace.Std(),
		DrainDelay: cfg.Serve.DrainDelay.Std(),
		// A worker's reload fails itself past reload.timeout.
		ReloadTimeout: cfg.Reload.Timeout.Std(),
		Log:           log,
	})
	defer onSecondSignal(sup.Hurry)()
	err = sup.Run(ctx, func(info json.RawMessage) {
		var b transport.Banner
		if err := json.Unmarshal(info, &b); err != nil {
			log.Warn("worker banner", zap.Error(err))
		}
		b.Host, b.Port, b.Workers = cfg.Serve.Host, tcp.Addr().(*net.TCPAddr).Port, cfg.Serve.Workers
		if len(named) > 1 {
			b.GRPCPort = named[1].Listener.Addr().(*net.TCPAddr).Port
		}
		log.Info("workers ready", zap.Int("workers", cfg.Serve.Workers), zap.Any("pids", sup.Pids()))
		flushLog()
		if err := b.Write(stdout); err != nil {
			log.Warn("write banner", zap.Error(err))
		}
		reload := func(ctx context.Context) error { _, err := sup.Reload(ctx); return err }
		reloaders.Add(1)
		go func() {
			defer reloaders.Done()
			onHangup(ctx, hup, log, reload)
		}()
		rl.start(ctx, &reloaders, src, cfg, log, reload)
	})
	if err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// onSecondSignal calls fn on the second SIGINT or SIGTERM the process
// gets (the first stops the server): the supervisor passes it on to the
// workers, ending their drain delay. The returned stop ends the watch.
func onSecondSignal(fn func()) (stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for seen := 1; ; seen++ {
			select {
			case <-ch:
				if seen >= 2 {
					fn()
				}
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
		wg.Wait()
	}
}

// hostFromEnv tells the providers what the loaded library offers.
func hostFromEnv(env *onnxrt.Env, log *zap.Logger) providers.Host {
	avail, err := env.AvailableProviders()
	if err != nil {
		log.Warn("cannot list the library's execution providers", zap.Error(err))
	}
	return providers.NewHost(env.LibraryPath(), avail)
}

func portOf(addr net.Addr) int {
	if ta, ok := addr.(*net.TCPAddr); ok {
		return ta.Port
	}
	return 0
}

// rootCause strips fx's wrapping so start-up failures read as one line
// about what went wrong.
func rootCause(err error) error {
	cause := dig.RootCause(err)
	if cause == nil {
		cause = err
	}
	var ee *exitError
	if errors.As(cause, &ee) {
		return ee
	}
	return cause
}

// profilePath is the file the profile variable env names, for this
// process: in a worker of serve.workers, the name gains ".workerN" before
// its extension (cpu.prof: cpu.worker2.prof), so that the workers, which
// all inherit the variable, do not write over each other's profiles.
func profilePath(env string) string {
	path := os.Getenv(env)
	w, ok := workers.CurrentWorker()
	if path == "" || !ok {
		return path
	}
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s.worker%d%s", strings.TrimSuffix(path, ext), w.ID, ext)
}
