#!/usr/bin/env bash
# The payload logger's cost to requests when its receiver is well, down,
# refusing or slow (docs/logger.md: "a receiver that is down, slow or
# refusing costs the requests nothing"). The same load, svc bench at
# concurrency LOG_CONCURRENCY, against servers that svc bench starts:
# without a logger ("off"), and with models.NAME.logger sending every
# request and response to one of build/benchreport/logsink's receivers on
# 127.0.0.1: "ok" (answers 202 at once), "down" (nothing listens: the
# connection is refused), "503" (answers 503: retried, then dropped) and
# "slow" (answers after LOG_SLOW, within logger.timeout). Two loads:
# PaddleOCR cls (make models) over v2 binary tensors 1x3x48x192, and the
# tiny model (testdata/models/classifier.onnx) over v1 JSON (/predict).
# Each variant runs LOG_ROUNDS times per load, the order rotating per
# round; the table shows the medians of throughput, p50 and p99, the
# ratio to "off", the POSTs the receiver answered per run, and the load
# average, and replaces what is between <!-- bench-logger:begin --> and
# <!-- bench-logger:end --> in BENCHMARKS.md (build/benchreport -section).
#
# Knobs: SVC (build/bin/svc, with the ONNX Runtime library in its lib/),
# GO (go), OUT (build/artifacts/bench), LOG_ROUNDS (3), LOG_DURATION
# (4s), LOG_WARMUP (1s), LOG_CONCURRENCY (8), LOG_SLOW (3s), LOG_WRITE
# (1: write BENCHMARKS.md; 0: print the table only). Needs jq and curl.
#
#   build/bench-logger.sh
set -uo pipefail
cd "$(dirname "$0")/.."
die() { echo "bench-logger: $*" >&2; exit 1; }
# shellcheck source=build/bench-lib.sh
. build/bench-lib.sh

SVC=${SVC:-build/bin/svc}
GO=${GO:-go}
OUT=${OUT:-build/artifacts/bench}
LOG_ROUNDS=${LOG_ROUNDS:-3}
LOG_DURATION=${LOG_DURATION:-4s}
LOG_WARMUP=${LOG_WARMUP:-1s}
LOG_CONCURRENCY=${LOG_CONCURRENCY:-8}
LOG_SLOW=${LOG_SLOW:-3s}
LOG_WRITE=${LOG_WRITE:-1}
CLS=$PWD/build/models/paddleocr-cls
TINY=$PWD/testdata/models/classifier.onnx
mkdir -p "$OUT"
[ -d "$CLS" ] || die "no $CLS: run 'make models'"
find_lib
case $LIB in
/*) export ONNXRUNTIME_LIB=$LIB ;;
*) export ONNXRUNTIME_LIB=$PWD/$LIB ;;
esac

sink_bin=$(cd "$OUT" && pwd)/logsink
(cd build/benchreport && "$GO" build -o "$sink_bin" ./logsink) || die "cannot build build/benchreport/logsink"
"$sink_bin" -slow "$LOG_SLOW" >"$OUT/logger-sink.urls" 2>"$OUT/logger-sink.err" &
CHILDREN+=("$!")
for _ in $(seq 1 100); do
	[ -s "$OUT/logger-sink.urls" ] && break
	sleep 0.1
done
urls=$(head -1 "$OUT/logger-sink.urls")
[ -n "$urls" ] || die "the receivers did not start: $(cat "$OUT/logger-sink.err")"

runs=$OUT/logger-runs.jsonl
: >"$runs"
cfgs=$(mktemp -d)
trap 'bench_cleanup; rm -rf "$cfgs"' EXIT
# VARIANT.yml serves both models, with a logger to the variant's receiver
# (none for off). drain: 1s, so that a server svc bench stops with events
# still queued for a receiver that fails does not wait 5s.
variants=(off ok down 503 slow)
for v in "${variants[@]}"; do
	logger=
	if [ "$v" != off ]; then
		logger="    logger: {url: '$(jq -r --arg v "$v" '.[$v]' <<<"$urls")', drain: 1s}"
	fi
	printf 'models:\n  cls:\n    path: %s\n%s\n  tiny:\n    path: %s\n%s\n' "$CLS" "$logger" "$TINY" "$logger" >"$cfgs/$v.yml"
done

# posts VARIANT: the POSTs the variant's receiver has answered so far.
posts() {
	[ "$1" = off ] || [ "$1" = down ] && { echo 0; return; }
	curl -fsS "$(jq -r --arg v "$1" '.[$v]' <<<"$urls")count" || echo 0
}

# bench VARIANT LOAD ROUND: one svc bench run, appended to $runs as
# {variant, load, round, rps, p50_ms, p99_ms, errors, posts}.
bench() {
	local v=$1 load=$2 round=$3 report=$OUT/logger-$1-$2-$3.json model args p0 p1
	case $load in
	cls) model=cls args=(--protocol v2-binary --shape x=1,3,48,192) ;;
	tiny) model=tiny args=(--protocol v1) ;;
	esac
	p0=$(posts "$v")
	show "$SVC bench $model -c $cfgs/$v.yml ${args[*]} --concurrency $LOG_CONCURRENCY --duration $LOG_DURATION --warmup $LOG_WARMUP --no-raw --json"
	if ! run "$SVC" bench "$model" -c "$cfgs/$v.yml" "${args[@]}" --concurrency "$LOG_CONCURRENCY" \
		--duration "$LOG_DURATION" --warmup "$LOG_WARMUP" --no-raw --json >"$report" 2>"$report.err"; then
		echo "bench-logger: $v $load round $round failed: $(tail -3 "$report.err")" >&2
		return 1
	fi
	p1=$(posts "$v")
	jq -c --arg v "$v" --arg l "$load" --argjson r "$round" --argjson posts "$((p1 - p0))" \
		'.served[] | {variant: $v, load: $l, round: $r, rps: .throughput_rps, p50_ms: (.latency_us.p50 / 1000), p99_ms: (.latency_us.p99 / 1000), errors, posts: $posts}' \
		"$report" >>"$runs"
}

status=0
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$OUT/logger.load"
for round in $(seq 1 "$LOG_ROUNDS"); do
	for load in cls tiny; do
		for k in 0 1 2 3 4; do
			bench "${variants[$(((k + round) % 5))]}" "$load" "$round" || status=1
		done
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/logger.load"

rows=$(jq -rs --argjson order '{"off": 0, "ok": 1, "down": 2, "503": 3, "slow": 4}' '
	def med: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	def r2: . * 100 | round / 100;
	group_by(.load)[] | . as $g |
	($g | map(select(.variant == "off") | .rps) | med) as $off |
	($g | group_by(.variant) | sort_by($order[.[0].variant]))[] | . as $v |
	($v | map(.rps) | med) as $rps |
	"| \({cls: "PaddleOCR cls, v2 binary 1x3x48x192", tiny: "tiny model, v1 JSON"}[$v[0].load]) | \({off: "no logger", ok: "ok (202 at once)", down: "down (refused)", "503": "503", slow: "slow"}[$v[0].variant]) | \($rps | floor) | \(if $off then $rps / $off | r2 else "-" end) | \($v | map(.p50_ms) | med | r2) | \($v | map(.p99_ms) | med | r2) | \(if $v[0].variant == "off" or $v[0].variant == "down" then "-" else ($v | map(.posts) | med | floor) end) | \($v | map(.errors) | add) |"
' "$runs")
commit=$(git rev-parse --short HEAD)
table="## Payload logger: requests with the receiver well, down, refusing or slow (build/bench-logger.sh)

Run $(date -u +%Y-%m-%dT%H:%M:%SZ) at \`$commit\` on $(nproc) cores shared by the server, the load generator and the receivers ($(tr '\n' ' ' <"$OUT/logger.load")); medians of $LOG_ROUNDS rounds of $LOG_DURATION at concurrency $LOG_CONCURRENCY, the variants' order rotating per round. Each logger sends every request and response (build/benchreport/logsink's receivers on 127.0.0.1; slow answers after $LOG_SLOW); \"POSTs\": the events the receiver answered per run (median), warm-up and drain included. Command: \`build/bench-logger.sh\`.

| load | receiver | req/s | ÷ no logger | p50 ms | p99 ms | POSTs per run | errors |
|---|---|--:|--:|--:|--:|--:|--:|
$rows"
echo "$table"
if [ "$LOG_WRITE" = 1 ]; then
	printf '%s\n' "$table" >"$OUT/logger-table.md"
	tables=$(cd "$OUT" && pwd)
	(cd build/benchreport && "$GO" run . -out ../../BENCHMARKS.md -section bench-logger -table "$tables/logger-table.md") || status=1
fi
exit $status
