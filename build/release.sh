#!/usr/bin/env bash
# Builds svc release archives: for each target, the svc binary (version
# stamped into 'svc version'), the matching ONNX Runtime 1.29.0 library in
# lib/ next to it (the first place the binary looks), install.sh (linux and
# darwin: build/install-files.sh, which installs by renaming each file into
# place, never writing over a running install), the README and
# THIRD_PARTY_NOTICES from build/release/, and svc's LICENSE (Apache-2.0);
# then a SHA256SUMS file over the archives.
#
# Usage: build/release.sh VERSION [TARGET...]
#   VERSION  x.y.z (optionally -prerelease or +build), as in 'svc version'
#   TARGET   os/arch[:variant] among
#              linux/amd64        gcc                       (default)
#              linux/arm64        aarch64-linux-gnu-gcc     (default)
#              windows/amd64      x86_64-w64-mingw32-gcc, -tags directml,
#                                 with DirectML.dll         (default)
#              darwin/arm64       clang on macOS, -tags coreml
#              linux/amd64:cuda   gcc, -tags "cuda tensorrt", with the
#                                 provider libraries from
#                                 build/lib/linux-amd64-cuda (see
#                                 make lib-cuda)
# Environment: OUT (default build/artifacts/release/VERSION), GO (go),
#   SOURCE_DATE_EPOCH (archive timestamps; default: the last commit's time).
#
# Needs the libraries (make lib), the docs assets (make assets) and the
# cross compilers (build/cross-deps.sh); 'make release' runs all of them.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
version=${1:-}
if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$ ]]; then
  echo "usage: build/release.sh VERSION [TARGET...]  (VERSION like 1.2.3, got '${version}')" >&2
  exit 2
fi
shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(linux/amd64 linux/arm64 windows/amd64)
fi
out=${OUT:-$root/build/artifacts/release/$version}
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)}
templates=$root/build/release

die() { echo "release: $*" >&2; exit 1; }
sha256() { if command -v sha256sum >/dev/null; then sha256sum "$@"; else shasum -a 256 "$@"; fi; }

[ -f "$root/openapi/assets/dist/swagger-ui-bundle.js" ] || die "docs assets missing: run 'make assets'"
[ -f "$root/LICENSE" ] || die "LICENSE missing: every archive carries svc's licence"
mkdir -p "$out"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# build_target <os/arch[:variant]>: builds, stages and archives one target.
build_target() {
  local target=$1 goos goarch variant="" cc tags="" exe="" libsrc libs=() name dir
  goos=${target%%/*}
  goarch=${target#*/}
  if [[ $goarch == *:* ]]; then variant=${goarch#*:}; goarch=${goarch%%:*}; fi
  libsrc=$root/build/lib/$goos-$goarch
  case "$goos/$goarch${variant:+:$variant}" in
    linux/amd64) cc=gcc; libs=(libonnxruntime.so.1) ;;
    linux/arm64) cc=aarch64-linux-gnu-gcc; libs=(libonnxruntime.so.1) ;;
    windows/amd64) cc=x86_64-w64-mingw32-gcc; tags=directml; exe=.exe; libs=(onnxruntime.dll DirectML.dll dxcompiler.dll dxil.dll) ;;
    darwin/arm64) cc=clang; tags=coreml; libs=(libonnxruntime.1.29.0.dylib) ;;
    linux/amd64:cuda)
      cc=gcc; tags="cuda tensorrt"; libsrc=$root/build/lib/linux-amd64-cuda
      libs=(libonnxruntime.so.1 libonnxruntime_providers_shared.so libonnxruntime_providers_cuda.so libonnxruntime_providers_tensorrt.so) ;;
    *) die "unknown target $target" ;;
  esac
  if [ "$goos" = darwin ] && [ "$(uname -s)" != Darwin ]; then
    die "darwin/arm64 needs macOS (ci/workflows/release.yml builds it on a macOS runner)"
  fi
  command -v "$cc" >/dev/null || die "$cc missing: run build/cross-deps.sh (make cross-deps)"
  name=svc-$version-$goos-$goarch${variant:+-$variant}
  dir=$stage/$name
  mkdir -p "$dir/lib"

  echo "release: building $name (CC=$cc${tags:+, -tags $tags})" >&2
  CGO_ENABLED=1 GOOS=$goos GOARCH=$goarch CC=$cc \
    $GO build -trimpath -tags "$tags" -ldflags "-s -w -X main.version=$version" -o "$dir/svc$exe" ./cmd/svc

  for f in "${libs[@]}"; do
    [ -f "$libsrc/$f" ] || die "$libsrc/$f missing (make lib${variant:+ lib-cuda})"
    cp "$libsrc/$f" "$dir/lib/"
  done
  if [ "$goos" != windows ]; then
    cp "$root/build/install-files.sh" "$dir/install.sh"
    chmod 0755 "$dir/install.sh"
  fi
  case $goos in
    linux) ln -s libonnxruntime.so.1 "$dir/lib/libonnxruntime.so" ;;
    darwin)
      ln -s libonnxruntime.1.29.0.dylib "$dir/lib/libonnxruntime.1.dylib"
      ln -s libonnxruntime.1.29.0.dylib "$dir/lib/libonnxruntime.dylib" ;;
  esac

  # README: the common text with this platform's part and values filled in;
  # the lines marked @UNIX@ are for linux and darwin, @WINDOWS@ for windows.
  local os_part=$templates/README.$goos.txt keep=UNIX drop=WINDOWS
  [ "$variant" = cuda ] && os_part=$templates/README.linux-cuda.txt
  [ "$goos" = windows ] && keep=WINDOWS drop=UNIX
  awk -v part="$os_part" '/@PLATFORM_NOTES@/ { while ((getline l < part) > 0) print l; next } { print }' "$templates/README.txt" |
    sed -e "/@$drop@/d" -e "s| *@$keep@\$||" -e "s|@VERSION@|$version|g" -e "s|@TARGET@|$goos/$goarch${variant:+ ($variant)}|g" \
      -e "s|@NAME@|$name|g" -e "s|@EXE@|svc$exe|g" -e "s|@TAGS@|${tags:-none (CPU only)}|g" >"$dir/README.txt"

  notices "$goos" "$goarch" "$tags" >"$dir/THIRD_PARTY_NOTICES.txt"
  cp "$root/LICENSE" "$dir/LICENSE"
  if [ "$goos" = windows ]; then
    # CRLF text for Notepad.
    for f in "$dir"/*.txt "$dir"/LICENSE; do [ -f "$f" ] && sed -i 's/$/\r/' "$f"; done
  fi

  find "$dir" -exec touch -h -d "@$epoch" {} + 2>/dev/null ||
    TZ=UTC find "$dir" -exec touch -h -t "$(date -u -r "$epoch" +%Y%m%d%H%M.%S)" {} +
  rm -f "$out/$name.tar.gz" "$out/$name.zip"
  # A tarball at gzip's default level: -9 takes about twice the CPU for an
  # archive 0.1 % smaller (the CUDA build's 275 MB tar: 195.85 MB against
  # 196.06), ONNX Runtime's libraries being most of every archive.
  if [ "$goos" = windows ]; then
    command -v zip >/dev/null || die "zip missing: run build/cross-deps.sh"
    (cd "$stage" && find "$name" -print | LC_ALL=C sort | zip -q -X -D -@ "$out/$name.zip")
  elif tar --version 2>/dev/null | grep -q GNU; then
    tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -cf - "$name" | gzip -n -6 >"$out/$name.tar.gz"
  else
    tar -C "$stage" -cf - "$name" | gzip -n -6 >"$out/$name.tar.gz"
  fi
  echo "release: $(ls "$out/$name".*)" >&2
}

# notices <goos> <goarch> <tags>: the notices template, then the licence of
# every Go module compiled into that build and of the embedded web assets.
notices() {
  local goos=$1 goarch=$2 tags=$3 mod dir lic
  cat "$templates/THIRD_PARTY_NOTICES.txt"
  if [ "$goos" = windows ]; then cat "$templates/THIRD_PARTY_NOTICES.directml.txt"; fi
  printf '\n================================================================================\nGo %s (runtime and standard library, compiled into svc)\n================================================================================\n\n' \
    "$($GO env GOVERSION)"
  cat "$($GO env GOROOT)/LICENSE"
  printf '\n================================================================================\nGo modules compiled into svc\n================================================================================\n'
  while read -r mod; do
    dir=$($GO list -m -f '{{.Dir}}' "$mod")
    lic=$(find "$dir" -maxdepth 1 -type f \( -iname 'LICENSE*' -o -iname 'LICENCE*' -o -iname 'COPYING*' \) | LC_ALL=C sort | head -n 1)
    [ -n "$lic" ] || die "no licence file in Go module $mod ($dir)"
    printf '\n--------------------------------------------------------------------------------\n%s %s\n--------------------------------------------------------------------------------\n\n' \
      "$mod" "$($GO list -m -f '{{.Version}}' "$mod")"
    cat "$lic"
    for notice in $(find "$dir" -maxdepth 1 -type f -iname 'NOTICE*' | LC_ALL=C sort); do
      printf '\n'
      cat "$notice"
    done
  done < <(CGO_ENABLED=1 GOOS=$goos GOARCH=$goarch $GO list -deps -tags "$tags" \
    -f '{{with .Module}}{{if not .Main}}{{.Path}}{{end}}{{end}}' ./cmd/svc | LC_ALL=C sort -u)
  printf '\n================================================================================\nWeb assets embedded for /docs and /redoc\n================================================================================\n'
  for lic in "$root"/openapi/assets/dist/*LICENSE* "$root"/openapi/assets/dist/*NOTICE*; do
    [ -f "$lic" ] || continue
    printf '\n--------------------------------------------------------------------------------\n%s\n--------------------------------------------------------------------------------\n\n' "$(basename "$lic")"
    cat "$lic"
  done
}

for t in "${targets[@]}"; do
  build_target "$t"
done

(cd "$out" && sha256 $(ls -1 svc-"$version"-*.tar.gz svc-"$version"-*.zip 2>/dev/null | LC_ALL=C sort) >SHA256SUMS)
echo "release: $out/SHA256SUMS" >&2
cat "$out/SHA256SUMS" >&2
