#!/usr/bin/env bash
# Tracing's cost: the tiny model (testdata/models/classifier.onnx) served by
# two servers at once, one with tracing off, one with tracing on, every
# request sampled (OTEL_TRACES_SAMPLER=always_on) and exported over
# OTLP/HTTP to a local receiver (a Python HTTP server that accepts every
# export), loaded in turn by svc bench at TRC_CONCURRENCY over v1 /predict,
# the order alternating within each of TRC_PAIRS pairs. Prints the table
# and, with TRC_WRITE=1, writes it into BENCHMARKS.md between
# <!-- bench-tracing:begin --> and <!-- bench-tracing:end -->. Goal: on costs
# at most 3 % of the throughput (on ÷ off ≥ 0.97).
#
# Knobs: OUT (build/artifacts/bench), SVC (build/bin/svc), TRC_PAIRS (6),
# TRC_DURATION (3s), TRC_WARMUP (1s), TRC_CONCURRENCY (8). Needs jq,
# python3.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=build/bench-lib.sh
. build/bench-lib.sh

OUT=${OUT:-build/artifacts/bench}
SVC=${SVC:-build/bin/svc}
TRC_PAIRS=${TRC_PAIRS:-6}
TRC_DURATION=${TRC_DURATION:-3s}
TRC_WARMUP=${TRC_WARMUP:-1s}
TRC_CONCURRENCY=${TRC_CONCURRENCY:-8}
model=testdata/models/classifier.onnx

die() { echo "bench-tracing: $*" >&2; exit 1; }
[ -x "$SVC" ] || die "$SVC missing: make build"
command -v jq >/dev/null || die "jq missing (ci/install-deps.sh installs it)"
command -v python3 >/dev/null || die "python3 missing"
mkdir -p "$OUT"
trap bench_cleanup EXIT

# The receiver: answers every POST with an empty ExportTraceServiceResponse
# (zero protobuf bytes), after reading the whole body.
python3 -c '
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
' >"$OUT/tracing-receiver.port" 2>"$OUT/tracing-receiver.err" &
CHILDREN+=("$!")
for _ in $(seq 1 100); do
	[ -s "$OUT/tracing-receiver.port" ] && break
	sleep 0.1
done
port=$(head -1 "$OUT/tracing-receiver.port")
[ -n "$port" ] || die "the receiver did not start: $(cat "$OUT/tracing-receiver.err")"

start_server "$OUT/tracing-off.out" "$model" --access-log off || die "the server without tracing did not start"
URL_off=$SERVER_URL PID_off=$SERVER_PID
SERVER_ENV="OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$port OTEL_TRACES_SAMPLER=always_on" \
	start_server "$OUT/tracing-on.out" "$model" --access-log off || die "the server with tracing did not start"
URL_on=$SERVER_URL PID_on=$SERVER_PID

status=0
for rep in $(seq 1 "$TRC_PAIRS"); do
	order="off on"
	[ $((rep % 2)) = 0 ] && order="on off"
	for side in $order; do
		url=URL_$side
		run "$SVC" bench --url "${!url}" --shape input=1,4 --protocol v1 --concurrency "$TRC_CONCURRENCY" \
			--duration "$TRC_DURATION" --warmup "$TRC_WARMUP" --no-raw --json \
			>"$OUT/tracing-$side-r$rep.json" 2>>"$OUT/tracing.log" || status=1
	done
done
SERVER_PID=$PID_off stop_server
SERVER_PID=$PID_on stop_server
grep -q '"level":"error"' "$OUT/tracing-on.out.err" && echo "bench-tracing: the traced server logged errors (exports failed?)" >&2 && status=1

row=$(for f in "$OUT"/tracing-*-r*.json; do
	side=${f##*/tracing-}
	jq -c --arg s "${side%%-r*}" '{side: $s, rps: .served[0].throughput_rps, p50: .served[0].latency_us.p50}' "$f"
done | jq -rs --arg c "$TRC_CONCURRENCY" '
	def med: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	(map(select(.side == "off") | .rps)) as $off | (map(select(.side == "on") | .rps)) as $on |
	([range(0; [$off, $on] | map(length) | min)] | map($on[.] / $off[.])) as $r |
	($r | med) as $m |
	"| tiny (classifier.onnx), v1 /predict | \($c) | \($off | med | floor) | \($on | med | floor) | \($m * 1000 | round / 1000) (\($r | min * 1000 | round / 1000)–\($r | max * 1000 | round / 1000)) | \($r | length) | \(if $m >= 0.97 then "met" else "missed" end) |"')

table="| model, protocol | concurrency | off req/s | on req/s (every request sampled, exported) | on ÷ off (range over pairs) | pairs | goal ≤ 3 % |
|---|--:|--:|--:|--:|--:|---|
$row"
echo "$table"
if [ "${TRC_WRITE:-0}" = 1 ]; then
	awk -v table="$table" '
		/<!-- bench-tracing:begin -->/ { print; print table; skip = 1; next }
		/<!-- bench-tracing:end -->/ { skip = 0 }
		!skip { print }
	' BENCHMARKS.md >BENCHMARKS.md.tmp && mv BENCHMARKS.md.tmp BENCHMARKS.md
fi
exit $status
