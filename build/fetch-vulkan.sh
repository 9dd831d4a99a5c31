#!/usr/bin/env bash
# Fetches a software Vulkan driver for the WebGPU tests: SwiftShader, as
# shipped in the npm package @sparticuz/chromium@153.0.0 (bin/swiftshader.tar.br),
# checks the tarball's sha256 and unpacks it into build/vulkan/:
#   libvk_swiftshader.so, vk_swiftshader_icd.json (relative library_path),
#   libvulkan.so.1 (its own Vulkan loader), libEGL.so, libGLESv2.so
# Nothing is installed system-wide: the tests use it only through
#   VK_ICD_FILENAMES=build/vulkan/vk_swiftshader_icd.json LD_LIBRARY_PATH=build/vulkan
# in the environment of the svc process they start. Unpacking needs Debian's
# brotli (installed through ci/apt-install.sh when missing).
set -euo pipefail

PACKAGE=@sparticuz/chromium
VERSION=153.0.0
SHA256=20e5656fcdcf4118ede85edfb9d6bb9cc1bbb7ffb8b75622fffbcf36a835c3c0
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$root/build/vulkan}
. "$root/build/cache.sh"
stamp=$dest/.swiftshader-$VERSION

if [ -f "$stamp" ]; then
  exit 0
fi
command -v brotli >/dev/null || bash "$root/ci/apt-install.sh" brotli
mkdir -p "$cache"
tgz=$cache/sparticuz-chromium-$VERSION.tgz
if [ ! -f "$tgz" ] || ! echo "$SHA256  $tgz" | sha256sum -c --status; then
  echo "fetching $PACKAGE@$VERSION from npm" >&2
  rm -f "$tgz"
  npm_pack "$PACKAGE@$VERSION"
fi
if ! echo "$SHA256  $tgz" | sha256sum -c --status; then
  echo "sparticuz-chromium-$VERSION.tgz: sha256 mismatch (want $SHA256); refusing to use it" >&2
  rm -f "$tgz"
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar xzf "$tgz" -C "$tmp" package/bin/swiftshader.tar.br
rm -rf "$dest"
mkdir -p "$dest"
brotli -d -c "$tmp/package/bin/swiftshader.tar.br" | tar x -C "$dest"
for f in libvk_swiftshader.so vk_swiftshader_icd.json libvulkan.so.1; do
  [ -f "$dest/$f" ] || { echo "fetch-vulkan: $f is not in bin/swiftshader.tar.br" >&2; exit 1; }
done
touch "$stamp"
echo "SwiftShader (Vulkan, from $PACKAGE@$VERSION) in $dest" >&2
