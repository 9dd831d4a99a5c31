// Package bench is svc's load generator, behind svc bench: it drives
// POST /predict of a running svc server (or of one it starts) in a closed
// loop at a sweep of concurrency levels, and measures the same model in
// process, without HTTP and JSON, to show what serving costs.
//
// Every run is bounded: each level's measured phase stops at a duration or
// a request count and never passes the hard caps (MaxDuration,
// MaxRequests); the whole run stops at MaxTotal; and only loopback servers
// are loaded unless the caller allows remote ones.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/svc-dev/svc/core/config"
)

// RawMode says whether the in-process modes run.
type RawMode int

// Raw modes.
const (
	// RawAuto measures in process when the model file is on this machine.
	RawAuto RawMode = iota
	// RawOn requires the in-process measurement.
	RawOn
	// RawOff skips it.
	RawOff
)

// DefaultBodies is how many random request bodies are rotated.
const DefaultBodies = 8

// maxBodyBudget bounds the memory the pre-encoded random bodies take.
const maxBodyBudget = 128 << 20

// maxInputFile bounds the size of an --input file.
const maxInputFile = 256 << 20

// Options configure a run.
type Options struct {
	// Model is the MODEL_NAME for svc serve, started as a child process of
	// Exe with ServeArgs added; URL is the base URL of a running server.
	// Exactly one is set.
	Model     string
	Exe       string
	ServeArgs []string
	URL       string
	// AllowRemote allows a URL whose host is not a loopback address.
	AllowRemote bool
	// Protocol is the API the requests go through ("": ProtocolV1).
	Protocol Protocol
	// GRPCAddr is the gRPC address (HOST:PORT) of the server at URL, for
	// ProtocolGRPC; a server svc bench starts gets a free port itself.
	GRPCAddr string

	// Concurrency lists the levels, run in this order.
	Concurrency []int
	// Duration and Requests bound each level's measured phase (0 = not
	// set; at least one must be set).
	Duration time.Duration
	Requests int64
	// Warmup runs before each level's measured phase, unrecorded.
	Warmup time.Duration
	// Timeout bounds one request.
	Timeout time.Duration

	// InputFile is a JSON request body used for every request; when empty,
	// random bodies are generated from GET /info with Batch, Shapes and
	// Seed (see PlanInputs and Generate).
	InputFile string
	// ContentType is the --input file's media type ("": application/json).
	// Another (a picture's, image/png, to a model input with image
	// settings) sends the file as it is, and the in-process modes, which
	// decode JSON bodies, do not run.
	ContentType string
	Batch       int64
	Shapes      map[string][]int64
	Seed        uint64
	// Bodies is the number of random bodies rotated (0 = DefaultBodies).
	Bodies int

	// Raw says whether to measure in process; Config supplies the runtime
	// settings for it (as svc serve reads them), Verbose ONNX Runtime's
	// warnings.
	Raw     RawMode
	Config  config.Config
	Verbose bool

	// Progress receives one line per phase (nil = none).
	Progress io.Writer
}

// Validate checks the options against the caps.
func (o *Options) Validate() error {
	switch {
	case o.Model == "" && o.URL == "":
		return errors.New("give a MODEL_NAME to serve, or --url of a running server")
	case o.Model != "" && o.URL != "":
		return errors.New("give either a MODEL_NAME or --url, not both")
	case o.URL != "" && len(o.ServeArgs) > 0:
		return fmt.Errorf("serve flags (%s) need a MODEL_NAME: svc bench starts the server only then", strings.Join(o.ServeArgs, " "))
	case len(o.Concurrency) == 0:
		return errors.New("--concurrency: give at least one level")
	case len(o.Concurrency) > MaxLevels:
		return fmt.Errorf("--concurrency: %d levels, at most %d", len(o.Concurrency), MaxLevels)
	case o.Duration < 0 || o.Requests < 0 || o.Warmup < 0:
		return errors.New("--duration, --requests and --warmup cannot be negative")
	case o.Duration == 0 && o.Requests == 0:
		return errors.New("give --duration or --requests")
	case o.Duration > MaxDuration:
		return fmt.Errorf("--duration %v: at most %v per level", o.Duration, MaxDuration)
	case o.Requests > MaxRequests:
		return fmt.Errorf("--requests %d: at most %d per level", o.Requests, MaxRequests)
	case o.Warmup > MaxWarmup:
		return fmt.Errorf("--warmup %v: at most %v", o.Warmup, MaxWarmup)
	case o.Timeout <= 0 || o.Timeout > MaxTimeout:
		return fmt.Errorf("--timeout %v: must be positive and at most %v", o.Timeout, MaxTimeout)
	case o.Batch < 1:
		return fmt.Errorf("--batch %d: must be at least 1", o.Batch)
	case o.Bodies < 0:
		return fmt.Errorf("bodies %d: cannot be negative", o.Bodies)
	case o.InputFile != "" && (len(o.Shapes) > 0 || o.Batch != 1):
		return errors.New("--input gives the whole request body: --shape and --batch do not apply")
	}
	if _, err := ParseProtocol(string(o.Protocol)); err != nil {
		return err
	}
	if o.Protocol == ProtocolGRPC && o.URL != "" {
		if o.GRPCAddr == "" {
			return fmt.Errorf("--protocol %s with --url needs the server's gRPC address: --grpc-address HOST:PORT (svc serve --grpc-port)", ProtocolGRPC)
		}
		host, _, err := net.SplitHostPort(o.GRPCAddr)
		if err != nil {
			return fmt.Errorf("invalid --grpc-address %q: want HOST:PORT", o.GRPCAddr)
		}
		if !o.AllowRemote && !IsLoopback(host) {
			return fmt.Errorf("--grpc-address %s: %q is %w; svc bench loads only servers on this machine unless --allow-remote is given", o.GRPCAddr, host, ErrRemote)
		}
	}
	if o.GRPCAddr != "" && (o.Protocol != ProtocolGRPC || o.URL == "") {
		return fmt.Errorf("--grpc-address applies to --protocol %s with --url only", ProtocolGRPC)
	}
	if o.ContentType != "" && o.InputFile == "" {
		return errors.New("--content-type is the --input file's: give --input FILE")
	}
	if !o.Protocol.v1() && o.InputFile != "" {
		return fmt.Errorf("--input is a /predict body: it applies to --protocol %s only; %s requests are generated from --shape and --batch", ProtocolV1, o.Protocol)
	}
	for _, c := range o.Concurrency {
		if c < 1 || c > MaxConcurrency {
			return fmt.Errorf("--concurrency %d: each level must be between 1 and %d", c, MaxConcurrency)
		}
	}
	if o.Duration > 0 {
		modes := 3
		if o.Raw == RawOff {
			modes = 1
		}
		if total := time.Duration(len(o.Concurrency)*modes) * (o.Duration + o.Warmup); total > MaxTotal {
			return fmt.Errorf("%d levels × %d modes × (%v + %v warm-up) = %v, more than the %v a run may take", len(o.Concurrency), modes, o.Duration, o.Warmup, total, MaxTotal)
		}
	}
	if o.URL != "" {
		if _, err := CheckURL(o.URL, o.AllowRemote); err != nil {
			return err
		}
	}
	return nil
}

// Run measures the server, then (after stopping a server it started) the
// in-process modes, and returns the report. It stops early, with the
// levels cut short marked, when ctx ends or MaxTotal has passed.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, MaxTotal)
	defer cancel()
	if o.Bodies == 0 {
		o.Bodies = DefaultBodies
	}
	if o.Protocol == "" {
		o.Protocol = ProtocolV1
	}
	r := o.newReport()
	srv, base, grpcAddr, err := o.target(ctx, r)
	if err != nil {
		return nil, err
	}
	if srv != nil {
		defer srv.Stop()
	}

	client := newClient(o.Timeout)
	defer client.CloseIdleConnections()
	info, err := FetchInfo(ctx, client, base)
	if err != nil {
		return nil, err
	}
	r.Model.Name, r.Model.Version = info.Name, info.Version
	r.Target.Provider = FetchProvider(ctx, client, base)

	reqs, err := o.requests(info, r)
	if err != nil {
		return nil, err
	}
	reqs.grpcAddr = grpcAddr
	bodies := reqs.v1
	if err := probeAll(ctx, o.Protocol, base, client, reqs); err != nil {
		return nil, err
	}
	if err := o.runServed(ctx, base, srv, reqs, r); err != nil {
		return nil, err
	}
	if srv != nil {
		if err := srv.Stop(); err != nil {
			r.Notes = append(r.Notes, "stopping the server: "+oneLine(err.Error()))
		}
	}

	if err := o.runRaw(ctx, info, bodies, r); err != nil {
		return nil, err
	}
	r.Ratios = ComputeRatios(r.Served, r.Raw, r.RawCodec)
	r.Notes = append(r.Notes, o.notes(r)...)
	if ctx.Err() != nil {
		r.Notes = append(r.Notes, "the run was cut short: "+context.Cause(ctx).Error())
	}
	return r, nil
}

// newReport returns the report of a run of o before anything is measured:
// the machine and the settings.
func (o *Options) newReport() *Report {
	r := &Report{
		Schema:  SchemaVersion,
		Machine: machine(),
		Target:  TargetReport{ServeArgs: slices.Clone(o.ServeArgs)},
		Settings: Settings{
			Concurrency: slices.Clone(o.Concurrency),
			DurationS:   o.Duration.Seconds(),
			Requests:    o.Requests,
			WarmupS:     o.Warmup.Seconds(),
			TimeoutS:    o.Timeout.Seconds(),
			Seed:        o.Seed,
			Batch:       o.Batch,
			InputFile:   o.InputFile,
			ContentType: o.ContentType,
			Protocol:    string(o.Protocol),
		},
		Served: []Level{}, Raw: []Level{}, RawCodec: []Level{},
		Model: ModelReport{Inputs: []Planned{}},
		Notes: []string{},
	}
	if r.Target.ServeArgs == nil {
		r.Target.ServeArgs = []string{}
	}
	return r
}

// target starts the server of --model (the caller stops it) or takes
// --url, and notes which in r. It returns the server it started, if any,
// the base URL and the gRPC address.
func (o *Options) target(ctx context.Context, r *Report) (srv *Server, base, grpcAddr string, err error) {
	grpcAddr = o.GRPCAddr
	if o.Model != "" {
		o.progress("starting svc serve %s on 127.0.0.1 …", o.Model)
		args := o.ServeArgs
		if o.Protocol == ProtocolGRPC {
			port, err := freePort()
			if err != nil {
				return nil, "", "", err
			}
			args = append(slices.Clip(args), "--grpc-port", strconv.Itoa(port))
			grpcAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		}
		srv, err = StartServer(ctx, o.Exe, o.Model, args)
		if err != nil {
			return nil, "", "", err
		}
		base = srv.URL
		r.Target.StartedServer = true
	} else {
		u, _ := CheckURL(o.URL, o.AllowRemote)
		base = u.String()
	}
	r.Target.URL = base
	if u, err := url.Parse(base); err == nil {
		r.Machine.SharedWithServer = IsLoopback(u.Hostname())
	}
	return srv, base, grpcAddr, nil
}

// runServed measures the server at base at each concurrency level into
// r.Served, checking after each that srv (when the run started it) is
// still alive.
func (o *Options) runServed(ctx context.Context, base string, srv *Server, reqs *requests, r *Report) error {
	for _, c := range o.Concurrency {
		if ctx.Err() != nil {
			break
		}
		ld, err := newLoader(o.Protocol, base, c, o.Timeout, reqs)
		if err != nil {
			return err
		}
		o.progress("served     concurrency %d (%s) …", c, o.Protocol)
		l := RunLevel(ctx, c, o.Warmup, Bounds{o.Duration, o.Requests}, ld.op())
		ld.close()
		o.progressLevel(l)
		r.Served = append(r.Served, l)
		if srv != nil {
			if err := srv.Alive(); err != nil {
				return fmt.Errorf("the server died during the run: %w", err)
			}
			srv.TruncateLog()
		}
	}
	return nil
}

// jsonBody reports whether the --input file is a JSON body.
func (o *Options) jsonBody() bool {
	ct := strings.ToLower(strings.TrimSpace(o.ContentType))
	return ct == "" || ct == "application/json" || strings.HasPrefix(ct, "application/json;")
}

// requests reads the --input file or generates random inputs, and encodes
// them for o.Protocol.
func (o *Options) requests(info Info, r *Report) (*requests, error) {
	if o.InputFile != "" {
		f, err := os.Open(o.InputFile)
		if err != nil {
			return nil, fmt.Errorf("--input: %w", err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxInputFile+1))
		if err != nil {
			return nil, fmt.Errorf("--input: %w", err)
		}
		if len(b) > maxInputFile {
			return nil, fmt.Errorf("--input %s: larger than %d MiB", o.InputFile, maxInputFile>>20)
		}
		r.Settings.Bodies, r.Settings.BodyBytes = 1, len(b)
		if !o.jsonBody() {
			return &requests{model: info.Name, v1: [][]byte{b}, contentType: o.ContentType}, nil
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(b, &obj); err != nil {
			return nil, fmt.Errorf("--input %s: not a JSON object mapping input names to values: %w", o.InputFile, err)
		}
		return &requests{model: info.Name, v1: [][]byte{b}}, nil
	}
	plan, err := PlanInputs(info.Inputs, o.Batch, o.Shapes)
	if err != nil {
		return nil, err
	}
	r.Model.Inputs = plan
	n := BodyCount(plan, o.Bodies)
	tensors := GenerateTensors(plan, n, o.Seed)
	reqs := &requests{model: info.Name, v1: EncodeBodies(plan, tensors)}
	total := 0
	for _, b := range reqs.v1 {
		total += len(b)
	}
	if o.Protocol.v2() {
		if reqs.v2, err = encodeV2(plan, tensors, o.Protocol == ProtocolV2Binary); err != nil {
			return nil, err
		}
		total = 0
		for _, b := range reqs.v2 {
			total += len(b.body)
		}
	}
	if o.Protocol == ProtocolGRPC {
		reqs.grpc = encodeGRPC(info.Name, plan, tensors)
		total = 0
		for _, req := range reqs.grpc {
			total += proto.Size(req)
		}
	}
	r.Settings.Bodies, r.Settings.BodyBytes = n, total/n
	return reqs, nil
}

// runRaw runs the in-process modes, or says in r why they did not run.
func (o *Options) runRaw(ctx context.Context, info Info, bodies [][]byte, r *Report) error {
	skip := func(reason string, err error) error {
		if o.Raw == RawOn {
			if err == nil {
				err = errors.New(reason)
			}
			return fmt.Errorf("--raw: %w", err)
		}
		r.RawSkipped = reason
		return nil
	}
	switch {
	case o.Raw == RawOff:
		r.RawSkipped = "--no-raw"
		return nil
	case ctx.Err() != nil:
		r.RawSkipped = "the run was cut short"
		return nil
	case !o.jsonBody():
		return skip("--content-type "+o.ContentType+": the in-process modes decode JSON bodies only", nil)
	case info.Path == "":
		return skip("GET /info gives no model path", nil)
	}
	if _, err := os.Stat(info.Path); err != nil {
		return skip(fmt.Sprintf("the model file %s (GET /info path) is not on this machine", info.Path), nil)
	}
	o.progress("loading %s in process …", info.Path)
	local, err := OpenLocal(info.Path, o.Config, o.Verbose)
	if err != nil {
		return skip("cannot load the model in process: "+oneLine(err.Error()), err)
	}
	defer local.Close()
	pred := local.Predictor()
	r.Target.RawProvider, r.Target.ModelFile = local.Provider(), info.Path
	inputs, err := DecodeBodies(pred, bodies)
	if err != nil {
		return skip(oneLine(err.Error()), err)
	}
	if _, err := rawOp([]Predictor{pred}, inputs)(ctx, 0, 0); err != nil {
		return skip("the in-process run fails: "+oneLine(err.Error()), err)
	}
	for _, c := range o.Concurrency {
		if ctx.Err() != nil {
			break
		}
		o.progress("raw        concurrency %d …", c)
		l := RunLevel(ctx, c, o.Warmup, Bounds{o.Duration, o.Requests}, rawOp([]Predictor{pred}, inputs))
		o.progressLevel(l)
		r.Raw = append(r.Raw, l)
	}
	if !o.Protocol.v1() {
		// raw+codec is /predict's JSON codec: it says nothing of another
		// protocol's cost.
		return nil
	}
	for _, c := range o.Concurrency {
		if ctx.Err() != nil {
			break
		}
		o.progress("raw+codec  concurrency %d …", c)
		l := RunLevel(ctx, c, o.Warmup, Bounds{o.Duration, o.Requests}, codecOp(pred, bodies, c))
		o.progressLevel(l)
		r.RawCodec = append(r.RawCodec, l)
	}
	return nil
}

// notes explains what the numbers compare.
func (o *Options) notes(r *Report) []string {
	var out []string
	if r.Machine.SharedWithServer {
		out = append(out, fmt.Sprintf("the load generator runs on the same %d CPUs as the server and takes part of them; the in-process modes run in svc bench's own process after the server stopped", r.Machine.CPUs))
	}
	if r.Target.RawProvider != "" && r.Target.Provider != "" && r.Target.RawProvider != r.Target.Provider {
		out = append(out, fmt.Sprintf("the server runs on %s, the in-process modes on %s: the ratios compare different providers", r.Target.Provider, r.Target.RawProvider))
	}
	for _, in := range r.Model.Inputs {
		if len(in.DefaultedDims) > 0 {
			axes := make([]string, len(in.DefaultedDims))
			for i, a := range in.DefaultedDims {
				axes[i] = strconv.Itoa(a)
			}
			out = append(out, fmt.Sprintf("input %s: dynamic dimension(s) %s set to 1; give the sizes you serve with --shape %s=D0,D1,…", in.Name, strings.Join(axes, ", "), in.Name))
		}
	}
	if !o.Protocol.v1() && len(r.Raw) > 0 {
		out = append(out, fmt.Sprintf("the requests went through --protocol %s; raw+codec (the /predict JSON codec) did not run", o.Protocol))
	}
	if len(r.Raw) > 0 {
		out = append(out, "the in-process modes run one session with the configuration file's runtime settings, as svc serve with one worker does")
	}
	return out
}

func (o *Options) progress(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "svc bench: "+format+"\n", args...)
	}
}

func (o *Options) progressLevel(l Level) {
	if o.Progress == nil {
		return
	}
	msg := fmt.Sprintf("svc bench:   %d requests, %s/s, p50 %s, p99 %s, %d errors", l.Requests, fmtRate(l.ThroughputRPS), FormatMicros(l.LatencyUS.P50), FormatMicros(l.LatencyUS.P99), l.Errors)
	if l.FirstError != "" {
		msg += " (" + clip(l.FirstError, 200) + ")"
	}
	fmt.Fprintln(o.Progress, msg)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// freePort is a TCP port on 127.0.0.1 that was free a moment ago, for the
// gRPC listener of a server svc bench starts.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port for gRPC: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// BodyCount is how many of want random bodies for plan fit the memory
// budget of the pre-encoded bodies (about 12 bytes per generated number);
// at least 1.
func BodyCount(plan []Planned, want int) int {
	var elems int64
	for _, p := range plan {
		n := int64(1)
		for _, d := range p.Shape {
			n *= d
		}
		elems += n
	}
	return int(min(int64(want), max(1, maxBodyBudget/max(1, 12*elems))))
}
