#!/usr/bin/env bash
# Installs the Node tools the Go tests call (the independent OpenAPI
# validator @apidevtools/swagger-parser, used by openapi's tests) into
# build/node/, from the committed package.json and package-lock.json in
# openapi/testdata/nodetools/ (exact versions, integrity hashes). Nothing it
# writes is committed: build/node/ carries its own .gitignore.
#
# Usage: build/node-tools.sh [DEST]   (DEST defaults to build/node)
#
# Idempotent: does nothing when DEST already holds an install of the same lock.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$root/build/node}
src=$root/openapi/testdata/nodetools

command -v node >/dev/null || { echo "node is not installed (apt-get install nodejs npm)" >&2; exit 1; }
command -v npm >/dev/null || { echo "npm is not installed (apt-get install npm)" >&2; exit 1; }

want=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$want" ] &&
  [ -f "$dest/node_modules/@apidevtools/swagger-parser/package.json" ]; then
  exit 0
fi

mkdir -p "$dest"
printf '*\n' >"$dest/.gitignore"
cp "$src/package.json" "$src/package-lock.json" "$dest/"
(cd "$dest" && npm ci --no-audit --no-fund --loglevel=error)
echo "$want" >"$dest/.installed"
echo "node tools in $dest" >&2
