#!/usr/bin/env bash
# Fetches ONNX Runtime 1.29.0's CUDA and TensorRT provider libraries for
# linux/x64 (built for CUDA 13, cuDNN 9, TensorRT 10) from the npm package
# com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9 (Plugins/Linux/x64/) and
# puts them beside a copy of the core library from 'make lib' in
# build/lib/linux-amd64-cuda/:
#   libonnxruntime.so.1, libonnxruntime.so -> libonnxruntime.so.1,
#   libonnxruntime_providers_shared.so, libonnxruntime_providers_cuda.so,
#   libonnxruntime_providers_tensorrt.so
# ONNX Runtime loads provider libraries from the directory of the core
# library, so they must sit together; build/release.sh's linux/amd64:cuda
# archive packs that directory, and the tests serve from it.
#
# The tarball and each extracted file are checked against the sha256 sums
# below. The provider libraries must be the core's exact version (a core of
# another version crashes in them): the script checks that the CUDA and
# TensorRT libraries embed the core's version string ("1.29.0"), as svc does
# again at run time before it lets ONNX Runtime load them.
set -euo pipefail

VERSION=1.29.0
PKG=com.github.asus4.onnxruntime.linux-x64-gpu
PKG_VERSION=0.4.9
SHA256=2b459e0c17f340c92970c10ed86de4f37a3009f93c14053e6ad4334cbb6be412
declare -A FILE_SHA256=(
  [libonnxruntime_providers_shared.so]=c6a12593396095f5670160e284c35d1700b7708cf3037b7042e2a5200ccae772
  [libonnxruntime_providers_cuda.so]=56cf3254b118ad837ccc4ed8f6d1b23504bbf7ef91b34cbc0b289cb7f10b3037
  [libonnxruntime_providers_tensorrt.so]=ef6071798a339038ad66c428fb1a809cf8e499bffc3b6870e4e8bc4f4c6a6320
)
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/build/cache.sh"
dest=$root/build/lib/linux-amd64-cuda
stamp=$dest/.gpu-providers-$VERSION-$PKG_VERSION
if [ -f "$stamp" ]; then
  exit 0
fi
core=$root/build/lib/linux-amd64/libonnxruntime.so.1
[ -f "$core" ] || bash "$root/build/fetch-onnxruntime.sh"

mkdir -p "$cache" "$dest"
tgz=$cache/$PKG-$PKG_VERSION.tgz
if [ ! -f "$tgz" ] || ! echo "$SHA256  $tgz" | sha256sum -c --status; then
  echo "fetching $PKG@$PKG_VERSION from npm (179 MB)" >&2
  rm -f "$tgz"
  npm_pack "$PKG@$PKG_VERSION"
fi
if ! echo "$SHA256  $tgz" | sha256sum -c --status; then
  echo "$(basename "$tgz"): sha256 mismatch (want $SHA256); refusing to use it" >&2
  rm -f "$tgz"
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
members=()
for f in "${!FILE_SHA256[@]}"; do members+=("package/Plugins/Linux/x64/$f"); done
tar xzf "$tgz" -C "$tmp" "${members[@]}"
for f in "${!FILE_SHA256[@]}"; do
  got=$tmp/package/Plugins/Linux/x64/$f
  if ! echo "${FILE_SHA256[$f]}  $got" | sha256sum -c --status; then
    echo "$f in $PKG@$PKG_VERSION: sha256 mismatch (want ${FILE_SHA256[$f]}); refusing to use it" >&2
    exit 1
  fi
done
# The same version as the core: ONNX Runtime compiles its version string
# into the CUDA and TensorRT provider libraries.
for f in libonnxruntime_providers_cuda.so libonnxruntime_providers_tensorrt.so; do
  if ! grep -qaF -x -z "$VERSION" "$tmp/package/Plugins/Linux/x64/$f"; then
    echo "$f in $PKG@$PKG_VERSION is not ONNX Runtime $VERSION; refusing to use it" >&2
    exit 1
  fi
done
for f in "${!FILE_SHA256[@]}"; do cp "$tmp/package/Plugins/Linux/x64/$f" "$dest/"; done
cp "$core" "$dest/"
ln -sf libonnxruntime.so.1 "$dest/libonnxruntime.so"
if [ -f "$root/build/lib/LICENSE.onnxruntime" ]; then cp "$root/build/lib/LICENSE.onnxruntime" "$dest/"; fi
touch "$stamp"
echo "ONNX Runtime $VERSION CUDA/TensorRT provider libraries in $dest" >&2
