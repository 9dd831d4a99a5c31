#!/usr/bin/env bash
# Fetches the official ONNX Runtime 1.24.1 shared libraries from the npm
# package onnxruntime-node@1.24.1, checks the tarball's sha256 and extracts
# the library of every platform svc ships for under build/lib/<os>-<arch>/.
set -euo pipefail

VERSION=1.24.1
SHA256=57181cf6e6e711b155c5b942d591fd63ded0b5de5c4922d51fd994e7f6ac2772
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$root/build/lib}
cache=$root/build/cache
stamp=$dest/.onnxruntime-$VERSION

if [ -f "$stamp" ]; then
  exit 0
fi
mkdir -p "$cache" "$dest"
tgz=$cache/onnxruntime-node-$VERSION.tgz
if [ ! -f "$tgz" ] || ! echo "$SHA256  $tgz" | sha256sum -c --status; then
  echo "fetching onnxruntime-node@$VERSION from npm" >&2
  rm -f "$tgz"
  (cd "$cache" && npm pack --silent "onnxruntime-node@$VERSION" >/dev/null)
fi
if ! echo "$SHA256  $tgz" | sha256sum -c --status; then
  echo "onnxruntime-node-$VERSION.tgz: sha256 mismatch (want $SHA256); refusing to use it" >&2
  rm -f "$tgz"
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar xzf "$tgz" -C "$tmp" package/bin/napi-v6 package/LICENSE 2>/dev/null || tar xzf "$tgz" -C "$tmp" package/bin/napi-v6
src=$tmp/package/bin/napi-v6

install_lib() { # <platform dir> <files...>
  local out=$dest/$1; shift
  mkdir -p "$out"
  for f in "$@"; do cp "$src/$f" "$out/"; done
}
install_lib linux-amd64 linux/x64/libonnxruntime.so.1
ln -sf libonnxruntime.so.1 "$dest/linux-amd64/libonnxruntime.so"
install_lib linux-arm64 linux/arm64/libonnxruntime.so.1
ln -sf libonnxruntime.so.1 "$dest/linux-arm64/libonnxruntime.so"
install_lib windows-amd64 win32/x64/onnxruntime.dll win32/x64/DirectML.dll
install_lib darwin-arm64 darwin/arm64/libonnxruntime.1.24.1.dylib
ln -sf libonnxruntime.1.24.1.dylib "$dest/darwin-arm64/libonnxruntime.dylib"
if [ -f "$tmp/package/LICENSE" ]; then cp "$tmp/package/LICENSE" "$dest/LICENSE.onnxruntime"; fi
touch "$stamp"
echo "ONNX Runtime $VERSION libraries in $dest" >&2
