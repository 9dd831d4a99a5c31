#!/usr/bin/env bash
# make bench: the Go micro-benchmarks; svc bench on a tiny generated model
# and on PaddleOCR cls; PaddleOCR cls and det through the v1 and v2
# protocols (build/bench-protocols.sh); image preprocessing against OpenCV
# and PaddleOCR rec end to end, a posted picture against its tensor
# (build/bench-images.sh); the raw baseline (best of batch 1,
# batch 8 and one single-threaded session per core, in process) of the tiny
# model, cls and det, with svc bench and wrk against it and the CPU both
# sides used (build/bench-served.sh); the same with the server and the
# load generator on separate cores (build/bench-pinned.sh); memory checks
# of the server (RSS over many requests; per input type, in flight and
# after a burst: build/bench-memory.sh); dynamic batching and session
# settings (threads, spinning, workers) on PaddleOCR cls, measured in short
# interleaved repetitions, and batching on and off at concurrency 1 on two
# servers side by side; ONNX Runtime in process at batch 1, 8 and 32; CPU
# profiles of the server with the load generator's share of the CPU (also
# cls and det at concurrency 16 through v1 and v2 binary tensors, and the
# tiny model at 16 with the access log on and off), each with the share of
# the server's CPU in the parts PROF_FOCUS names; the tiny model's tail
# latency at concurrency 4 under a few variants (build/bench-tail.sh);
# then the generated tables of BENCHMARKS.md at the repository root
# (build/benchreport replaces the part between <!-- bench:begin --> and
# <!-- bench:end -->; the hand-written analysis and the soak's section
# stay). Artifacts go to build/artifacts/bench/. About 18 minutes on 2
# cores; re-runnable; every server it starts is stopped, also on Ctrl-C.
#
# Needs build/bin/svc, build/models and wrk (make bench runs 'make build
# models' and build/bench-deps.sh first). GO and SVC override the go
# command and the svc binary; REPS the rounds of the batching and tuning
# runs and of BenchmarkRaw by batch size (5); SIDE_PAIRS the pairs of
# side-by-side runs (8); GO_BENCHTIME the Go benchmarks' -benchtime (1s);
# DURATION and WARMUP the svc bench sweeps' (4s, 1s), TUNE_DURATION and
# TUNE_WARMUP the tuning runs' (2s, 500ms), SIDE_DURATION the side-by-side
# runs' (3s) and PROFILE_DURATION the profiled runs' (4s).
# build/bench-served.sh and build/bench-memory.sh have knobs of their own
# (SERVED_*, RAW_*, MEM_*), passed on from the environment, as have
# build/bench-pinned.sh (PIN_*), build/bench-protocols.sh (PROTO_*),
# build/bench-images.sh (IMG_*) and
# build/bench-tail.sh (TAIL_*). A short look at every step (a few
# minutes; the figures mean little; wrk takes SERVED_DURATION and
# TAIL_DURATION in whole seconds):
#
#   GO_BENCHTIME=1x DURATION=500ms WARMUP=100ms TUNE_DURATION=300ms \
#   TUNE_WARMUP=100ms REPS=2 SIDE_PAIRS=2 SIDE_DURATION=300ms \
#   PROFILE_DURATION=1s SERVED_DURATION=1s SERVED_WARMUP=100ms \
#   SERVED_LEVELS=1,16 RAW_REPS=1 RAW_DURATION=300ms PROTO_DURATION=500ms \
#   PROTO_WARMUP=100ms PROTO_LEVELS=1,16 PIN_DURATION=500ms PIN_WARMUP=100ms \
#   IMG_PAIRS=1 IMG_DURATION=1s IMG_WARMUP=300ms IMG_PREPROCESS=0 \
#   PIN_REPS=1 MEM_DURATION=500ms MEM_BURST=1s MEM_SETTLE=2 \
#   TAIL_DURATION=1s build/bench.sh
set -uo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
SVC=${SVC:-build/bin/svc}
REPS=${REPS:-5}
OUT=build/artifacts/bench
TINY=testdata/models/classifier.onnx
CLS=build/models/paddleocr-cls
DET=build/models/paddleocr-det
DURATION=${DURATION:-4s}
WARMUP=${WARMUP:-1s}
TUNE_DURATION=${TUNE_DURATION:-2s}
TUNE_WARMUP=${TUNE_WARMUP:-500ms}
SIDE_PAIRS=${SIDE_PAIRS:-8}
SIDE_DURATION=${SIDE_DURATION:-3s}
PROFILE_DURATION=${PROFILE_DURATION:-4s}
GO_BENCHTIME=${GO_BENCHTIME:-1s}
# PROF_FOCUS: the parts of the server's CPU measured in every profile, as
# LABEL=REGEX (go tool pprof -focus: the samples whose stack has a
# function the expression matches): request validation and the access
# log (the line written in the handler and the goroutine that writes the
# lines out).
PROF_FOCUS=(validation='ValidateBody' access-log='accessLogger|transport/log\.')

# Processes this script started (servers, svc bench, the benchmark's test
# binary) go in CHILDREN and are stopped on exit, whatever the exit; run,
# start_server, stop_server, proc_ticks, children_cpu, find_lib,
# ensure_rawbench, raw_bench, the PaddleOCR shapes (CLS_SHAPE, DET_SHAPE)
# and show (a command as it appears in BENCHMARKS.md) come from there too.
# shellcheck source=build/bench-lib.sh
. build/bench-lib.sh

die() { echo "bench: $*" >&2; exit 1; }
[ -x "$SVC" ] || die "$SVC missing: run 'make build'"
[ -f "$TINY" ] || die "$TINY missing: run 'make genmodels'"
[ -f "$CLS/model.onnx" ] || die "$CLS/model.onnx missing: run 'make models'"
find_lib
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)

rm -rf "$OUT"
mkdir -p "$OUT/cfg"
: >"$OUT/commands.txt"
: >"$OUT/env.txt"
failed=0

trap bench_cleanup EXIT
# fd 3: the terminal's stderr, for the trap (it may run inside a function
# whose stderr goes to a log).
exec 3>&2
trap 'echo "bench: interrupted" >&3; exit 130' INT TERM

env_line() { printf '%s: %s\n' "$1" "$2" >>"$OUT/env.txt"; }
# step NAME STATUS: record a step's exit status.
step() {
	env_line "$1_status" "$2"
	if [ "$2" != 0 ]; then
		echo "bench: $1 failed with status $2" >&2
		failed=1
	fi
}

env_line date "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
env_line commit "$(git describe --always --dirty 2>/dev/null || echo unknown)"
env_line svc "$("$SVC" version 2>/dev/null | head -n1)"
env_line onnxruntime "$("$SVC" version 2>/dev/null | awk '$1 == "onnxruntime" {print $1, $2}')"
env_line load_before "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
env_line reps "$REPS"
start_time=$SECONDS

# 1. Go benchmarks: every package with a Benchmark function.
# (cmd/svc's BenchmarkSequenceStreams runs in its own step, 6c.)
pkgs=$(grep -rl --include='*_test.go' '^func Benchmark' core openapi transport cmd providers 2>/dev/null |
	xargs -r -n1 dirname | sort -u | grep -vx cmd/svc | sed 's|^|./|' | tr '\n' ' ')
show "go test -run '^\$' -bench . -benchmem -benchtime $GO_BENCHTIME ${pkgs% }"
# shellcheck disable=SC2086 # one word per package
"$GO" test -run '^$' -bench . -benchmem -benchtime "$GO_BENCHTIME" $pkgs 2>&1 | tee "$OUT/go-bench.txt"
step go_bench "${PIPESTATUS[0]}"

# 2. svc bench on the tiny model and on PaddleOCR cls (the server is
#    started by svc bench; progress goes to the terminal and the .log).
show "$SVC bench $TINY --concurrency 1,2,4,8,16,32 --duration $DURATION --warmup $WARMUP --json > $OUT/tiny.json"
run "$SVC" bench "$TINY" --concurrency 1,2,4,8,16,32 --duration "$DURATION" --warmup "$WARMUP" --json \
	>"$OUT/tiny.json" 2> >(tee "$OUT/tiny.log" >&2)
step tiny $?

show "$SVC bench $CLS --shape $CLS_SHAPE --concurrency 1,2,4,8 --duration $DURATION --warmup $WARMUP --json > $OUT/cls.json"
run "$SVC" bench "$CLS" --shape "$CLS_SHAPE" --concurrency 1,2,4,8 --duration "$DURATION" --warmup "$WARMUP" --json \
	>"$OUT/cls.json" 2> >(tee "$OUT/cls.log" >&2)
step cls $?

# 2b. PaddleOCR cls and det through each protocol (v1, v2 JSON, v2
#     binary), each against in-process ONNX Runtime in the same run.
run env SVC="$SVC" OUT="$OUT" build/bench-protocols.sh
step protocols $?

# Images: preprocessing against OpenCV, and PaddleOCR rec end to end, a
# picture posted against its tensor over v2 binary (build/bench-images.sh).
run env SVC="$SVC" OUT="$OUT" build/bench-images.sh
step images $?

# 2c. The raw baseline of the tiny model, cls and det, and svc bench and
#     wrk against it.
run env GO="$GO" SVC="$SVC" OUT="$OUT" build/bench-served.sh
step served $?

# 2d. cls and det with the server on one core and the load generator on
#     the other, against ONNX Runtime on that core alone.
run env GO="$GO" SVC="$SVC" OUT="$OUT" build/bench-pinned.sh
step pinned $?

# 3. Memory: the server's VmRSS after ~2,000 and ~20,000 requests.
memory() {
	local rss1 rss2
	show "$SVC serve $TINY --host 127.0.0.1 --port 0 &"
	start_server "$OUT/memory-serve.out" "$TINY" || return 1
	show "$SVC bench --url $SERVER_URL --concurrency 4 --requests 2000 --warmup 0s --no-raw --json > $OUT/memory-1.json"
	run "$SVC" bench --url "$SERVER_URL" --concurrency 4 --requests 2000 --warmup 0s --no-raw --json >"$OUT/memory-1.json" &&
		rss1=$(awk '$1 == "VmRSS:" {print $2}' "/proc/$SERVER_PID/status") &&
		show "grep VmRSS /proc/$SERVER_PID/status   # $rss1 kB" &&
		show "$SVC bench --url $SERVER_URL --concurrency 4 --requests 18000 --warmup 0s --no-raw --json > $OUT/memory-2.json" &&
		run "$SVC" bench --url "$SERVER_URL" --concurrency 4 --requests 18000 --warmup 0s --no-raw --json >"$OUT/memory-2.json" &&
		rss2=$(awk '$1 == "VmRSS:" {print $2}' "/proc/$SERVER_PID/status") &&
		show "grep VmRSS /proc/$SERVER_PID/status   # $rss2 kB" &&
		printf '{"rss_kib_1": %s, "rss_kib_2": %s}\n' "$rss1" "$rss2" >"$OUT/memory.json"
	local status=$?
	show "kill -TERM $SERVER_PID"
	stop_server
	rm -f "$OUT/memory-serve.out.err"
	return $status
}
memory
step memory $?

# 3b. Memory per input type, in flight and after a burst.
run env SVC="$SVC" OUT="$OUT" build/bench-memory.sh
step memory_load $?

# 4. Dynamic batching, session settings and the self-tuning controllers,
#    served: one configuration file per setting (the rest at the defaults),
#    REPS rounds, each running every setting once in a different order, so
#    that the machine's other load hits them alike; the report takes
#    medians and compares each setting with its group's defaults in the
#    same round. PaddleOCR cls: batching off or fixed at max_batch_size
#    (against the batch size controller), threads, spinning, workers, Go's
#    processors fixed at the cores and at one more (against the
#    Go-processor controller, which gives cls's long runs one more). The tiny model
#    (settings tiny_*, compared with tiny_default): Go's processors fixed at
#    one more than the cores, what the controller spares its short runs.
#    default, nobatch, fixedbatch and the tiny ones also run at concurrency
#    32.
# config NAME CONTENT: write a configuration file, showing the command.
config() {
	show "printf '$2' > $OUT/cfg/$1.yml"
	printf '%b' "$2" >"$OUT/cfg/$1.yml"
}
CORES=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc)
config default '# the built-in defaults: ONNX Runtime threads, spinning off, batching on (max_batch_size 32)\n'
config nobatch 'batching:\n  enabled: false\n'
config fixedbatch 'batching:\n  adaptive: false\n'
config threads1 'runtime:\n  intra_op_threads: 1\n'
config threads2 'runtime:\n  intra_op_threads: 2\n'
config spinning 'runtime:\n  spinning: true\n'
config procscores "runtime:\\n  go_procs: $CORES\\n"
config procsplus1 "runtime:\\n  go_procs: $((CORES + 1))\\n"
TUNE=(default nobatch fixedbatch threads1 threads2 spinning workers2 procscores procsplus1 tiny_default tiny_procsplus1)
tune_run() {
	local name=$1 rep=$2 cfg="$OUT/cfg/${1#tiny_}.yml" levels=1,8 model=$CLS shape=(--shape "$CLS_SHAPE") extra=()
	case $name in
	default | nobatch | fixedbatch) levels=1,8,32 ;;
	workers2) cfg="$OUT/cfg/default.yml" extra=(-- --workers 2) ;;
	tiny_*) levels=1,8,32 model=$TINY shape=() ;;
	esac
	if [ "$rep" = 1 ]; then
		show "$SVC bench $model ${shape[*]:+${shape[*]} }--concurrency $levels --duration $TUNE_DURATION --warmup $TUNE_WARMUP --no-raw -c $cfg --json${extra[*]:+ ${extra[*]}} > $OUT/tune-$name-r1.json   # and -r2 … -r$REPS, interleaved"
	fi
	echo "bench: tuning $name, round $rep of $REPS" >&2
	run "$SVC" bench "$model" ${shape[@]+"${shape[@]}"} --concurrency "$levels" --duration "$TUNE_DURATION" --warmup "$TUNE_WARMUP" \
		--no-raw -c "$cfg" --json "${extra[@]}" >"$OUT/tune-$name-r$rep.json" 2>>"$OUT/tune.log"
}
tune_status=0
for rep in $(seq 1 "$REPS"); do
	for i in "${!TUNE[@]}"; do
		tune_run "${TUNE[$(((i + rep - 1) % ${#TUNE[@]}))]}" "$rep" || tune_status=$?
	done
done
step tune $tune_status

# 4b. Side by side: two servers at once, a setting on and off, loaded in
#     turn by short svc bench runs at one concurrency, the order
#     alternating (on then off, off then on, ...), so that both meet the
#     same moments of the machine: the tuning rounds above run settings a
#     minute apart, and the load of a shared machine drifts by more than
#     what is being measured. Batching's cost at concurrency 1, and each
#     self-tuning controller against its switch, where it decides: the batch
#     size controller against merging up to max_batch_size (cls, 32), Go's
#     processors against one per core for cls's long runs (16) and against
#     one more than the cores for the tiny model's short ones (4).
# side_by_side NAME MODEL CONCURRENCY ON_CFG OFF_CFG [SVC BENCH ARGS...]:
# the two servers, the pairs of runs (side-NAME-on-rK.json,
# side-NAME-off-rK.json), both servers stopped.
side_by_side() {
	local name=$1 model=$2 conc=$3 on_cfg=$OUT/cfg/$4.yml off_cfg=$OUT/cfg/$5.yml on_pid on_url off_url rep side url order status=0
	shift 5
	start_server "$OUT/side-$name-on.serve.out" "$model" -c "$on_cfg" || return 1
	on_pid=$SERVER_PID on_url=$SERVER_URL
	if ! start_server "$OUT/side-$name-off.serve.out" "$model" -c "$off_cfg"; then
		SERVER_PID=$on_pid
		stop_server
		return 1
	fi
	off_url=$SERVER_URL
	show "$SVC serve $model -c $on_cfg & $SVC serve $model -c $off_cfg &   # side by side"
	show "$SVC bench --url URL${*:+ $*} --concurrency $conc --duration $SIDE_DURATION --warmup $TUNE_WARMUP --no-raw --json > $OUT/side-$name-on-r1.json   # then off, and so on to -r$SIDE_PAIRS, the order alternating"
	for rep in $(seq 1 "$SIDE_PAIRS"); do
		order="on off"
		[ $((rep % 2)) = 0 ] && order="off on"
		for side in $order; do
			url=$on_url
			[ "$side" = off ] && url=$off_url
			run "$SVC" bench --url "$url" "$@" --concurrency "$conc" --duration "$SIDE_DURATION" \
				--warmup "$TUNE_WARMUP" --no-raw --json >"$OUT/side-$name-$side-r$rep.json" 2>>"$OUT/side.log" || status=$?
		done
	done
	stop_server
	SERVER_PID=$on_pid
	stop_server
	rm -f "$OUT/side-$name-on.serve.out.err" "$OUT/side-$name-off.serve.out.err"
	return "$status"
}
side_status=0
side_by_side batching "$CLS" 1 default nobatch --shape "$CLS_SHAPE" || side_status=$?
side_by_side batchsize "$CLS" 32 default fixedbatch --shape "$CLS_SHAPE" || side_status=$?
side_by_side goprocs "$CLS" 16 default procscores --shape "$CLS_SHAPE" || side_status=$?
side_by_side tinyprocs "$TINY" 4 default procsplus1 || side_status=$?
step side $side_status

# 5. ONNX Runtime in process (no HTTP, no JSON), one session, default
#    settings, concurrency 1: rows/s at batch 1, 8 and 32 (BenchmarkRaw of
#    cmd/internal/bench), interleaved. (build/bench-served.sh built its
#    test binary; ensure_rawbench builds it only when that step did not.)
ensure_rawbench
raw_bench "$OUT/raw-batch.txt" "$REPS" batch=1,batch=8,batch=32 -test.benchtime 1500ms \
	-model "$CLS/model.onnx" -lib "$LIB" -shape "$CLS_SHAPE" -warmup 300ms
step raw_batch $?

# 6. CPU profiles: svc serve with SVC_CPUPROFILE (written when it stops on
#    SIGTERM), loaded by svc bench --url. The server's CPU (all its
#    threads, from /proc/PID/stat) and svc bench's (the shell's 'times')
#    are taken around the run: the load generator's share of the CPU.
#    pprof -top of each profile, and pprof -focus for each part of
#    PROF_FOCUS (every node shown, so that its header counts every sample
#    kept).
profile_run() {
	local name=$1 cfg=$2 model=$3
	shift 3
	local prof="$OUT/prof-$name.prof" t0 t1 k0 k1 ktotal status
	# shellcheck disable=SC2206 # PROF_SERVE: extra svc serve arguments, one per word
	local serve=(${PROF_SERVE:-})
	show "SVC_CPUPROFILE=$prof $SVC serve $model -c $cfg${serve[*]:+ ${serve[*]}} --host 127.0.0.1 --port 0 &"
	SERVER_ENV="SVC_CPUPROFILE=$prof" start_server "$OUT/prof-$name.serve.out" "$model" -c "$cfg" ${serve[@]+"${serve[@]}"} || return 1
	show "$SVC bench --url $SERVER_URL $* --warmup 0s --duration $PROFILE_DURATION --no-raw --json > $OUT/prof-$name.json"
	# Nothing between the two 'times' may fork but svc bench: it is the
	# only child that ends in this window.
	t0=$EPOCHREALTIME
	proc_ticks "$SERVER_PID"
	k0=$TICKS
	times >"$OUT/prof-$name.times0"
	run "$SVC" bench --url "$SERVER_URL" "$@" --warmup 0s --duration "$PROFILE_DURATION" --no-raw --json \
		>"$OUT/prof-$name.json" 2>>"$OUT/prof.log"
	status=$?
	times >"$OUT/prof-$name.times1"
	proc_ticks "$SERVER_PID"
	k1=$TICKS
	t1=$EPOCHREALTIME
	# The profile covers the server's whole life: its total CPU, just
	# before it stops, is the denominator of the shares.
	show "kill -TERM $SERVER_PID; $GO tool pprof -top -nodecount=25 $prof"
	stop_server
	rm -f "$OUT/prof-$name.serve.out.err"
	[ "$status" = 0 ] || return "$status"
	[ -s "$prof" ] || { echo "bench: $prof is empty" >&2; return 1; }
	ktotal=$k1
	awk -v k0="$k0" -v k1="$k1" -v kt="$ktotal" -v hz="$CLK_TCK" -v t0="$t0" -v t1="$t1" \
		-v b0="$(children_cpu "$OUT/prof-$name.times0")" -v b1="$(children_cpu "$OUT/prof-$name.times1")" 'BEGIN {
		printf "{\"wall_s\": %.3f, \"server_cpu_s\": %.2f, \"server_cpu_total_s\": %.2f, \"bench_cpu_s\": %.3f}\n", t1 - t0, (k1 - k0) / hz, kt / hz, b1 - b0
	}' >"$OUT/prof-$name.cpu.json" || return 1
	"$GO" tool pprof -top -nodecount=25 "$prof" >"$OUT/prof-$name.top.txt" 2>/dev/null || return 1
	local part
	for part in "${PROF_FOCUS[@]}"; do
		"$GO" tool pprof -top -nodefraction=0 -edgefraction=0 -nodecount=100000 -focus="${part#*=}" "$prof" \
			>"$OUT/prof-$name.focus-${part%%=*}.txt" 2>/dev/null || return 1
	done
}
prof_status=0
profile_run tiny-c1 "$OUT/cfg/default.yml" "$TINY" --concurrency 1 || prof_status=$?
profile_run cls-c4 "$OUT/cfg/default.yml" "$CLS" --shape "$CLS_SHAPE" --concurrency 4 || prof_status=$?
profile_run cls-c32-on "$OUT/cfg/default.yml" "$CLS" --shape "$CLS_SHAPE" --concurrency 32 || prof_status=$?
profile_run cls-c32-off "$OUT/cfg/nobatch.yml" "$CLS" --shape "$CLS_SHAPE" --concurrency 32 || prof_status=$?
# The served ÷ raw baseline targets at concurrency 16 (v1 JSON and v2
# binary tensors), the validation share on det, and the access log's cost
# at the tiny model's saturation, with the log on (the default, said
# explicitly) and off.
profile_run cls-c16 "$OUT/cfg/default.yml" "$CLS" --shape "$CLS_SHAPE" --concurrency 16 || prof_status=$?
profile_run det-c16 "$OUT/cfg/default.yml" "$DET" --shape "$DET_SHAPE" --concurrency 16 || prof_status=$?
profile_run cls-c16-bin "$OUT/cfg/default.yml" "$CLS" --shape "$CLS_SHAPE" --protocol v2-binary --concurrency 16 || prof_status=$?
profile_run det-c16-bin "$OUT/cfg/default.yml" "$DET" --shape "$DET_SHAPE" --protocol v2-binary --concurrency 16 || prof_status=$?
PROFILE_DURATION=12s PROF_SERVE="--access-log all" profile_run tiny-c16-log "$OUT/cfg/default.yml" "$TINY" --concurrency 16 || prof_status=$?
PROFILE_DURATION=12s PROF_SERVE="--access-log off" profile_run tiny-c16-nolog "$OUT/cfg/default.yml" "$TINY" --concurrency 16 || prof_status=$?
step profiles $prof_status

# 6b. Tail latency: the tiny model at concurrency 4 under wrk, with the
#     defaults and with one setting changed at a time.
run env GO="$GO" SVC="$SVC" OUT="$OUT" build/bench-tail.sh
step tail $?

# 6c. Sequences: 64 live audio streams of Silero VAD over gRPC streaming and
#     WebSocket, batching across sequences on and off; its own table in
#     BENCHMARKS.md (build/bench-sequences.sh).
run env GO="$GO" OUT="$OUT" build/bench-sequences.sh
step sequences $?

env_line load_after "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
env_line elapsed_s "$((SECONDS - start_time))"

# 7. BENCHMARKS.md: the generated tables (build/benchreport, a module of
#    its own) between its bench markers.
show "(cd build/benchreport && $GO run . -dir ../../$OUT -out ../../BENCHMARKS.md)"
(cd build/benchreport && "$GO" run . -dir "../../$OUT" -out ../../BENCHMARKS.md) || die "report failed"
echo "bench: wrote BENCHMARKS.md in $((SECONDS - start_time))s (artifacts in $OUT)" >&2
awk '/^<!-- bench:begin -->$/ {b = 1} b && /^## Served ÷ raw baseline at/ {on = 1} on && /^\|/ {print; rows = 1} rows && /^$/ {exit}' BENCHMARKS.md >&2
exit $failed
