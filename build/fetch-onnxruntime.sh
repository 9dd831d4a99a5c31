#!/usr/bin/env bash
# Fetches the official ONNX Runtime 1.29.0 shared libraries from the npm
# package onnxruntime-node@1.29.0, checks the tarball's sha256 and extracts
# the library of every platform svc ships for under build/lib/<os>-<arch>/.
# The same version on every platform: linux x64/arm64 (WebGPU built in),
# windows x64 with DirectML.dll and the DirectX shader compiler
# (dxcompiler.dll, dxil.dll: WebGPU over D3D12), darwin arm64.
set -euo pipefail

VERSION=1.29.0
SHA256=cfdfb45ec4044b1fdca43e5d2e180fb6817e649ff8ad1e0dfc90e18e51b67037
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$root/build/lib}
. "$root/build/cache.sh"
stamp=$dest/.onnxruntime-$VERSION

if [ -f "$stamp" ]; then
  exit 0
fi
mkdir -p "$cache" "$dest"
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
install_lib windows-amd64 win32/x64/onnxruntime.dll win32/x64/DirectML.dll win32/x64/dxcompiler.dll win32/x64/dxil.dll
# The package has two identical copies of the dylib; its install name is
# @rpath/libonnxruntime.1.dylib, so that name is a link to the versioned file.
install_lib darwin-arm64 darwin/arm64/libonnxruntime.$VERSION.dylib
ln -sf libonnxruntime.$VERSION.dylib "$dest/darwin-arm64/libonnxruntime.1.dylib"
ln -sf libonnxruntime.$VERSION.dylib "$dest/darwin-arm64/libonnxruntime.dylib"
if [ -f "$tmp/package/LICENSE" ]; then cp "$tmp/package/LICENSE" "$dest/LICENSE.onnxruntime"; fi
touch "$stamp"
echo "ONNX Runtime $VERSION libraries in $dest" >&2
