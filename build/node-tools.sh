#!/usr/bin/env bash
# Installs the Node tools the Go tests call into build/node/: the
# independent OpenAPI validator @apidevtools/swagger-parser, used by
# openapi's tests, from the committed package.json and package-lock.json
# in openapi/testdata/nodetools/; and into build/node/clients/ the
# third-party clients cmd/svc's TestTextClients runs against svc (the
# openai SDK, @langchain/openai, cohere-ai), from cmd/svc/testdata/clients/
# (exact versions, integrity hashes, from the npm registry). With --peer,
# also into build/node/textpeer/ make bench's peer, Transformers.js (npm
# @huggingface/transformers, from build/textpeer/, the same way; its
# onnxruntime-node's install script, which would fetch CUDA libraries from
# outside the registry, is skipped: its CPU library comes in the package);
# and into build/node/ocrpeer/ make ocr-bench's peer, Guten OCR (npm
# @gutenye/ocr-node, from build/ocrpeer/, the same way, its
# onnxruntime-node held by an override at the ONNX Runtime svc runs).
# Nothing it writes is committed: build/node/ carries its own .gitignore.
#
# Usage: build/node-tools.sh [--peer] [DEST]   (DEST defaults to build/node)
#
# Idempotent: does nothing when DEST already holds an install of the same lock.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/build/cache.sh"
peer=false
if [ "${1:-}" = --peer ]; then
  peer=true
  shift
fi
dest=${1:-$root/build/node}
src=$root/openapi/testdata/nodetools

command -v node >/dev/null || { echo "node is not installed (apt-get install nodejs npm)" >&2; exit 1; }
command -v npm >/dev/null || { echo "npm is not installed (apt-get install npm)" >&2; exit 1; }

# install SRC DEST MARKER: npm ci of SRC's lock in DEST, unless DEST holds
# an install of the same lock (MARKER: a package it must have).
install() {
  local src=$1 dest=$2 marker=$3 want
  want=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)
  if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$want" ] &&
    [ -f "$dest/node_modules/$marker/package.json" ]; then
    return 0
  fi
  # Installed once per lock into the download cache (build/cache.sh),
  # and copied from there: npm ci takes 15 s, the copy one.
  local kept=$cache/node/$want
  if [ ! -f "$kept/.installed" ]; then
    local tmp
    tmp=$(mktemp -d "$cache/.node.XXXXXX")
    cp "$src/package.json" "$src/package-lock.json" "$tmp/"
    (cd "$tmp" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --registry=https://registry.npmjs.org/ --no-audit --no-fund --loglevel=error) || { rm -rf "$tmp"; return 1; }
    echo "$want" >"$tmp/.installed"
    mkdir -p "$cache/node"
    mv -T "$tmp" "$kept" 2>/dev/null || rm -rf "$tmp" # another clone's install won
  fi
  rm -rf "$dest/node_modules"
  mkdir -p "$dest"
  cp -a "$kept/." "$dest/"
  printf '*\n' >"$dest/.gitignore"
  echo "node tools in $dest" >&2
}

install "$src" "$dest" @apidevtools/swagger-parser
install "$root/cmd/svc/testdata/clients" "$dest/clients" cohere-ai
if $peer; then
  install "$root/build/textpeer" "$dest/textpeer" @huggingface/transformers
  install "$root/build/ocrpeer" "$dest/ocrpeer" @gutenye/ocr-node
fi
