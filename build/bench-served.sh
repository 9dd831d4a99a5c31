#!/usr/bin/env bash
# The served-vs-baseline rows of make bench. For each model (the tiny
# generated classifier, PaddleOCR cls and det):
#
#  1. the batch-1 request bodies svc bench sends (seed 1), for wrk
#     (TestRawBodies of cmd/internal/bench), and the raw baseline:
#     BenchmarkRaw in process (no HTTP, no JSON) at batch 1 and batch 8 on
#     one session with ONNX Runtime's default threads, and N sessions × 1
#     intra-op thread at batch 1 (N = the cores), each in its own closed
#     loop, the modes in a different order each repetition; the report
#     takes the best items/s of any repetition of any mode.
#  2. one svc serve with the defaults, loaded at each concurrency level
#     first by svc bench --url, then by wrk (build/bench-wrk.lua: the same
#     bodies, rotated; every non-200 answer counted), with the CPU time the
#     server and the load generator used over each run.
#
# build/bench.sh runs it; it also runs alone (then build/benchreport reports
# what it wrote):
#
#   build/bench-served.sh && (cd build/benchreport && go run . -out /tmp/BENCHMARKS.md)
#
# Writes to $OUT: bench.test (the test binary of cmd/internal/bench),
# bodies-MODEL/, served-MODEL-raw.txt (BenchmarkRaw's result lines),
# served-MODEL-svcbench-cC.json and served-MODEL-wrk-cC.json, each with a
# .cpu.json, and appends to commands.txt. A wrk run with a non-200 answer
# or a socket error fails the script (the report counts it). Knobs: GO,
# SVC (build/bin/svc), OUT (build/artifacts/bench), SERVED_MODELS (tiny
# cls det), SERVED_LEVELS (1,4,16), SERVED_DURATION (4s), SERVED_WARMUP
# (1s; wrk runs right after svc bench on the warm server, without one),
# RAW_REPS (3), RAW_DURATION (1500ms, BenchmarkRaw's -test.benchtime),
# RAW_WARMUP (300ms), CLS_SHAPE, DET_SHAPE. A short look:
# SERVED_DURATION=1s SERVED_WARMUP=200ms SERVED_LEVELS=1,4 RAW_REPS=1
# RAW_DURATION=500ms SERVED_MODELS=tiny.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=build/bench-lib.sh
. build/bench-lib.sh

GO=${GO:-go}
SVC=${SVC:-build/bin/svc}
OUT=${OUT:-build/artifacts/bench}
SERVED_MODELS=${SERVED_MODELS:-tiny cls det}
SERVED_LEVELS=${SERVED_LEVELS:-1,4,16}
SERVED_DURATION=${SERVED_DURATION:-4s}
SERVED_WARMUP=${SERVED_WARMUP:-1s}
RAW_REPS=${RAW_REPS:-3}
RAW_DURATION=${RAW_DURATION:-1500ms}
RAW_WARMUP=${RAW_WARMUP:-300ms}
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)
CPUS=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc)

die() { echo "bench-served: $*" >&2; exit 1; }
[ -x "$SVC" ] || die "$SVC missing: run 'make build'"
command -v wrk >/dev/null 2>&1 || die "wrk missing: run 'bash build/bench-deps.sh' (make bench does)"
bench_start bench-served

find_lib
ensure_rawbench

status=0
for name in $SERVED_MODELS; do
	case $name in
	tiny) model=testdata/models/classifier.onnx file=$model shape=input=1,4 ;;
	cls) model=build/models/paddleocr-cls file=$model/model.onnx shape=$CLS_SHAPE ;;
	det) model=build/models/paddleocr-det file=$model/model.onnx shape=$DET_SHAPE ;;
	*) die "unknown model $name (tiny, cls or det)" ;;
	esac
	[ -f "$file" ] || die "$file missing: run 'make models' (or 'make genmodels')"
	pre=$OUT/served-$name

	# 1. The bodies, and the raw baseline.
	rm -rf "$OUT/bodies-$name"
	rm -f "$pre-raw.txt"
	if ! raw_bodies "$OUT/bodies-$name" -model "$file" -lib "$LIB" -shape "$shape" 2>>"$OUT/served.log" ||
		! raw_bench "$pre-raw.txt" "$RAW_REPS" "batch=1,batch=8,sessions=${CPUS}x1" -test.benchtime "$RAW_DURATION" \
			-model "$file" -lib "$LIB" -shape "$shape" -warmup "$RAW_WARMUP" 2>>"$OUT/served.log"; then
		echo "bench-served: $name: the in-process run failed: $(tail -n 2 "$OUT/served.log")" >&2
		status=1
		continue
	fi

	# 2. One server, loaded by svc bench and by wrk at each level.
	show "$SVC serve $model --host 127.0.0.1 --port 0 &"
	start_server "$pre.serve.out" "$model" || { status=1; continue; }
	for c in ${SERVED_LEVELS//,/ }; do
		show "$SVC bench --url $SERVER_URL --shape $shape --concurrency $c --duration $SERVED_DURATION --warmup $SERVED_WARMUP --no-raw --json > $pre-svcbench-c$c.json"
		if ! with_cpu "$pre-svcbench-c$c.cpu.json" "$SVC" bench --url "$SERVER_URL" --shape "$shape" --concurrency "$c" \
			--duration "$SERVED_DURATION" --warmup "$SERVED_WARMUP" --no-raw --json >"$pre-svcbench-c$c.json" 2>>"$OUT/served.log"; then
			echo "bench-served: $name: svc bench at concurrency $c failed: $(tail -n 2 "$OUT/served.log")" >&2
			rm -f "$pre-svcbench-c$c.json"
			status=1
		fi
		threads=$((c < CPUS ? c : CPUS))
		show "WRK_BODIES=$OUT/bodies-$name WRK_OUT=$pre-wrk-c$c.json wrk -t$threads -c$c -d$SERVED_DURATION --timeout 30s -s build/bench-wrk.lua $SERVER_URL/predict"
		rm -f "$pre-wrk-c$c.json"
		WRK_BODIES=$OUT/bodies-$name WRK_OUT=$pre-wrk-c$c.json \
			with_cpu "$pre-wrk-c$c.cpu.json" wrk "-t$threads" "-c$c" "-d$SERVED_DURATION" --timeout 30s \
			-s build/bench-wrk.lua "$SERVER_URL/predict" >"$pre-wrk-c$c.txt" 2>>"$OUT/served.log"
		wst=$?
		if [ "$wst" != 0 ] || [ ! -s "$pre-wrk-c$c.json" ]; then
			echo "bench-served: $name: wrk at concurrency $c failed (status $wst): $(tail -n 2 "$OUT/served.log")" >&2
			status=1
		elif ! awk '/"non200": 0,/ && /"connect": 0, "read": 0, "write": 0, "status": 0, "timeout": 0/ {ok = 1} END {exit !ok}' "$pre-wrk-c$c.json"; then
			echo "bench-served: $name: wrk at concurrency $c had failed requests: $(cat "$pre-wrk-c$c.json")" >&2
			status=1
		fi
	done
	show "kill -TERM $SERVER_PID"
	stop_server
	rm -f "$pre.serve.out.err"
done
exit $status
