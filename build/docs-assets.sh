#!/usr/bin/env bash
# Fetches the Swagger UI and ReDoc bundles served by GET /docs and GET /redoc
# from their npm packages at pinned versions, checks the sha256 of each
# tarball and of each extracted file, and puts only the files the pages need
# (plus their licences) into the destination directory, which the openapi
# package embeds with go:embed. Nothing it writes is committed.
#
# Usage: build/docs-assets.sh [DEST]   (DEST defaults to openapi/assets/dist)
#
# Idempotent: when every file is already present with the right hash it does
# nothing and needs no network.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$root/openapi/assets/dist}
. "$root/build/cache.sh"

swagger_pkg=swagger-ui-dist@5.35.0
swagger_tgz=swagger-ui-dist-5.35.0.tgz
swagger_sha=1b8e891893404ea4c3558b6a87e2a3e494e7eedba41168c2ece5800a391a6ea6
redoc_pkg=redoc@2.5.4
redoc_tgz=redoc-2.5.4.tgz
redoc_sha=44922df4d0eb45c1b066c09ec251e6bd9bd7ded16bc69e87613337b9d911a56e

# <tarball> <member> <file in DEST> <sha256 of the file>
files=(
  "$swagger_tgz package/swagger-ui-bundle.js swagger-ui-bundle.js e6a898692f2d768e807c3ba4626068a69a2c5dd960dd6c76f3e4d3a3de180af2"
  "$swagger_tgz package/swagger-ui.css swagger-ui.css 5ed08757e53da3e026d6cbecc61fe5d43585c9560b302d534ad56692519a273d"
  "$swagger_tgz package/LICENSE swagger-ui-LICENSE cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
  "$swagger_tgz package/NOTICE swagger-ui-NOTICE 0d20d1adef18aee3f40dd258172155521ce702ac445cb5f7b7d60ed32dad2fb2"
  "$swagger_tgz package/swagger-ui-bundle.js.LICENSE.txt swagger-ui-bundle.js.LICENSE.txt 37eb6e7e59aed57b2c1acf076574b818ea07b74265717e0bd67b59e0baf9abbb"
  "$redoc_tgz package/bundles/redoc.standalone.js redoc.standalone.js dcaf76612bc4a3fbcc923a8966dee2f6146a5f32e5ce1b6f02dd60cbbf89500b"
  "$redoc_tgz package/LICENSE redoc-LICENSE d3026d549cf68ab7355bcfa85877bf8f845b3334a7efbfdc63936432fb34ff0e"
  "$redoc_tgz package/bundles/redoc.standalone.js.LICENSE.txt redoc.standalone.js.LICENSE.txt eed602ec32e00b2b9df1984fbcc26a687b1b3193ec01961389c4b8439e6edf73"
)

has_sha() { # <sha256> <file>
  [ -f "$2" ] && echo "$1  $2" | sha256sum -c --status
}

all_present() {
  local entry tgz member name sha
  for entry in "${files[@]}"; do
    read -r tgz member name sha <<<"$entry"
    has_sha "$sha" "$dest/$name" || return 1
  done
}

if all_present; then
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$cache" "$dest"

fetch() { # <package@version> <tarball> <sha256>
  local tgz=$cache/$2
  if has_sha "$3" "$tgz"; then return 0; fi
  echo "fetching $1 from npm" >&2
  (cd "$tmp" && npm pack --silent "$1" >/dev/null)
  if ! has_sha "$3" "$tmp/$2"; then
    echo "$2: sha256 mismatch (want $3); refusing to use it" >&2
    exit 1
  fi
  mv "$tmp/$2" "$tgz"
}

fetch "$swagger_pkg" "$swagger_tgz" "$swagger_sha"
fetch "$redoc_pkg" "$redoc_tgz" "$redoc_sha"

for entry in "${files[@]}"; do
  read -r tgz member name sha <<<"$entry"
  if has_sha "$sha" "$dest/$name"; then continue; fi
  tar xzf "$cache/$tgz" -O "$member" >"$tmp/$name"
  if ! has_sha "$sha" "$tmp/$name"; then
    echo "$member in $tgz: sha256 mismatch (want $sha)" >&2
    exit 1
  fi
  mv "$tmp/$name" "$dest/$name"
done
echo "documentation assets in $dest" >&2
