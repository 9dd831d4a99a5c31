#!/usr/bin/env bash
# make bench's sequences step: Silero VAD v5 serving SEQ_BENCH_STREAMS live
# audio streams (64) of 512-sample chunks, one every 32 ms, for
# SEQ_BENCH_SECONDS of audio (10), over gRPC ModelStreamInfer and WebSocket,
# with batching across sequences on and off (BenchmarkSequenceStreams in
# cmd/svc/sequence_bench_test.go; the server and the load generator share
# the machine). Writes $OUT/sequences.jsonl and $OUT/sequences.md, and puts
# the table in BENCHMARKS.md between <!-- sequences:begin --> and
# <!-- sequences:end --> (added at the end when missing).
#
#   build/bench-sequences.sh    # about a minute on 2 cores
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
OUT=${OUT:-build/artifacts/bench}
mkdir -p "$OUT"
jsonl="$OUT/sequences.jsonl"
: >"$jsonl"
export ONNXRUNTIME_TEST_LIB=${ONNXRUNTIME_TEST_LIB:-$PWD/build/lib/$(go env GOOS)-$(go env GOARCH)}
SEQ_BENCH_OUT="$PWD/$jsonl" "$GO" test -run '^$' -bench SequenceStreams -benchtime 1x -timeout 30m ./cmd/svc | tee "$OUT/sequences.txt"

md="$OUT/sequences.md"
{
	echo "<!-- sequences:begin -->"
	echo
	echo "## Sequences: live audio streams of Silero VAD v5"
	echo
	echo "Written by \`build/bench-sequences.sh\` ($(date -u +%Y-%m-%d), commit $(git describe --always --dirty 2>/dev/null || echo unknown), $(nproc) cores; load average before $(cut -d' ' -f1-3 /proc/loadavg))."
	echo "Each stream sends a 512-sample chunk (32 ms at 16 kHz) every 32 ms and waits for its answer; the server and the load generator share the cores."
	echo "rtf: the slowest stream's wall time over its audio time (1.00 keeps up). late: steps that took longer than the 32 ms a chunk lasts."
	echo "CPU: the server's CPU seconds per second of audio of one stream. batched: the share of the model's runs that held several sequences' steps, and the mean steps per run."
	echo "Goal: all 64 streams keep up with real time with a p99 step latency under 32 ms."
	echo
	echo "| protocol | batching | streams | audio per stream | p50 ms | p99 ms | late steps | rtf | CPU s per audio s | batched runs | steps per run | goal |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
	while read -r line; do
		echo "$line" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
met = "met" if r["p99_ms"] < 32 and r["rtf"] < 1.05 else "missed"
print("| %s | %s | %d | %.0f s | %.2f | %.2f | %d of %d | %.3f | %.4f | %.0f%% | %.1f | %s |" % (
    r["proto"], "on" if r["batching"] else "off", r["streams"], r["audio_s"], r["p50_ms"], r["p99_ms"],
    r["late_steps"], r["steps"], r["rtf"], r["cpu_s_per_audio_s"], 100 * r["batched_share"], r["mean_batch"], met))'
	done <"$jsonl"
	echo
	echo "<!-- sequences:end -->"
} >"$md"

python3 - "$md" <<'PY'
import re, sys
table = open(sys.argv[1]).read().rstrip("\n")
doc = open("BENCHMARKS.md").read()
pat = re.compile(r"<!-- sequences:begin -->.*?<!-- sequences:end -->", re.S)
doc = pat.sub(lambda _: table, doc) if pat.search(doc) else doc.rstrip("\n") + "\n\n" + table + "\n"
open("BENCHMARKS.md", "w").write(doc)
PY
echo "bench-sequences: wrote $md and BENCHMARKS.md" >&2
