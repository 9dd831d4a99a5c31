#!/usr/bin/env bash
# Fetches ONNX Runtime 1.29.0's CUDA and TensorRT provider libraries for
# linux/x64 from the NuGet package Microsoft.ML.OnnxRuntime.Gpu.Linux 1.29.0
# (the npm package onnxruntime-node ships the core library only, and fetches
# the same three files from there at install time) and puts them beside the
# npm library (from 'make lib') in build/lib/linux-amd64-cuda/:
#   libonnxruntime.so.1, libonnxruntime.so -> libonnxruntime.so.1,
#   libonnxruntime_providers_shared.so, libonnxruntime_providers_cuda.so,
#   libonnxruntime_providers_tensorrt.so
# build/release.sh's linux/amd64:cuda target packs that directory.
#
# The download is checked against SHA256 below when it is set; until it is,
# against the SHA-512 that NuGet's catalog records for the package, and the
# script prints the SHA-256 to pin. Used by ci/workflows/release.yml (this
# development machine cannot reach NuGet).
set -euo pipefail

VERSION=1.29.0
ID=microsoft.ml.onnxruntime.gpu.linux
SHA256=${NUGET_GPU_SHA256:-}
root=$(cd "$(dirname "$0")/.." && pwd)
cache=$root/build/cache
dest=$root/build/lib/linux-amd64-cuda
stamp=$dest/.gpu-providers-$VERSION
if [ -f "$stamp" ]; then
  exit 0
fi
[ -f "$root/build/lib/linux-amd64/libonnxruntime.so.1" ] || bash "$root/build/fetch-onnxruntime.sh"

mkdir -p "$cache" "$dest"
pkg=$cache/$ID.$VERSION.nupkg
url=https://api.nuget.org/v3-flatcontainer/$ID/$VERSION/$ID.$VERSION.nupkg
if [ ! -f "$pkg" ]; then
  echo "fetching $ID $VERSION from NuGet" >&2
  curl -fsSL --retry 3 -o "$pkg.part" "$url"
  mv "$pkg.part" "$pkg"
fi

if [ -n "$SHA256" ]; then
  if ! echo "$SHA256  $pkg" | sha256sum -c --status; then
    echo "$pkg: sha256 mismatch (want $SHA256); refusing to use it" >&2
    rm -f "$pkg"
    exit 1
  fi
else
  # NuGet's catalog entry for the version records the package's SHA-512.
  leaf=$(curl -fsSL --retry 3 "https://api.nuget.org/v3/registration5-semver1/$ID/$VERSION.json")
  catalog=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["catalogEntry"])' <<<"$leaf")
  want=$(curl -fsSL --retry 3 "$catalog" | python3 -c 'import json,sys; e=json.load(sys.stdin); assert e["packageHashAlgorithm"].upper()=="SHA512"; print(e["packageHash"])')
  got=$(openssl dgst -sha512 -binary "$pkg" | base64 -w0)
  if [ "$got" != "$want" ]; then
    echo "$pkg: SHA-512 $got does not match NuGet's catalog ($want); refusing to use it" >&2
    rm -f "$pkg"
    exit 1
  fi
  echo "::warning::$ID $VERSION matched NuGet's catalog hash; pin it: SHA256=$(sha256sum "$pkg" | cut -d' ' -f1) in build/fetch-gpu-providers.sh" >&2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=(libonnxruntime_providers_shared.so libonnxruntime_providers_cuda.so libonnxruntime_providers_tensorrt.so)
members=()
for f in "${files[@]}"; do members+=("runtimes/linux-x64/native/$f"); done
unzip -q -o "$pkg" "${members[@]}" -d "$tmp"
for f in "${files[@]}"; do cp "$tmp/runtimes/linux-x64/native/$f" "$dest/"; done
cp "$root/build/lib/linux-amd64/libonnxruntime.so.1" "$dest/"
ln -sf libonnxruntime.so.1 "$dest/libonnxruntime.so"
touch "$stamp"
echo "ONNX Runtime $VERSION CUDA/TensorRT provider libraries in $dest" >&2
