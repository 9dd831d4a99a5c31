package log

import (
	"bytes"
	"context"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultBuffer is the log output a Writer holds while its
// destination is slow, before it drops lines.
const DefaultBuffer = 1 << 20

// AtomicWrite is the most a Writer hands a pipe or socket in one
// write, in whole lines: PIPE_BUF on Linux, the size up to which a write
// to a pipe is atomic. svc's workers share the supervisor's stderr; were a
// worker's batch of lines written in one call, a full pipe would take it
// in parts, and another worker's lines would land between them, in the
// middle of a line. A line longer than this goes in a write of its own.
const AtomicWrite = 4096

// FlushDelay is the least time between two writes of a Writer to
// its destination: the lines logged meanwhile go out together.
const FlushDelay = 50 * time.Millisecond

// Writer puts a bounded buffer between loggers and a destination that
// may be slow, such as stderr on a pipe nobody reads fast: Write only copies
// into the buffer and never waits for the destination, and a goroutine of
// the writer's own writes the buffer out. When the buffer is full, Write
// drops the whole write (one log line, as zap writes a line at a time) and
// counts it. A line after a quiet spell is written at once; then the
// goroutine rests FlushDelay, and the lines logged meanwhile go out in
// one write, so a busy server makes one system call for many lines.
//
// The owner calls Close, which writes what is buffered and stops the
// goroutine.
type Writer struct {
	dst io.Writer
	max int
	// lines makes each write to dst whole lines of at most
	// AtomicWrite bytes (dst is a pipe or a socket).
	lines bool

	mu      sync.Mutex
	pending []byte // written by loggers, not yet taken by the goroutine
	spare   []byte // the goroutine's last batch, reused
	closed  bool
	busy    bool // a batch is being written
	// unreported counts drops not yet passed to onDrop.
	unreported uint64
	// flushed is closed and replaced each time the goroutine finds
	// nothing pending; Flush waits on it.
	flushed chan struct{}

	dropped atomic.Uint64
	onDrop  atomic.Pointer[func(uint64)]

	wake  chan struct{}
	hurry chan struct{} // the buffer is half full: end the rest early
	stop  chan struct{}
	done  chan struct{}
}

// NewWriter starts a Writer in front of dst that buffers at most max
// bytes (DefaultBuffer when max ≤ 0). Memory use is at most about twice
// max: the batch being written and the lines waiting behind it.
func NewWriter(dst io.Writer, max int) *Writer {
	if max <= 0 {
		max = DefaultBuffer
	}
	w := &Writer{
		dst:     dst,
		max:     max,
		lines:   shared(dst),
		flushed: make(chan struct{}),
		wake:    make(chan struct{}, 1),
		hurry:   make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go w.run()
	return w
}

// OnDrop sets a function called, from the writer's goroutine, with the
// number of writes dropped since the last call, once the destination
// accepts data again (for example to log a warning through this writer).
func (w *Writer) OnDrop(f func(lines uint64)) { w.onDrop.Store(&f) }

// Dropped is the number of writes dropped so far because the buffer was
// full (or the writer closed).
func (w *Writer) Dropped() uint64 { return w.dropped.Load() }

// Write buffers p, or drops it when the buffer is full. It never blocks on
// the destination and always reports success, so that a logger does not
// turn a slow destination into errors of its own.
func (w *Writer) Write(p []byte) (int, error) {
	b, ok := w.beginLine()
	switch {
	case !ok:
	case len(b)+len(p) > w.max:
		w.dropUnlock() // without copying p first
	default:
		w.endLine(append(b, p...))
	}
	return len(p), nil
}

// beginLine locks w for a line formatted straight into its buffer: the
// caller appends the line to the slice returned and hands the result to
// endLine, which unlocks. Nothing is copied and no buffer is borrowed, at
// the price of formatting under the lock, so the caller appends only (no
// logging, nothing that can block). When w is closed it returns false
// with w unlocked, and the line counts as dropped.
func (w *Writer) beginLine() ([]byte, bool) {
	w.mu.Lock()
	if w.closed {
		w.dropUnlock()
		return nil, false
	}
	return w.pending, true
}

// dropUnlock counts a dropped write and unlocks w.
func (w *Writer) dropUnlock() {
	w.unreported++
	w.mu.Unlock()
	w.dropped.Add(1)
}

// endLine takes b, the buffer beginLine returned with one line appended,
// and unlocks w. A line that would take the buffer past its bound is
// dropped, as Write drops it.
func (w *Writer) endLine(b []byte) {
	n := len(w.pending)
	if len(b) > w.max {
		w.pending = b[:n] // keep any room the append made
		w.dropUnlock()
		return
	}
	half := n <= w.max/2 && len(b) > w.max/2
	w.pending = b
	w.mu.Unlock()
	w.signal(n == 0, half)
}

// signal wakes the goroutine for a first pending line and hurries it when
// the buffer passed half full.
func (w *Writer) signal(first, half bool) {
	if first {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	if half {
		select {
		case w.hurry <- struct{}{}:
		default:
		}
	}
}

// Sync waits, up to a second, for what is buffered to reach the
// destination; zap calls it before a fatal exit.
func (w *Writer) Sync() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return w.Flush(ctx)
}

// Flush waits until everything written before it has been passed to the
// destination, or ctx is done.
func (w *Writer) Flush(ctx context.Context) error {
	w.mu.Lock()
	if len(w.pending) == 0 && !w.busy {
		w.mu.Unlock()
		return nil
	}
	ch := w.flushed
	w.mu.Unlock()
	// The goroutine may be resting after a write: whoever flushes wants
	// the lines out now.
	select {
	case w.hurry <- struct{}{}:
	default:
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-w.done:
		return nil
	}
}

// Close stops taking lines, writes what is buffered and stops the
// goroutine. If the destination is still blocked when ctx is done, Close
// returns ctx's error and the buffered lines are lost; the goroutine then
// ends when the destination's Write returns.
func (w *Writer) Close(ctx context.Context) error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.stop)
	}
	w.mu.Unlock()
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *Writer) run() {
	defer close(w.done)
	timer := time.NewTimer(FlushDelay)
	timer.Stop()
	for {
		select {
		case <-w.wake:
		case <-w.stop:
			w.drain()
			return
		}
		w.drain()
		// Then rest a moment: the lines of a busy moment gather behind
		// this write, so that the next system call (and wake-up of this
		// goroutine) carries many of them; a write to a file costs about
		// as much for one line as for thousands. A line after a quiet
		// spell goes out at once; a buffer half full ends the rest.
		select {
		case <-w.hurry:
		default:
		}
		timer.Reset(FlushDelay)
		select {
		case <-timer.C:
		case <-w.hurry:
			timer.Stop()
		case <-w.stop:
			w.drain()
			return
		}
	}
}

// drain writes batches until nothing is pending.
func (w *Writer) drain() {
	for {
		w.mu.Lock()
		if len(w.pending) == 0 {
			w.busy = false
			close(w.flushed)
			w.flushed = make(chan struct{})
			n := w.unreported
			w.unreported = 0
			w.mu.Unlock()
			if f := w.onDrop.Load(); n > 0 && f != nil {
				(*f)(n)
			}
			return
		}
		batch := w.pending
		w.pending = w.spare[:0]
		w.spare = batch
		w.busy = true
		w.mu.Unlock()
		if w.lines {
			writeLines(w.dst, batch)
		} else {
			// A destination error has nowhere better to go: the log is
			// the place errors are reported.
			_, _ = w.dst.Write(batch)
		}
	}
}

// shared reports whether dst is a pipe or a socket: a destination that
// other processes may write to at the same time, where only small writes
// are atomic.
func shared(dst io.Writer) bool {
	f, ok := dst.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0
}

// writeLines writes batch, whole lines, in writes of at most
// AtomicWrite bytes (a longer line alone in its write).
func writeLines(dst io.Writer, batch []byte) {
	for len(batch) > 0 {
		n := len(batch)
		if n > AtomicWrite {
			if i := bytes.LastIndexByte(batch[:AtomicWrite], '\n'); i >= 0 {
				n = i + 1
			} else if i := bytes.IndexByte(batch, '\n'); i >= 0 {
				n = i + 1
			}
		}
		if _, err := dst.Write(batch[:n]); err != nil {
			return // as above: nowhere better to report it
		}
		batch = batch[n:]
	}
}
