#!/usr/bin/env bash
# make gpu-kit: packs everything the GPU proof needs (build/gpu-check.sh on
# the GPU machine) into build/gpu-kit/ (ignored), as zstd-compressed parts of
# at most 55 MiB, one per folder (build/gpu-kit/partN/), so that each device
# call carries one part with the working tree under its 64 MiB:
#   bin/svc             svc built with -tags cuda,tensorrt,webgpu
#   bin/lib/            ONNX Runtime 1.29.0 with its CUDA and TensorRT provider
#                       libraries (make lib-cuda), where svc finds them
#   models/             PaddleOCR det and cls (make models)
#   inputs/, refs/      the request bodies and the CPU's answers, computed here
#   debs/               the Vulkan loader .debs the device README names (apt)
#   check/              build/gpu-check.sh and build/gpu-check.py
#   SHA256SUMS          every file of the kit
# The parts come with a manifest of sha256 sums (MANIFEST, in every part
# folder: each part and the whole stream), the zstd .deb (uncompressed, in the
# last part, for a machine without zstd), and build/gpu-kit/PLAN.md, the
# exact sequence of device calls, which is printed at the end.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${GPU_KIT_DIR:-$root/build/gpu-kit}
part_size=$((55 * 1024 * 1024))
cd "$root"

command -v zstd >/dev/null || bash ci/apt-install.sh zstd
command -v dpkg-deb >/dev/null || bash ci/apt-install.sh dpkg
bash build/fetch-onnxruntime.sh
bash build/fetch-gpu-providers.sh
bash build/fetch-models.sh

start=$(date +%s)
cache=$out/.cache
stage=$out/.stage
rm -rf "$stage" "$out"/part* "$out/MANIFEST" "$out/PLAN.md"
mkdir -p "$cache" "$stage/kit"/{bin/lib,models,inputs,refs,debs,check}
kit=$stage/kit

# svc with the GPU providers, the ONNX Runtime libraries beside it in lib/.
version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
go build -trimpath -tags 'cuda,tensorrt,webgpu' -ldflags "-s -w -X main.version=$version" -o "$kit/bin/svc" ./cmd/svc
cp -P build/lib/linux-amd64-cuda/libonnxruntime* "$kit/bin/lib/"
for m in det cls; do cp "build/models/paddleocr-$m/model.onnx" "$kit/models/$m.onnx"; done
cp build/gpu-check.sh build/gpu-check.py "$kit/check/"

# The Vulkan loader and GL dispatch libraries (device README), and zstd.
debs=(libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 zstd)
if ! ls "$cache"/zstd_*.deb >/dev/null 2>&1 || [ "$(ls "$cache"/*.deb | wc -l)" -lt ${#debs[@]} ]; then
  lists=$cache/apt-lists
  mkdir -p "$lists/partial"
  o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 "-oDir::State::Lists=$lists")
  apt-get "${o[@]}" update -qq
  (cd "$cache" && apt-get "${o[@]}" download "${debs[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true)
fi
for d in "${debs[@]}"; do
  f=$(ls "$cache/${d}"_*_amd64.deb 2>/dev/null | head -1)
  [ -n "$f" ] || { echo "gpu-kit: $d .deb not downloaded" >&2; exit 1; }
  [ "$d" = zstd ] || cp "$f" "$kit/debs/"
done

# Inputs and the CPU's answers, with the kit's own svc on this machine.
python3 build/gpu-check.py inputs "$kit/inputs"
for m in det cls; do
  log=$cache/ref-$m.log
  "$kit/bin/svc" serve "$kit/models/$m.onnx" --provider cpu --host 127.0.0.1 --port 0 >"$log" 2>&1 &
  pid=$!
  url=""
  for _ in $(seq 120); do
    url=$(sed -n 's/^  URL *//p' "$log" | head -1)
    [ -n "$url" ] && break
    sleep 0.5
  done
  [ -n "$url" ] || { kill "$pid"; cat "$log" >&2; echo "gpu-kit: svc serve $m did not start" >&2; exit 1; }
  python3 build/gpu-check.py post "$url/predict" "$kit/inputs/$m.json" "$kit/refs/$m.cpu.json"
  kill "$pid"
  wait "$pid" || true
done

{
  echo "svc $version ($(git rev-parse HEAD)), built $(date -u +%FT%TZ) on $(uname -m)"
  echo "ONNX Runtime 1.29.0 with its CUDA and TensorRT provider libraries (npm com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9)"
} >"$kit/KIT"
(cd "$kit" && find . -type f ! -name SHA256SUMS | sort | xargs sha256sum >SHA256SUMS)

# Compress and split: one part per folder.
tar -C "$stage" -cf - kit | zstd -T0 -3 -q -c >"$stage/kit.tar.zst"
split -b "$part_size" -d -a 2 --numeric-suffixes=1 "$stage/kit.tar.zst" "$stage/kit.tar.zst."
n=0
manifest=$stage/MANIFEST
: >"$manifest"
for p in "$stage"/kit.tar.zst.[0-9][0-9]; do
  n=$((n + 1))
  mkdir -p "$out/part$n"
  mv "$p" "$out/part$n/"
  (cd "$out/part$n" && sha256sum "$(basename "$p")") >>"$manifest"
done
(cd "$stage" && sha256sum kit.tar.zst) >>"$manifest"
echo "parts $n" >"$stage/PARTS"
for i in $(seq "$n"); do cp "$manifest" "$stage/PARTS" "$out/part$i/"; done
cp "$manifest" "$out/MANIFEST"
cp "$(ls "$cache"/zstd_*_amd64.deb | head -1)" "$out/part$n/"
rm -rf "$stage"

bash build/gpu-plan.sh "$out" >"$out/PLAN.md"
took=$(($(date +%s) - start))
echo "gpu-kit: $n parts in $out (packed in ${took}s):" >&2
for i in $(seq "$n"); do du -b "$out/part$i" | awk -v i="$i" '{printf "  part%d  %.1f MiB\n", i, $1/1048576}' >&2; done
cat "$out/PLAN.md"
