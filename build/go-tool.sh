#!/usr/bin/env bash
# Installs a Go tool at a pinned version as DEST, built once per version
# into the download cache (build/cache.sh) and copied from there: a fresh
# clone does not link helm (15 s) and the others again. The cache is keyed
# by the Go release too: staticcheck must be built by the Go that the code
# it checks needs.
#
# Usage: build/go-tool.sh PACKAGE VERSION DEST
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/build/cache.sh"
pkg=$1 version=$2 dest=$3
name=$(basename "$pkg")
kept=$cache/go-tools/$name@$version-$(${GO:-go} env GOVERSION)/$name
if [ ! -x "$kept" ]; then
  tmp=$(mktemp -d "$cache/.tool.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  GOBIN=$tmp ${GO:-go} install "$pkg@$version"
  mkdir -p "$(dirname "$kept")"
  mv -f "$tmp/$name" "$kept"
fi
mkdir -p "$(dirname "$dest")"
cp -f "$kept" "$dest"
