package bench

import (
	"context"
	"errors"
	"fmt"
	"os"

	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/onnxrt"
	"github.com/svc-dev/svc/core/session"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/providers"
	"github.com/svc-dev/svc/transport/rest"
)

// Predictor is what the in-process modes run: a session, or the
// scheduler in front of sessions.
type Predictor = core.Runner

// Local is the model loaded in this process on ONNX Runtime's CPU
// provider, with the runtime settings of the configuration file (as a
// single-process svc serve would use them). The CPU provider comes from the
// registry: the program must import providers/all (or the CPU provider)
// blank, as svc does.
type Local struct {
	env  *onnxrt.Env
	pred *session.Predictor
	// path, cpu and cfg open further sessions (OpenSession).
	path string
	cpu  providers.Provider
	cfg  config.Config
}

// OpenLocal loads ONNX Runtime (found as svc serve finds it) and the .onnx
// file at path. There is one ONNX Runtime environment per process: open
// one Local at a time.
func OpenLocal(path string, cfg config.Config, verbose bool) (*Local, error) {
	if st, err := os.Stat(path); err != nil || st.IsDir() {
		return nil, fmt.Errorf("model file %q is not on this machine", path)
	}
	cpu, err := cpuProvider()
	if err != nil {
		return nil, err
	}
	env, err := onnxrt.Load(onnxrt.DefaultSearch(cfg.Runtime.Library), verbose)
	if err != nil {
		return nil, err
	}
	if err := env.LimitCPUMemory(int64(cfg.Runtime.MemoryLimit)); err != nil {
		_ = env.Close()
		return nil, err
	}
	pred, err := session.New(session.Options{
		Name:            "raw",
		File:            path,
		Runtime:         cfg.Runtime,
		Provider:        cpu,
		ProviderOptions: cfg.ProviderOptions(),
	}, zap.NewNop())
	if err != nil {
		_ = env.Close()
		return nil, err
	}
	return &Local{env: env, pred: pred, path: path, cpu: cpu, cfg: cfg}, nil
}

// OpenSession loads the model once more, as a session of its own in the
// same ONNX Runtime environment, with runtime settings rt (the rest of the
// configuration as OpenLocal got it). The caller closes it before Close.
func (l *Local) OpenSession(rt config.Runtime) (*session.Predictor, error) {
	cfg := l.cfg
	cfg.Runtime = rt
	return session.New(session.Options{
		Name:            "raw",
		File:            l.path,
		Runtime:         rt,
		Provider:        l.cpu,
		ProviderOptions: cfg.ProviderOptions(),
	}, zap.NewNop())
}

// Config is the configuration the model was opened with.
func (l *Local) Config() config.Config { return l.cfg }

// cpuProvider is the CPU provider of the registry (the fallback every
// ONNX Runtime library offers).
func cpuProvider() (providers.Provider, error) {
	p, ok := providers.Registered().Lookup(providers.FallbackName)
	if !ok {
		return nil, fmt.Errorf("the %s provider is not compiled in (compiled in: %v): import github.com/svc-dev/svc/providers/all", providers.FallbackName, providers.Compiled())
	}
	return p, nil
}

// Predictor is the loaded model.
func (l *Local) Predictor() *session.Predictor { return l.pred }

// Provider is ONNX Runtime's name of the provider the model runs on.
func (l *Local) Provider() string { return l.pred.Provider().ORTName() }

// Close releases the session and the environment.
func (l *Local) Close() error {
	return errors.Join(l.pred.Close(), l.env.Close())
}

// DecodeBodies turns request bodies into input tensors (in the model's
// input order) with the server's own decoder, so the in-process modes run
// on exactly what the server would.
func DecodeBodies(p Predictor, bodies [][]byte) ([][]*tensor.Tensor, error) {
	out := make([][]*tensor.Tensor, len(bodies))
	for i, b := range bodies {
		ins, err := rest.DecodeRequest(b, p.Specs())
		if err != nil {
			return nil, fmt.Errorf("decode the request body for the in-process run: %w", err)
		}
		out[i] = ins
	}
	return out, nil
}

// rawOp runs Predict on pre-decoded inputs: inference only. Worker w runs
// on ps[w % len(ps)]: one session shared by every worker, or one session
// per worker.
func rawOp(ps []Predictor, inputs [][]*tensor.Tensor) Op {
	return func(ctx context.Context, w int, seq int64) (int, error) {
		res, err := ps[w%len(ps)].Predict(ctx, inputs[(int64(w)+seq)%int64(len(inputs))])
		if err != nil {
			return 0, err
		}
		res.Close()
		return 0, nil
	}
}

// codecOp decodes a body, runs Predict and encodes the answer, as the
// server's handler does, without HTTP.
func codecOp(p Predictor, bodies [][]byte, concurrency int) Op {
	bufs := make([][]byte, concurrency)
	return func(ctx context.Context, w int, seq int64) (int, error) {
		ins, err := rest.DecodeRequest(bodies[(int64(w)+seq)%int64(len(bodies))], p.Specs())
		if err != nil {
			return 0, err
		}
		res, err := p.Predict(ctx, ins)
		if err != nil {
			return 0, err
		}
		bufs[w], err = rest.AppendResult(bufs[w][:0], p.Info().Outputs, res)
		res.Close()
		return 0, err
	}
}
