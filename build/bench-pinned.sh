#!/usr/bin/env bash
# The server's own cost, without the load generator on its cores: for
# PaddleOCR cls and det, ONNX Runtime in process (BenchmarkRaw of
# cmd/internal/bench: batch 1 at the default threads and one session of one
# thread) on CPU 0 alone, then svc serve pinned to CPU 0 and svc bench on
# CPU 1 through v1 JSON and v2 binary tensors. Served ÷ raw is then what
# the server keeps of ONNX Runtime on the one core it has; make bench's
# other rows share both cores between the server and the load generator.
# build/bench.sh runs it after build/bench-served.sh (whose test binary it
# reuses); it also runs alone:
#
#   build/bench-pinned.sh && (cd build/benchreport && go run . -out /tmp/BENCHMARKS.md)
#
# Skipped (exit 0, nothing written) without taskset or with fewer than 2
# CPUs. Writes $OUT/pinned-MODEL-raw.txt (BenchmarkRaw's result lines) and
# $OUT/pinned-MODEL-PROTOCOL.json (svc bench), and appends to commands.txt.
# Knobs: GO, SVC (build/bin/svc), OUT (build/artifacts/bench), PIN_MODELS
# (cls det), PIN_PROTOCOLS (v1 v2-binary), PIN_LEVELS (1,16), PIN_DURATION
# (4s; BenchmarkRaw's -test.benchtime too), PIN_WARMUP (1s), PIN_REPS (2),
# CLS_SHAPE, DET_SHAPE.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=build/bench-lib.sh
. build/bench-lib.sh

GO=${GO:-go}
SVC=${SVC:-build/bin/svc}
OUT=${OUT:-build/artifacts/bench}
PIN_MODELS=${PIN_MODELS:-cls det}
PIN_PROTOCOLS=${PIN_PROTOCOLS:-v1 v2-binary}
PIN_LEVELS=${PIN_LEVELS:-1,16}
PIN_DURATION=${PIN_DURATION:-4s}
PIN_WARMUP=${PIN_WARMUP:-1s}
PIN_REPS=${PIN_REPS:-2}
CPUS=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc)

die() { echo "bench-pinned: $*" >&2; exit 1; }
[ -x "$SVC" ] || die "$SVC missing: run 'make build'"
if ! command -v taskset >/dev/null 2>&1 || [ "$CPUS" -lt 2 ]; then
	echo "bench-pinned: skipped (needs taskset and 2 CPUs)" >&2
	exit 0
fi
bench_start bench-pinned

find_lib
ensure_rawbench

status=0
for name in $PIN_MODELS; do
	paddle_model "$name"
	pre=$OUT/pinned-$name
	rm -f "$pre"-*.json "$pre-raw.txt"

	if ! RAW_WRAP="taskset -c 0" raw_bench "$pre-raw.txt" "$PIN_REPS" batch=1,sessions=1x1 -test.benchtime "$PIN_DURATION" \
		-model "$model/model.onnx" -lib "$LIB" -shape "$shape" -warmup "$PIN_WARMUP" 2>>"$OUT/pinned.log"; then
		echo "bench-pinned: $name: the in-process run failed: $(tail -n 2 "$OUT/pinned.log")" >&2
		status=1
		continue
	fi

	show "taskset -c 0 $SVC serve $model --host 127.0.0.1 --port 0 &"
	SERVER_WRAP="taskset -c 0" start_server "$pre.serve.out" "$model" || { status=1; continue; }
	for proto in $PIN_PROTOCOLS; do
		file=$pre-$proto.json
		show "taskset -c 1 $SVC bench --url $SERVER_URL --shape $shape --protocol $proto --concurrency $PIN_LEVELS --duration $PIN_DURATION --warmup $PIN_WARMUP --no-raw --json > $file"
		if ! run taskset -c 1 "$SVC" bench --url "$SERVER_URL" --shape "$shape" --protocol "$proto" --concurrency "$PIN_LEVELS" \
			--duration "$PIN_DURATION" --warmup "$PIN_WARMUP" --no-raw --json >"$file" 2>>"$OUT/pinned.log"; then
			echo "bench-pinned: $name $proto failed: $(tail -n 3 "$OUT/pinned.log")" >&2
			rm -f "$file"
			status=1
		fi
	done
	show "kill -TERM $SERVER_PID"
	stop_server
	rm -f "$pre.serve.out.err"
done
exit $status
