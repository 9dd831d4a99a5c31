#!/usr/bin/env bash
# make bench: the Go micro-benchmarks, svc bench on a tiny generated model
# and on PaddleOCR cls, and a memory check of the server; then BENCHMARKS.md
# at the repository root (targets checked against the JSON). Artifacts go
# to build/artifacts/bench/. About 5 minutes on 2 cores; re-runnable.
#
# Needs build/bin/svc and build/models (make bench runs 'make build models'
# first). GO and SVC override the go command and the svc binary.
set -uo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
SVC=${SVC:-build/bin/svc}
OUT=build/artifacts/bench
TINY=testdata/models/classifier.onnx
CLS=build/models/paddleocr-cls
CLS_SHAPE=x=1,3,48,192
DURATION=5s
WARMUP=1s

die() { echo "bench: $*" >&2; exit 1; }
[ -x "$SVC" ] || die "$SVC missing: run 'make build'"
[ -f "$TINY" ] || die "$TINY missing: run 'make genmodels'"
[ -f "$CLS/model.onnx" ] || die "$CLS/model.onnx missing: run 'make models'"

rm -rf "$OUT"
mkdir -p "$OUT"
: >"$OUT/commands.txt"
: >"$OUT/env.txt"
failed=0

env_line() { printf '%s: %s\n' "$1" "$2" >>"$OUT/env.txt"; }
# show CMD: print a command as it appears in BENCHMARKS.md.
show() { printf '%s\n' "$*" >>"$OUT/commands.txt"; echo "+ $*" >&2; }
# step NAME STATUS: record a step's exit status.
step() {
	env_line "$1_status" "$2"
	if [ "$2" != 0 ]; then
		echo "bench: $1 failed with status $2" >&2
		failed=1
	fi
}

env_line date "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
env_line commit "$(git describe --always --dirty 2>/dev/null || echo unknown)"
env_line svc "$("$SVC" version 2>/dev/null | head -n1)"
env_line onnxruntime "$("$SVC" version 2>/dev/null | awk '$1 == "onnxruntime" {print $1, $2}')"
env_line load_before "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"

# 1. Go benchmarks: every package with a Benchmark function.
pkgs=$(grep -rl --include='*_test.go' '^func Benchmark' core openapi transport cmd providers 2>/dev/null |
	xargs -r -n1 dirname | sort -u | sed 's|^|./|' | tr '\n' ' ')
show "go test -run '^\$' -bench . -benchmem ${pkgs% }"
# shellcheck disable=SC2086 # one word per package
"$GO" test -run '^$' -bench . -benchmem $pkgs 2>&1 | tee "$OUT/go-bench.txt"
step go_bench "${PIPESTATUS[0]}"

# 2. svc bench on the tiny model and on PaddleOCR cls (the server is
#    started by svc bench; progress goes to the terminal and the .log).
show "$SVC bench $TINY --concurrency 1,2,4,8,16,32 --duration $DURATION --warmup $WARMUP --json > $OUT/tiny.json"
"$SVC" bench "$TINY" --concurrency 1,2,4,8,16,32 --duration "$DURATION" --warmup "$WARMUP" --json \
	>"$OUT/tiny.json" 2> >(tee "$OUT/tiny.log" >&2)
step tiny $?

show "$SVC bench $CLS --shape $CLS_SHAPE --concurrency 1,2,4,8 --duration $DURATION --warmup $WARMUP --json > $OUT/cls.json"
"$SVC" bench "$CLS" --shape "$CLS_SHAPE" --concurrency 1,2,4,8 --duration "$DURATION" --warmup "$WARMUP" --json \
	>"$OUT/cls.json" 2> >(tee "$OUT/cls.log" >&2)
step cls $?

# 3. Memory: the server's VmRSS after ~2,000 and ~20,000 requests.
memory() {
	local pid url rss1 rss2 i
	show "$SVC serve $TINY --host 127.0.0.1 --port 0 &"
	"$SVC" serve "$TINY" --host 127.0.0.1 --port 0 >"$OUT/memory-serve.out" 2>/dev/null &
	pid=$!
	url=
	for i in $(seq 1 300); do
		url=$(awk '$1 == "URL" {print $2; exit}' "$OUT/memory-serve.out")
		[ -n "$url" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if [ -z "$url" ]; then
		echo "bench: svc serve did not start" >&2
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		return 1
	fi
	show "$SVC bench --url $url --concurrency 4 --requests 2000 --warmup 0s --no-raw --json > $OUT/memory-1.json"
	"$SVC" bench --url "$url" --concurrency 4 --requests 2000 --warmup 0s --no-raw --json >"$OUT/memory-1.json" &&
		rss1=$(awk '$1 == "VmRSS:" {print $2}' "/proc/$pid/status") &&
		show "grep VmRSS /proc/$pid/status   # $rss1 kB" &&
		show "$SVC bench --url $url --concurrency 4 --requests 18000 --warmup 0s --no-raw --json > $OUT/memory-2.json" &&
		"$SVC" bench --url "$url" --concurrency 4 --requests 18000 --warmup 0s --no-raw --json >"$OUT/memory-2.json" &&
		rss2=$(awk '$1 == "VmRSS:" {print $2}' "/proc/$pid/status") &&
		show "grep VmRSS /proc/$pid/status   # $rss2 kB" &&
		printf '{"rss_kib_1": %s, "rss_kib_2": %s}\n' "$rss1" "$rss2" >"$OUT/memory.json"
	local status=$?
	show "kill -TERM $pid"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return $status
}
memory
step memory $?

env_line load_after "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"

# 4. BENCHMARKS.md.
"$GO" run ./transport/bench/report -dir "$OUT" -out BENCHMARKS.md || die "report failed"
echo "bench: wrote BENCHMARKS.md (artifacts in $OUT)" >&2
sed -n '/^## Targets/,/^## Commands/p' BENCHMARKS.md | sed '$d' >&2
exit $failed
