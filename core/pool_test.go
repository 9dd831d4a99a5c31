package core

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/tensor"
)

// queueRecorder records the waits a pool reports.
type queueRecorder struct {
	NopObserver
	mu    sync.Mutex
	waits []time.Duration
}

func (q *queueRecorder) Queued(d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waits = append(q.waits, d)
}

func TestPoolBoundQueuesAndCancels(t *testing.T) {
	wd, _ := os.Getwd()
	pred, err := NewPredictor(Options{Name: "m", File: filepath.Join(filepath.Dir(wd), "testdata", "models", "classifier.onnx"), Runtime: config.Runtime{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pred.Close()
	pool, err := NewPool(pred)
	if err != nil {
		t.Fatal(err)
	}
	rec := &queueRecorder{}
	pool.SetObserver(rec)
	pool.Bound(1)
	in := []*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{1, 4}, Data: []float32{5.1, 3.5, 1.4, 0.2}}}

	// A free slot: the run goes at once.
	res, err := pool.Predict(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	res.Close()

	// The only slot is taken: a request whose client gives up while
	// waiting is canceled and never runs.
	pool.slots <- struct{}{}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := pool.Predict(ctx, in)
		errc <- err
	}()
	cancel()
	if err := <-errc; !errors.Is(err, ErrCanceled) {
		t.Fatalf("canceled while waiting: %v, want ErrCanceled", err)
	}

	// A request that waits runs once the slot frees, and reports its wait.
	done := make(chan error, 1)
	go func() {
		res, err := pool.Predict(context.Background(), in)
		if err == nil {
			res.Close()
		}
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("ran while the only slot was taken (err %v)", err)
	default:
	}
	<-pool.slots
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(pool.slots) != 0 {
		t.Fatalf("%d slots still held after every run", len(pool.slots))
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.waits) != 2 || rec.waits[0] != 0 || rec.waits[1] <= 0 {
		t.Fatalf("waits reported %v, want [0 >0] (the canceled request reports none)", rec.waits)
	}
}
