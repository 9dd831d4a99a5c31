#!/usr/bin/env bash
# The memory rows of make bench (the server's resident set, VmRSS and its
# peak VmHWM from /proc/PID/status):
#
#  1. per input element type: svc serve testdata/models/vectors.onnx (a 1-D
#     input of every type), loaded by svc bench --url at concurrency
#     MEM_CONC with bodies of about 1 MiB in one type (the other inputs one
#     element long); idle RSS before, peak RSS after. One fresh server per
#     type.
#  2. requests held in flight, and after the burst: svc serve
#     testdata/models/slow.onnx (seconds per run at this batch), warmed up
#     with one request, then MEM_INFLIGHT concurrent requests of about
#     1 MiB each (most of them wait for a session with their input decoded);
#     idle RSS before, peak during, then RSS every second for MEM_SETTLE
#     seconds after the last answer. Twice: with the defaults, and with the
#     idle reclaimer off (runtime.release_memory_after: 0s), which shows
#     what the reclaimer gives back.
#
# build/bench.sh runs it; it also runs alone (then build/benchreport reports
# what it wrote). Writes $OUT/mem-type-T.json (svc bench),
# mem-type-T.rss.json, mem-type-T.mprof and mem-type-T.alloc.txt (Go's
# allocation profile of the server, and its top sites by bytes),
# mem-inflight.json, mem-inflight.rss.json and
# mem-inflight.metrics.txt (Go's heap figures after the burst), and the
# same as mem-inflight-noreclaim.*;
# appends to commands.txt. Knobs: SVC, OUT, MEM_TYPES (all 14), MEM_CONC
# (4), MEM_DURATION (2s), MEM_INFLIGHT (16), MEM_SLOW_BATCH (384 rows of
# 256 floats, about 1 MiB), MEM_BURST (3s), MEM_SETTLE (5), MEM_ENV (extra
# NAME=VALUE words for the servers, e.g. GOMEMLIMIT=200MiB). A short
# look: MEM_TYPES='f32 str' MEM_DURATION=1s MEM_BURST=1s MEM_SETTLE=2.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=build/bench-lib.sh
. build/bench-lib.sh

SVC=${SVC:-build/bin/svc}
OUT=${OUT:-build/artifacts/bench}
MEM_TYPES=${MEM_TYPES:-f32 f64 f16 bf16 i8 i16 i32 i64 u8 u16 u32 u64 bool str}
MEM_CONC=${MEM_CONC:-4}
MEM_DURATION=${MEM_DURATION:-2s}
MEM_INFLIGHT=${MEM_INFLIGHT:-16}
MEM_SLOW_BATCH=${MEM_SLOW_BATCH:-384}
MEM_BURST=${MEM_BURST:-3s}
MEM_SETTLE=${MEM_SETTLE:-5}
SERVER_ENV=${MEM_ENV:-}
GO=${GO:-go}
VECTORS=testdata/models/vectors.onnx
SLOW=testdata/models/slow.onnx
ALL_TYPES="f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool f16 bf16 str"

die() { echo "bench-memory: $*" >&2; exit 1; }
[ -x "$SVC" ] || die "$SVC missing: run 'make build'"
[ -f "$VECTORS" ] && [ -f "$SLOW" ] || die "$VECTORS or $SLOW missing: run 'make genmodels'"
bench_start bench-memory

# elements T: how many elements of type T make a body of about 1 MiB (the
# JSON of svc bench's random values: floats in [0,1) with their shortest
# digits, integers 0-9, true/false, words of 3-8 letters).
elements() {
	case $1 in
	f32) echo 96000 ;;
	f64) echo 52000 ;;
	f16) echo 150000 ;;
	bf16) echo 180000 ;;
	bool) echo 190000 ;;
	str) echo 125000 ;;
	*) echo 500000 ;;
	esac
}

status=0
# 1. Per element type.
for t in $MEM_TYPES; do
	case " $ALL_TYPES " in *" $t "*) ;; *) die "unknown type $t (one of: $ALL_TYPES)" ;; esac
	shapes=()
	for o in $ALL_TYPES; do
		if [ "$o" = "$t" ]; then shapes+=(--shape "$o=$(elements "$o")"); else shapes+=(--shape "$o=1"); fi
	done
	pre=$OUT/mem-type-$t
	# Go's allocation profile of the run, written when the server stops:
	# where the memory over idle was allocated.
	show "${SERVER_ENV:+$SERVER_ENV }SVC_MEMPROFILE=$pre.mprof $SVC serve $VECTORS --host 127.0.0.1 --port 0 &"
	SERVER_ENV="${SERVER_ENV:+$SERVER_ENV }SVC_MEMPROFILE=$pre.mprof" start_server "$pre.serve.out" "$VECTORS" || { status=1; continue; }
	proc_kib "$SERVER_PID" VmRSS
	idle=$KIB
	show "$SVC bench --url $SERVER_URL ${shapes[*]} --concurrency $MEM_CONC --duration $MEM_DURATION --warmup 0s --no-raw --json > $pre.json"
	if run "$SVC" bench --url "$SERVER_URL" "${shapes[@]}" --concurrency "$MEM_CONC" --duration "$MEM_DURATION" \
		--warmup 0s --no-raw --json >"$pre.json" 2>>"$OUT/memory.log"; then
		proc_kib "$SERVER_PID" VmHWM
		show "grep -E 'VmRSS|VmHWM' /proc/$SERVER_PID/status   # idle $idle kB before, peak $KIB kB after"
		printf '{"type": "%s", "elements": %s, "concurrency": %s, "idle_kib": %s, "peak_kib": %s}\n' \
			"$t" "$(elements "$t")" "$MEM_CONC" "$idle" "$KIB" >"$pre.rss.json"
	else
		echo "bench-memory: type $t: svc bench failed: $(tail -n 2 "$OUT/memory.log")" >&2
		rm -f "$pre.json"
		status=1
	fi
	stop_server
	rm -f "$pre.serve.out.err"
	if [ -f "$pre.rss.json" ]; then
		show "$GO tool pprof -sample_index=alloc_space -top -nodecount=12 $pre.mprof > $pre.alloc.txt"
		"$GO" tool pprof -sample_index=alloc_space -top -nodecount=12 "$pre.mprof" >"$pre.alloc.txt" 2>/dev/null ||
			{ echo "bench-memory: type $t: no allocation profile" >&2; rm -f "$pre.alloc.txt"; }
	fi
done

# 2. In flight and after the burst: inflight VARIANT [SERVE_ARGS...]
#    ("" for the defaults).
inflight() {
	local pre=$OUT/mem-inflight${1:+-$1} shape="x=$MEM_SLOW_BATCH,256" idle peak end after=() i
	shift
	show "${SERVER_ENV:+$SERVER_ENV }$SVC serve $SLOW${*:+ $*} --host 127.0.0.1 --port 0 &"
	start_server "$pre.serve.out" "$SLOW" "$@" || return 1
	show "$SVC bench --url $SERVER_URL --shape $shape --concurrency 1 --requests 1 --warmup 0s --no-raw --json > $pre-warm.json"
	run "$SVC" bench --url "$SERVER_URL" --shape "$shape" --concurrency 1 --requests 1 --warmup 0s --no-raw --json \
		>"$pre-warm.json" 2>>"$OUT/memory.log" || return 1
	sleep 1
	proc_kib "$SERVER_PID" VmRSS
	idle=$KIB
	# Reset the peak (VmHWM) to the current RSS: the peak is the burst's.
	echo 5 >"/proc/$SERVER_PID/clear_refs" 2>/dev/null
	show "echo 5 > /proc/$SERVER_PID/clear_refs   # idle $idle kB; resets VmHWM"
	show "$SVC bench --url $SERVER_URL --shape $shape --concurrency $MEM_INFLIGHT --duration $MEM_BURST --timeout 2m --warmup 0s --no-raw --json > $pre.json"
	run "$SVC" bench --url "$SERVER_URL" --shape "$shape" --concurrency "$MEM_INFLIGHT" --duration "$MEM_BURST" \
		--timeout 2m --warmup 0s --no-raw --json >"$pre.json" 2>>"$OUT/memory.log" || return 1
	proc_kib "$SERVER_PID" VmHWM
	peak=$KIB
	proc_kib "$SERVER_PID" VmRSS
	end=$KIB
	for i in $(seq 1 "$MEM_SETTLE"); do
		sleep 1
		proc_kib "$SERVER_PID" VmRSS
		after+=("$KIB")
	done
	show "grep VmRSS /proc/$SERVER_PID/status   # peak $peak kB, at the end $end kB, then each second: ${after[*]}"
	# Go's own view of its heap at that moment (the Prometheus exposition
	# of GET /metrics; bash's /dev/tcp, so nothing else is needed).
	show "GET $SERVER_URL/metrics (Accept: text/plain) | grep go_memstats > $pre.metrics.txt"
	metrics "$SERVER_URL" | grep '^go_memstats_' >"$pre.metrics.txt"
	local list
	list=$(
		IFS=,
		echo "${after[*]}"
	)
	printf '{"batch": %s, "concurrency": %s, "idle_kib": %s, "peak_kib": %s, "end_kib": %s, "after_kib": [%s], "env": "%s"}\n' \
		"$MEM_SLOW_BATCH" "$MEM_INFLIGHT" "$idle" "$peak" "$end" "$list" "$SERVER_ENV" >"$pre.rss.json"
	show "kill -TERM $SERVER_PID"
	stop_server
	rm -f "$pre.serve.out.err"
}
mkdir -p "$OUT/cfg"
printf 'runtime:\n  release_memory_after: 0s\n' >"$OUT/cfg/noreclaim.yml"
show "printf 'runtime:\\n  release_memory_after: 0s\\n' > $OUT/cfg/noreclaim.yml"
for variant in "" noreclaim; do
	args=()
	[ -n "$variant" ] && args=(-c "$OUT/cfg/$variant.yml")
	if ! inflight "$variant" ${args[@]+"${args[@]}"}; then
		echo "bench-memory: in-flight run ${variant:-defaults} failed: $(tail -n 2 "$OUT/memory.log")" >&2
		[ -n "${SERVER_PID:-}" ] && stop_server
		SERVER_PID=
		status=1
	fi
done
exit $status
