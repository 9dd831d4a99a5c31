#!/usr/bin/env bash
# The response cache's gain (docs/cache.md): PaddleOCR cls (make models)
# served three ways by svc bench, each starting its own server: no cache
# ("off"); a cache too small to keep any answer ("miss": every request
# hashes its tensors, runs the model and copies its outputs, as a miss
# does); a cache of 64 MiB ("hit": after the warm-up every request is
# answered from it). Two inputs: a picture of a text line posted to
# /predict (examples/ocr/line.png: decoding and preprocessing still run
# on a hit, the key is the tensor they make), and a random tensor
# 1x3x48x192 as v2 binary tensors (svc bench rotates eight bodies, all
# kept after the warm-up). Each variant runs CACHE_ROUNDS times, the
# order rotating per round; the table shows the medians. The table
# replaces what is between <!-- bench-cache:begin --> and
# <!-- bench-cache:end --> in BENCHMARKS.md (build/benchreport -section).
#
# Knobs: SVC (build/bin/svc, with the ONNX Runtime library in its lib/),
# GO (go), OUT (build/artifacts/bench), CACHE_ROUNDS (3), CACHE_DURATION
# (3s), CACHE_WARMUP (1s), CACHE_LEVELS (1,4), CACHE_WRITE (1: write
# BENCHMARKS.md; 0: print the table only). Needs jq.
#
#   build/bench-cache.sh
set -uo pipefail
cd "$(dirname "$0")/.."
die() { echo "bench-cache: $*" >&2; exit 1; }
# shellcheck source=build/bench-lib.sh
. build/bench-lib.sh

SVC=${SVC:-build/bin/svc}
GO=${GO:-go}
OUT=${OUT:-build/artifacts/bench}
CACHE_ROUNDS=${CACHE_ROUNDS:-3}
CACHE_DURATION=${CACHE_DURATION:-3s}
CACHE_WARMUP=${CACHE_WARMUP:-1s}
CACHE_LEVELS=${CACHE_LEVELS:-1,4}
CACHE_WRITE=${CACHE_WRITE:-1}
CLS=$PWD/build/models/paddleocr-cls
PNG=$PWD/examples/ocr/line.png
mkdir -p "$OUT"
[ -d "$CLS" ] || die "no $CLS: run 'make models'"
find_lib
export ONNXRUNTIME_LIB=$PWD/$LIB

runs=$OUT/cache-runs.jsonl
: >"$runs"
cfgs=$(mktemp -d)
trap 'bench_cleanup; rm -rf "$cfgs"' EXIT
# Configurations VARIANT-INPUT.yml: the picture's declares the image input
# and the classes; the tensor's serves the model's tensors as they are.
for variant in off miss hit; do
	case $variant in
	off) cache= ;;
	miss) cache='    cache: {size: 1}' ;;
	hit) cache='    cache: {size: 64MiB}' ;;
	esac
	printf 'models:\n  cls:\n    path: %s\n%s\n' "$CLS" "$cache" >"$cfgs/$variant-tensor.yml"
	cat >"$cfgs/$variant-picture.yml" <<YML
models:
  cls:
    path: $CLS
    inputs:
      x:
        image: {preset: paddleocr-cls}
    outputs:
      softmax_0.tmp_0:
        classify: {labels: ["0", "180"], top_k: 1}
$cache
YML
done

# bench VARIANT INPUT ROUND: one svc bench run, its levels appended to
# $runs as {variant, input, round, concurrency, rps, p50_ms}.
bench() {
	local variant=$1 input=$2 round=$3 report=$OUT/cache-$1-$2-$3.json args
	case $input in
	picture) args=(--input "$PNG" --content-type image/png) ;;
	tensor) args=(--protocol v2-binary --shape x=1,3,48,192) ;;
	esac
	show "$SVC bench cls -c $cfgs/$variant-$input.yml ${args[*]} --concurrency $CACHE_LEVELS --duration $CACHE_DURATION --warmup $CACHE_WARMUP --no-raw --json"
	if ! run "$SVC" bench cls -c "$cfgs/$variant-$input.yml" "${args[@]}" --concurrency "$CACHE_LEVELS" \
		--duration "$CACHE_DURATION" --warmup "$CACHE_WARMUP" --no-raw --json >"$report" 2>"$report.err"; then
		echo "bench-cache: $variant $input round $round failed: $(tail -3 "$report.err")" >&2
		return 1
	fi
	jq -c --arg v "$variant" --arg i "$input" --argjson r "$round" \
		'.served[] | {variant: $v, input: $i, round: $r, concurrency, rps: .throughput_rps, p50_ms: (.latency_us.p50 / 1000), errors}' \
		"$report" >>"$runs"
}

status=0
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$OUT/cache.load"
variants=(off miss hit)
for round in $(seq 1 "$CACHE_ROUNDS"); do
	for input in picture tensor; do
		for k in 0 1 2; do
			bench "${variants[$(((k + round) % 3))]}" "$input" "$round" || status=1
		done
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/cache.load"

rows=$(jq -rs '
	def med: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	def r2: . * 100 | round / 100;
	group_by([.input, .concurrency])[] |
	. as $g | (map(select(.variant == "off") | .rps) | med) as $off |
	(map(select(.variant == "miss") | .rps) | med) as $miss |
	(map(select(.variant == "hit") | .rps) | med) as $hit |
	"| \({picture: "picture, v1 /predict (image/png)", tensor: "tensor 1x3x48x192, v2 binary"}[$g[0].input]) | \($g[0].concurrency) | \($off | floor) | \($miss | floor) | \($hit | floor) | \($hit / $miss | r2) | \(map(select(.variant == "miss") | .p50_ms) | med | r2) | \(map(select(.variant == "hit") | .p50_ms) | med | r2) | \(map(.errors) | add) |"
' "$runs")
commit=$(git rev-parse --short HEAD)
table="## Response cache: hits against misses on PaddleOCR cls (build/bench-cache.sh)

Run $(date -u +%Y-%m-%dT%H:%M:%SZ) at \`$commit\` on $(nproc) cores shared by the server and the load generator ($(tr '\n' ' ' <"$OUT/cache.load")); medians of $CACHE_ROUNDS rounds of $CACHE_DURATION per level. \"off\": no cache; \"miss\": a cache that keeps nothing (every request hashes, runs, copies); \"hit\": every request answered from the cache after the warm-up. Command: \`build/bench-cache.sh\`.

| input | concurrency | off req/s | miss req/s | hit req/s | hit ÷ miss | p50 miss ms | p50 hit ms | errors |
|---|--:|--:|--:|--:|--:|--:|--:|--:|
$rows"
echo "$table"
if [ "$CACHE_WRITE" = 1 ]; then
	printf '%s\n' "$table" >"$OUT/cache-table.md"
	(cd build/benchreport && "$GO" run . -out ../../BENCHMARKS.md -section bench-cache -table "../../$OUT/cache-table.md") || status=1
fi
exit $status
