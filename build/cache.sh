# Sourced by the fetch scripts: where what they download is kept, outside
# the clone, as Go's module cache and npm's cache are, so that a fresh
# clone or `make clean` does not fetch and check it all again:
# $SVC_CACHE, or $XDG_CACHE_HOME/svc, or ~/.cache/svc. Every file in it is
# named by its version and checked (sha256 or npm's integrity) where it is
# used.
cache=${SVC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/svc}
mkdir -p "$cache"

# npm_pack SPEC: the npm package SPEC's tarball into the cache, written
# whole or not at all (another clone may be fetching it at the same time).
npm_pack() {
  local tmp rc=0
  tmp=$(mktemp -d "$cache/.pack.XXXXXX")
  (cd "$tmp" && npm pack --silent "$1" >/dev/null && mv -f ./*.tgz "$cache/") || rc=$?
  rm -rf "$tmp"
  return "$rc"
}
