package sched

import "runtime"

// CPUPlan chooses ONNX Runtime's intra-op threads and the number of
// concurrent runs for a process that may use cores CPUs. Unless configured,
// a session gets half the cores (at least one): measured on 2 cores, one
// thread per run beat two by 11–34% in served latency and throughput,
// because the HTTP and JSON work needs the other core (BENCHMARKS.md). Runs
// in flight then fill the cores: cores / threads.
func CPUPlan(cores, configured int) (threads, slots int) {
	threads = configured
	if threads <= 0 {
		threads = max(1, cores/2)
	}
	return threads, max(1, cores/threads)
}

// goDefaultProcs is Go's own GOMAXPROCS, read before anything sets it.
var goDefaultProcs = runtime.GOMAXPROCS(0)

// Cores is how many CPUs this process may use: Go's default GOMAXPROCS,
// which counts the CPUs it may run on within a container's CPU limit, or,
// when the GOMAXPROCS variable overrides that default, the CPUs it may run
// on. CPUPlan and GoProcs start from it.
func Cores() int {
	if procsFixed() {
		return runtime.NumCPU()
	}
	return goDefaultProcs
}
