#!/usr/bin/env bash
# make bench's side by side of svc's text routes and a peer: Transformers.js
# (npm @huggingface/transformers, pinned in build/textpeer/package-lock.json
# and installed by build/node-tools.sh --peer, local files only) serving the same sentence-embedding model from a plain
# Node HTTP server (build/textpeer/peer.cjs), both in TEI's /embed shape.
# build/textpeer/load.cjs measures texts per second at concurrency 1 and 8
# on the same mixed-length corpus, checks that the vectors agree (cosine
# >= 0.9999) and svc's padding share with and without grouping by length,
# and writes the section of BENCHMARKS.md between <!-- textapi:begin -->
# and <!-- textapi:end -->.
#
# Usage: build/bench-textapi.sh   (SVC: the binary, default build/bin/svc;
# TEXT_BENCH_SECONDS: seconds per row, default 10; TEXT_BENCH_MD: the file,
# default BENCHMARKS.md)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
svc=${SVC:-$root/build/bin/svc}
peer=$root/build/textpeer
nodetools=${SVC_NODE_TOOLS:-$root/build/node}
md=${TEXT_BENCH_MD:-$root/BENCHMARKS.md}

bash "$root/build/node-tools.sh" --peer "$nodetools"

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The model folder both serve: examples/text-embed's model (a Hub layout,
# onnx/model.onnx), its tokenizer truncating at the model's 128 positions
# so that no text of the corpus is cut (Transformers.js cuts a longer text
# otherwise than the Hugging Face library: without its last [SEP]), the
# sentence-transformers files (mean pooling, Normalize) for svc, and the
# config.json and tokenizer_config.json Transformers.js reads.
m=$work/models/text-embed
mkdir -p "$m/onnx" "$m/1_Pooling"
cp "$root/testdata/models/tiny_bert.onnx" "$m/onnx/model.onnx"
node -e 'const fs=require("fs");const t=JSON.parse(fs.readFileSync(process.argv[1]));t.truncation.max_length=128;fs.writeFileSync(process.argv[2],JSON.stringify(t))' \
  "$root/core/codec/tokenizer/testdata/fixtures/bert-uncased.json" "$m/tokenizer.json"
cp "$root/examples/text-embed/modules.json" "$m/"
cp "$root/examples/text-embed/1_Pooling/config.json" "$m/1_Pooling/"
echo '{"model_type": "bert", "architectures": ["BertModel"], "hidden_size": 32, "num_attention_heads": 1, "num_hidden_layers": 1, "intermediate_size": 64, "vocab_size": 444, "max_position_embeddings": 128, "type_vocab_size": 2, "pad_token_id": 438}' >"$m/config.json"
echo '{"tokenizer_class": "BertTokenizer", "do_lower_case": true, "model_max_length": 128, "pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]", "sep_token": "[SEP]", "mask_token": "[MASK]"}' >"$m/tokenizer_config.json"

port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
p1=$(port)
p2=$(port)
"$svc" serve "$m" --host 127.0.0.1 --port "$p1" >"$work/svc.log" 2>&1 &
pids+=($!)
NODE_PATH=$nodetools/textpeer/node_modules node "$peer/peer.cjs" "$work/models" text-embed "$p2" >"$work/peer.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 600); do
  if curl -sf "http://127.0.0.1:$p1/v2/health/ready" >/dev/null && grep -q '^ready' "$work/peer.log"; then break; fi
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || break 2; done
  sleep 0.1
done
curl -sf "http://127.0.0.1:$p1/v2/health/ready" >/dev/null || { cat "$work/svc.log" >&2; exit 1; }
grep -q '^ready' "$work/peer.log" || { cat "$work/peer.log" >&2; exit 1; }

TEXT_BENCH_COMMIT=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown) node "$peer/load.cjs" "http://127.0.0.1:$p1" "http://127.0.0.1:$p2" "$root/core/codec/tokenizer/testdata/bench.txt" \
  "${TEXT_BENCH_SECONDS:-10}" --md "$md"
