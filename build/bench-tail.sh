#!/usr/bin/env bash
# The tail-latency experiment of make bench: the tiny generated model at
# concurrency 4 under wrk (build/bench-wrk.lua), one short run per variant,
# each on a fresh server with one thing changed from the defaults:
#
#   default      svc serve MODEL
#   log-off      --access-log off
#   nobatch      -c (batching.enabled: false)
#   gomaxprocs1  GOMAXPROCS=1 in the server's environment
#   gogc400      GOGC=400 in the server's environment
#   pinned       the server on CPU 0 and wrk on CPU 1 (taskset; skipped
#                without taskset or with fewer than 2 CPUs)
#   pinned-nogc  pinned, and GOGC=off in the server's environment: what
#                is left of the tail without Go's garbage collection
#
# so that the report shows them side by side. Each run also
# times every request itself (WRK_LATENCY=1), next to wrk's figures, which
# carry wrk's correction for coordinated omission. build/bench.sh
# runs it after build/bench-served.sh (whose tiny-model request bodies it
# reuses; without them it writes its own with TestRawBodies of
# cmd/internal/bench). It also runs alone:
#
#   build/bench-tail.sh && (cd build/benchreport && go run . -out /tmp/BENCHMARKS.md)
#
# Writes $OUT/tail-VARIANT.json (wrk's summary) with a .cpu.json, a
# .sched.json (the server's threads' time on a core and time waiting for
# one, from /proc/PID/task/*/schedstat) and a .metrics.txt (the server's
# request-duration histogram after the run), and
# appends to commands.txt. Knobs: GO, SVC (build/bin/svc), OUT
# (build/artifacts/bench), TAIL_DURATION (4s), TAIL_CONCURRENCY (4),
# TAIL_VARIANTS (all of the above, in that order).
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=build/bench-lib.sh
. build/bench-lib.sh

GO=${GO:-go}
SVC=${SVC:-build/bin/svc}
OUT=${OUT:-build/artifacts/bench}
TAIL_DURATION=${TAIL_DURATION:-4s}
TAIL_CONCURRENCY=${TAIL_CONCURRENCY:-4}
TAIL_VARIANTS=${TAIL_VARIANTS:-default log-off nobatch gomaxprocs1 gogc400 pinned pinned-nogc}
MODEL=testdata/models/classifier.onnx
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)
CPUS=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc)

die() { echo "bench-tail: $*" >&2; exit 1; }
[ -x "$SVC" ] || die "$SVC missing: run 'make build'"
[ -f "$MODEL" ] || die "$MODEL missing: run 'make genmodels'"
command -v wrk >/dev/null 2>&1 || die "wrk missing: run 'bash build/bench-deps.sh' (make bench does)"
mkdir -p "$OUT/cfg"
bench_start bench-tail

BODIES=$OUT/bodies-tiny
if [ ! -s "$BODIES/1.json" ]; then
	find_lib
	ensure_rawbench
	raw_bodies "$BODIES" -model "$MODEL" -lib "$LIB" -shape input=1,4 2>>"$OUT/tail.log" ||
		die "TestRawBodies failed: $(tail -n 3 "$OUT/tail.log")"
fi
printf 'batching:\n  enabled: false\n' >"$OUT/cfg/tail-nobatch.yml"

status=0
for v in $TAIL_VARIANTS; do
	args=() SERVER_ENV= SERVER_WRAP= client=()
	case $v in
	default) ;;
	log-off) args=(--access-log off) ;;
	nobatch) args=(-c "$OUT/cfg/tail-nobatch.yml") ;;
	gomaxprocs1) SERVER_ENV=GOMAXPROCS=1 ;;
	gogc400) SERVER_ENV=GOGC=400 ;;
	pinned | pinned-nogc)
		if ! command -v taskset >/dev/null 2>&1 || [ "$CPUS" -lt 2 ]; then
			echo "bench-tail: $v: skipped (needs taskset and 2 CPUs)" >&2
			continue
		fi
		SERVER_WRAP="taskset -c 0" client=(taskset -c 1)
		[ "$v" = pinned ] || SERVER_ENV=GOGC=off
		;;
	*) die "unknown variant $v" ;;
	esac
	file=$OUT/tail-$v.json
	rm -f "$file"
	show "${SERVER_ENV:+$SERVER_ENV }${SERVER_WRAP:+$SERVER_WRAP }$SVC serve $MODEL${args[*]:+ ${args[*]}} --host 127.0.0.1 --port 0 &"
	start_server "$OUT/tail-$v.serve.out" "$MODEL" ${args[@]+"${args[@]}"} || { status=1; continue; }
	threads=$((TAIL_CONCURRENCY < CPUS ? TAIL_CONCURRENCY : CPUS))
	show "WRK_LATENCY=1 WRK_BODIES=$BODIES WRK_OUT=$file ${client[*]:+${client[*]} }wrk -t$threads -c$TAIL_CONCURRENCY -d$TAIL_DURATION --timeout 30s -s build/bench-wrk.lua $SERVER_URL/predict"
	proc_sched "$SERVER_PID"
	sched0=$SCHED
	WRK_LATENCY=1 WRK_BODIES=$BODIES WRK_OUT=$file with_cpu "${file%.json}.cpu.json" ${client[@]+"${client[@]}"} wrk "-t$threads" "-c$TAIL_CONCURRENCY" \
		"-d$TAIL_DURATION" --timeout 30s -s build/bench-wrk.lua "$SERVER_URL/predict" >"$OUT/tail-$v.txt" 2>>"$OUT/tail.log"
	wst=$?
	# The server's threads as the scheduler saw them: time on a core and
	# time waiting for one (none written when the server is gone).
	proc_sched "$SERVER_PID"
	awk -v a="$sched0" -v b="$SCHED" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		if (y[4] > 0)
			printf "{\"run_s\": %.4f, \"wait_s\": %.4f, \"slices\": %d, \"threads\": %d}\n", (y[1] - x[1]) / 1e9, (y[2] - x[2]) / 1e9, y[3] - x[3], y[4]
	}' >"${file%.json}.sched.json"
	[ -s "${file%.json}.sched.json" ] || rm -f "${file%.json}.sched.json"
	if [ "$wst" != 0 ] || [ ! -s "$file" ]; then
		echo "bench-tail: $v: wrk failed (status $wst): $(tail -n 2 "$OUT/tail.log")" >&2
		status=1
	elif ! awk '/"non200": 0,/ && /"connect": 0, "read": 0, "write": 0, "status": 0, "timeout": 0/ {ok = 1} END {exit !ok}' "$file"; then
		echo "bench-tail: $v: wrk had failed requests: $(cat "$file")" >&2
		status=1
	fi
	# The server's own view: how long each request took from reading it
	# to answering it.
	# and how many garbage collections it ran since it started.
	show "GET $SERVER_URL/metrics (Accept: text/plain) | grep -E 'svc_inference_request_duration_seconds|go_gc_duration_seconds' > $OUT/tail-$v.metrics.txt"
	metrics "$SERVER_URL" | grep -E '^(# (HELP|TYPE) )?(svc_inference_request_duration_seconds|go_gc_duration_seconds)' >"$OUT/tail-$v.metrics.txt"
	show "kill -TERM $SERVER_PID"
	stop_server
	rm -f "$OUT/tail-$v.serve.out.err"
done
exit $status
