#!/usr/bin/env bash
# The hot-reload latency table of BENCHMARKS.md: BenchmarkReloadLatency
# (cmd/svc/reload_bench_test.go) serves PaddleOCR cls (make models) to 4
# clients and compares requests that arrive in steady state with requests
# that arrive while POST /v2/repository/models/NAME/load reloads the model.
# The table replaces what is between <!-- reload:begin --> and
# <!-- reload:end --> in BENCHMARKS.md. Knobs: GO, ONNXRUNTIME_TEST_LIB
# (build/lib/linux-amd64).
#
#   build/bench-reload.sh
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
export ONNXRUNTIME_TEST_LIB=${ONNXRUNTIME_TEST_LIB:-$PWD/build/lib/linux-amd64}
table=$(mktemp)
trap 'rm -f "$table"' EXIT
RELOAD_BENCH_TABLE=$table "$GO" test ./cmd/svc -run '^$' -bench '^BenchmarkReloadLatency$' -benchtime 1x >&2
commit=$(git rev-parse --short HEAD)
load=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$table" "$commit" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(nproc)" "$load" <<'PY'
import sys
table, commit, date, cores, load = sys.argv[1:]
body = open(table).read().rstrip("\n")
section = ("<!-- reload:begin -->\n"
           "## Hot reload: latency of requests that arrive during a reload (build/bench-reload.sh)\n\n"
           f"PaddleOCR cls served to 4 clients; run {date} at `{commit}` on {cores} cores shared by the server and the clients (load average after {load}). "
           "Command: `build/bench-reload.sh`.\n\n"
           + body + "\n<!-- reload:end -->")
path = "BENCHMARKS.md"
text = open(path).read()
# The markers alone on their lines (the introduction names them in prose).
begin, end = "\n<!-- reload:begin -->\n", "\n<!-- reload:end -->"
if begin in text:
    i = text.index(begin) + 1
    text = text[:i] + section + text[text.index(end, i) + len(end):]
else:
    text = text.rstrip("\n") + "\n\n" + section + "\n"
open(path, "w").write(text)
PY
