package workers

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/svc-dev/svc/core"
)

// Supported is false on Windows: a listening socket cannot be handed to
// child processes there, so svc runs N in-process sessions behind one
// listener instead.
const Supported = false

// ShutdownSignal mirrors the Unix supervisor's; no worker receives it here.
var ShutdownSignal os.Signal = os.Interrupt

// Options mirror the Unix supervisor's.
type Options struct {
	Workers        int
	Listeners      []Named
	Exe            string
	Args, Env      []string
	Stdout, Stderr io.Writer
	Grace          time.Duration
	DrainDelay     time.Duration
	StartTimeout   time.Duration
	ReloadTimeout  time.Duration
	CPUs           [][]int
	Log            *zap.Logger
}

// StartError mirrors the Unix supervisor's.
type StartError struct {
	Worker int
	Msg    string
}

func (e *StartError) Error() string { return e.Msg }

// Supervisor is not available on Windows.
type Supervisor struct{}

// New returns a supervisor whose Run fails.
func New(Options) *Supervisor { return &Supervisor{} }

// Run reports that worker processes are not supported.
func (*Supervisor) Run(context.Context, func(json.RawMessage)) error {
	return errors.New("worker processes are not supported on windows")
}

// Pids is empty on Windows: there are no worker processes.
func (*Supervisor) Pids() map[int]int { return nil }

// Reload is never called here: there are no worker processes to reload.
func (s *Supervisor) Reload(context.Context) (core.ReloadResult, error) {
	return core.ReloadResult{}, errors.New("no worker processes on Windows")
}

// Hurry does nothing on Windows: there are no worker processes.
func (*Supervisor) Hurry() {}
