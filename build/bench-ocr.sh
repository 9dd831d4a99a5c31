#!/usr/bin/env bash
# make bench's side by side of svc's page reader and a peer: Guten OCR
# (npm @gutenye/ocr-node, pinned in build/ocrpeer/package-lock.json and
# installed by build/node-tools.sh --peer, local files only), which runs
# the same PP-OCRv4 detector and recogniser in Node with onnxruntime-node.
# Renders the pages once (build/ocrpeer/pages.py, Pillow and DejaVu
# fonts: a letter, two columns, a wide page, short lines, with what was
# drawn), serves examples/ocr/svc.yml (below), and runs build/ocrpeer/bench.mjs:
# the peer in that Node process, svc over HTTP from it, on the same pages,
# model files and cores; pages per second, latency and CPU a page at
# concurrency 1 and 4 (medians of rounds that alternate the sides), and
# the characters each side reads right; it writes the section of
# BENCHMARKS.md between <!-- ocr:begin --> and <!-- ocr:end -->.
#
# Usage: build/bench-ocr.sh   (SVC: the binary, default build/bin/svc;
# OCR_BENCH_PAGES: pages a run, default 24; OCR_BENCH_ROUNDS: default 3;
# OCR_PEER_THREADS: the peer's intra-op threads at concurrency 1 and 4,
# default 1,1; OCR_SVC_BATCH: svc's recognize.batch, default 1;
# OCR_BENCH_MD: the file, default BENCHMARKS.md)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
svc=${SVC:-$root/build/bin/svc}
nodetools=${SVC_NODE_TOOLS:-$root/build/node}
md=${OCR_BENCH_MD:-$root/BENCHMARKS.md}

bash "$root/build/node-tools.sh" --peer "$nodetools"

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

mkdir "$work/pages"
/usr/bin/python3 "$root/build/ocrpeer/pages.py" "$work/pages" >"$work/pages.json"

# svc's configuration: examples/ocr/svc.yml with its model paths made
# absolute and recognize.batch OCR_SVC_BATCH (default 1: on CPU the
# recogniser's cost a line grows with the rows of its batch).
batch=${OCR_SVC_BATCH:-1}
sed -e "s#\.\./\.\./build/models#$root/build/models#g" -e "s#recognize: {model: rec}#recognize: {model: rec, batch: $batch}#" \
  "$root/examples/ocr/svc.yml" >"$work/svc.yml"
grep -q "batch: $batch}" "$work/svc.yml" || { echo "examples/ocr/svc.yml: no recognize: {model: rec} to set the batch in" >&2; exit 1; }

port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
"$svc" serve ocr -c "$work/svc.yml" --host 127.0.0.1 --port "$port" --access-log off >"$work/svc.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$port/v2/health/ready" >/dev/null && break
  kill -0 "${pids[0]}" 2>/dev/null || break
  sleep 0.1
done
curl -sf "http://127.0.0.1:$port/v2/health/ready" >/dev/null || { cat "$work/svc.log" >&2; exit 1; }

OCR_PEER_MODULES=$nodetools/ocrpeer/node_modules \
  OCR_BENCH_COMMIT=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown) \
  OCR_SVC_SETUP="\`svc serve ocr\` of examples/ocr/svc.yml with \`recognize.batch: $batch\` (one process; on these cores svc's plan gives each stage's model one session, two runs at once, one intra-op thread each), the classifier on" \
  node "$root/build/ocrpeer/bench.mjs" "http://127.0.0.1:$port" "${pids[0]}" "$work/pages" "$work/pages.json" "$root/build/models" --md "$md"
