package tensor

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func cpuTime(f func(), n int) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := threadCPU()
	for i := 0; i < n; i++ {
		f()
	}
	return (threadCPU() - t0) / time.Duration(n)
}

func TestAB(t *testing.T) {
	if os.Getenv("AB") == "" {
		t.Skip()
	}
	body := imageBody(1)
	fs := map[string]func([]byte, int) (uint64, int, bool, int, bool){
		"loop": fastDecimalLoop, "swar": fastDecimal, "two": fastDecimal2, "is8": fastDecimal3,
	}
	best := map[string]time.Duration{}
	for r := 0; r < 5; r++ {
		for name, f := range fs {
			d := cpuTime(func() {
				var s uint64
				p := 0
				for p < len(body) {
					c := body[p]
					if c == '-' || (c >= '0' && c <= '9') {
						m, e, _, end, _ := f(body, p)
						s += m + uint64(e)
						p = end
					} else {
						p++
					}
				}
				sink = s
			}, 50)
			if best[name] == 0 || d < best[name] {
				best[name] = d
			}
		}
	}
	for name, d := range best {
		fmt.Printf("%s %v %.0f MB/s\n", name, d, float64(len(body))/d.Seconds()/1e6)
	}
}
