#!/usr/bin/env bash
# Two builds of svc side by side: PaddleOCR cls and det served by both at
# once, each through v1 /predict JSON and v2 binary tensors, loaded in turn
# by short svc bench runs at CMP_CONCURRENCY, the order alternating within
# each of CMP_PAIRS pairs, so that both builds meet the same moments of a
# machine whose load drifts. The same load generator (NEW's svc bench)
# measures both.
#
#   build/bench-compare.sh OLD_SVC NEW_SVC
#
# For a change to the server, OLD_SVC is the binary of the commit before it
# (git worktree add /tmp/old COMMIT && make -C /tmp/old build). Writes
# $OUT/compare-MODEL-PROTOCOL-SIDE-rK.json (svc bench --json, SIDE old or
# new) and prints, per model and protocol, each build's median requests/s
# and p50 over the pairs and the median of new ÷ old, pair by pair, with
# its range. Knobs: OUT (build/artifacts/compare), CMP_PAIRS (6),
# CMP_DURATION (3s), CMP_WARMUP (1s), CMP_CONCURRENCY (16), CMP_MODELS
# (cls det), CMP_PROTOCOLS (v1 v2-binary). Needs build/models and jq.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=build/bench-lib.sh
. build/bench-lib.sh

OLD=${1:?usage: build/bench-compare.sh OLD_SVC NEW_SVC}
NEW=${2:?usage: build/bench-compare.sh OLD_SVC NEW_SVC}
OUT=${OUT:-build/artifacts/compare}
CMP_PAIRS=${CMP_PAIRS:-6}
CMP_DURATION=${CMP_DURATION:-3s}
CMP_WARMUP=${CMP_WARMUP:-1s}
CMP_CONCURRENCY=${CMP_CONCURRENCY:-16}
CMP_MODELS=${CMP_MODELS:-cls det}
CMP_PROTOCOLS=${CMP_PROTOCOLS:-v1 v2-binary}

die() { echo "bench-compare: $*" >&2; exit 1; }
[ -x "$OLD" ] && [ -x "$NEW" ] || die "usage: build/bench-compare.sh OLD_SVC NEW_SVC (both executables)"
command -v jq >/dev/null || die "jq missing (ci/install-deps.sh installs it)"
mkdir -p "$OUT"
: >"$OUT/commands.txt"
bench_start bench-compare
SVC=$NEW

# serve SIDE BINARY MODEL: starts BINARY serving MODEL; sets URL_SIDE and
# PID_SIDE.
serve() {
	local side=$1 bin=$2 model=$3
	SVC=$bin start_server "$OUT/serve-$side.out" "$model" || return 1
	printf -v "URL_$side" '%s' "$SERVER_URL"
	printf -v "PID_$side" '%s' "$SERVER_PID"
}

# stop_both: stops the servers serve started.
stop_both() {
	local side pid
	for side in old new; do
		pid=PID_$side
		[ -n "${!pid:-}" ] && SERVER_PID=${!pid} stop_server
		printf -v "PID_$side" '%s' ""
	done
}

# summary MODEL PROTOCOL: one line of medians from the pairs' files.
summary() {
	local pre=$OUT/compare-$1-$2
	jq -rs --arg m "$1" --arg p "$2" '
		def med: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
		def lvl: .served[0];
		(map(select(.side == "old") | .r) | map(lvl.throughput_rps)) as $oldr |
		(map(select(.side == "new") | .r) | map(lvl.throughput_rps)) as $newr |
		(map(select(.side == "old") | .r) | map(lvl.latency_us.p50)) as $oldp |
		(map(select(.side == "new") | .r) | map(lvl.latency_us.p50)) as $newp |
		([range(0; [$oldr, $newr] | map(length) | min)] | map($newr[.] / $oldr[.])) as $ratio |
		"| \($m) | \($p) | \($oldr | med | floor) | \($newr | med | floor) | \($ratio | med * 1000 | round / 1000) (\($ratio | min * 1000 | round / 1000)–\($ratio | max * 1000 | round / 1000)) | \($oldp | med / 1000 * 100 | round / 100) ms | \($newp | med / 1000 * 100 | round / 100) ms | \($ratio | length) |"
	' < <(for f in "$pre"-*-r*.json; do
		side=${f##*/}
		side=${side#compare-"$1"-"$2"-}
		side=${side%%-r*}
		jq -c --arg s "$side" '{side: $s, r: .}' "$f"
	done)
}

status=0
rows=()
for name in $CMP_MODELS; do
	paddle_model "$name"
	if ! serve old "$OLD" "$model" || ! serve new "$NEW" "$model"; then
		stop_both
		status=1
		continue
	fi
	show "$OLD serve $model & $NEW serve $model &   # side by side"
	for proto in $CMP_PROTOCOLS; do
		show "$NEW bench --url URL --shape $shape --protocol $proto --concurrency $CMP_CONCURRENCY --duration $CMP_DURATION --warmup $CMP_WARMUP --no-raw --json > $OUT/compare-$name-$proto-old-r1.json   # then new, and so on to -r$CMP_PAIRS, the order alternating"
		for rep in $(seq 1 "$CMP_PAIRS"); do
			order="old new"
			[ $((rep % 2)) = 0 ] && order="new old"
			for side in $order; do
				url=URL_$side
				run "$NEW" bench --url "${!url}" --shape "$shape" --protocol "$proto" --concurrency "$CMP_CONCURRENCY" \
					--duration "$CMP_DURATION" --warmup "$CMP_WARMUP" --no-raw --json \
					>"$OUT/compare-$name-$proto-$side-r$rep.json" 2>>"$OUT/compare.log" || status=1
			done
		done
		rows+=("$(summary "$name" "$proto")")
	done
	stop_both
done

echo "| model | protocol | old req/s | new req/s | new ÷ old (range) | old p50 | new p50 | pairs |"
echo "|---|---|--:|--:|--:|--:|--:|--:|"
printf '%s\n' "${rows[@]}"
exit $status
