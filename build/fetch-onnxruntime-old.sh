#!/usr/bin/env bash
# Fetches ONNX Runtime 1.24.1's linux x64 library from the npm package
# onnxruntime-node@1.24.1 (sha256 checked) into build/ort-old/linux-amd64/:
# an older library that svc accepts as runtime.library, for the tests that
# serve with it (an integer division by zero raises SIGFPE in it, where
# 1.29.0 fails cleanly). Nothing of it ships.
set -euo pipefail

VERSION=1.24.1
SHA256=57181cf6e6e711b155c5b942d591fd63ded0b5de5c4922d51fd994e7f6ac2772
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$root/build/ort-old}
stamp=$dest/.onnxruntime-$VERSION

if [ -f "$stamp" ]; then
  exit 0
fi
. "$root/build/cache.sh"
mkdir -p "$dest"
tgz=$cache/onnxruntime-node-$VERSION.tgz
if [ ! -f "$tgz" ] || ! echo "$SHA256  $tgz" | sha256sum -c --status; then
  echo "fetching onnxruntime-node@$VERSION from npm" >&2
  rm -f "$tgz"
  npm_pack "onnxruntime-node@$VERSION"
fi
if ! echo "$SHA256  $tgz" | sha256sum -c --status; then
  echo "onnxruntime-node-$VERSION.tgz: sha256 mismatch (want $SHA256); refusing to use it" >&2
  rm -f "$tgz"
  exit 1
fi
mkdir -p "$dest/linux-amd64"
tar xzf "$tgz" -O package/bin/napi-v6/linux/x64/libonnxruntime.so.1 >"$dest/linux-amd64/libonnxruntime.so.1"
ln -sf libonnxruntime.so.1 "$dest/linux-amd64/libonnxruntime.so"
# Only the library is kept.
rm -f "$tgz"
touch "$stamp"
echo "ONNX Runtime $VERSION (linux x64) in $dest/linux-amd64" >&2
