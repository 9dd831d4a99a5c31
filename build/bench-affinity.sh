#!/usr/bin/env bash
# Workers pinned to cores against unpinned (docs/workers.md): PaddleOCR
# det (make models, input DET_SHAPE) served with --workers 2, once with
# runtime.cpu_affinity: auto and once without, by svc bench at
# concurrency AFF_CONCURRENCY over v2 binary tensors, the order rotating
# in each of AFF_ROUNDS rounds; the table shows the medians and the
# pinned ÷ unpinned ratio, and replaces what is between
# <!-- bench-affinity:begin --> and <!-- bench-affinity:end --> in
# BENCHMARKS.md (build/benchreport -section).
#
# Knobs: SVC (build/bin/svc, with the ONNX Runtime library in its lib/),
# GO (go), OUT (build/artifacts/bench), AFF_ROUNDS (3), AFF_DURATION
# (4s), AFF_WARMUP (1s), AFF_CONCURRENCY (8), AFF_WRITE (1: write
# BENCHMARKS.md; 0: print the table only). Needs jq.
#
#   build/bench-affinity.sh
set -uo pipefail
cd "$(dirname "$0")/.."
die() { echo "bench-affinity: $*" >&2; exit 1; }
# shellcheck source=build/bench-lib.sh
. build/bench-lib.sh

SVC=${SVC:-build/bin/svc}
GO=${GO:-go}
OUT=${OUT:-build/artifacts/bench}
AFF_ROUNDS=${AFF_ROUNDS:-3}
AFF_DURATION=${AFF_DURATION:-4s}
AFF_WARMUP=${AFF_WARMUP:-1s}
AFF_CONCURRENCY=${AFF_CONCURRENCY:-8}
AFF_WRITE=${AFF_WRITE:-1}
DET=$PWD/build/models/paddleocr-det
mkdir -p "$OUT"
[ -d "$DET" ] || die "no $DET: run 'make models'"
find_lib
export ONNXRUNTIME_LIB=$PWD/$LIB

runs=$OUT/affinity-runs.jsonl
: >"$runs"
cfgs=$(mktemp -d)
trap 'bench_cleanup; rm -rf "$cfgs"' EXIT
printf 'models:\n  det:\n    path: %s\n' "$DET" >"$cfgs/unpinned.yml"
printf 'models:\n  det:\n    path: %s\nruntime:\n  cpu_affinity: auto\n' "$DET" >"$cfgs/pinned.yml"

status=0
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$OUT/affinity.load"
variants=(unpinned pinned)
for round in $(seq 1 "$AFF_ROUNDS"); do
	for k in 0 1; do
		v=${variants[$(((k + round) % 2))]}
		report=$OUT/affinity-$v-$round.json
		show "$SVC bench det -c $cfgs/$v.yml --protocol v2-binary --shape $DET_SHAPE --concurrency $AFF_CONCURRENCY --duration $AFF_DURATION --warmup $AFF_WARMUP --no-raw --json -- --workers 2"
		if ! run "$SVC" bench det -c "$cfgs/$v.yml" --protocol v2-binary --shape "$DET_SHAPE" --concurrency "$AFF_CONCURRENCY" \
			--duration "$AFF_DURATION" --warmup "$AFF_WARMUP" --no-raw --json -- --workers 2 >"$report" 2>"$report.err"; then
			echo "bench-affinity: $v round $round failed: $(tail -3 "$report.err")" >&2
			status=1
			continue
		fi
		jq -c --arg v "$v" --argjson r "$round" \
			'.served[] | {variant: $v, round: $r, concurrency, rps: .throughput_rps, p50_ms: (.latency_us.p50 / 1000), p99_ms: (.latency_us.p99 / 1000), errors}' \
			"$report" >>"$runs"
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/affinity.load"

row=$(jq -rs '
	def med: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	def r2: . * 100 | round / 100;
	(map(select(.variant == "unpinned"))) as $u | (map(select(.variant == "pinned"))) as $p |
	"| \($u[0].concurrency) | \($u | map(.rps) | med | r2) | \($p | map(.rps) | med | r2) | \(($p | map(.rps) | med) / ($u | map(.rps) | med) | r2) | \($u | map(.p50_ms) | med | r2) | \($p | map(.p50_ms) | med | r2) | \($u | map(.p99_ms) | med | r2) | \($p | map(.p99_ms) | med | r2) | \(map(.errors) | add) |"
' "$runs")
commit=$(git rev-parse --short HEAD)
table="## Workers pinned to cores: PaddleOCR det, --workers 2 (build/bench-affinity.sh)

Run $(date -u +%Y-%m-%dT%H:%M:%SZ) at \`$commit\` on $(nproc) cores shared by the server and the load generator ($(tr '\n' ' ' <"$OUT/affinity.load")); medians of $AFF_ROUNDS rounds of $AFF_DURATION, v2 binary tensors $DET_SHAPE. Command: \`build/bench-affinity.sh\`.

| concurrency | unpinned req/s | pinned req/s | pinned ÷ unpinned | p50 unpinned ms | p50 pinned ms | p99 unpinned ms | p99 pinned ms | errors |
|--:|--:|--:|--:|--:|--:|--:|--:|--:|
$row"
echo "$table"
if [ "$AFF_WRITE" = 1 ]; then
	printf '%s\n' "$table" >"$OUT/affinity-table.md"
	(cd build/benchreport && "$GO" run . -out ../../BENCHMARKS.md -section bench-affinity -table "../../$OUT/affinity-table.md") || status=1
fi
exit $status
