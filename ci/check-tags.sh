#!/usr/bin/env bash
# Checks every provider build tag (issue 5, item 4):
#   - each provider package is empty without its tag and holds its provider
#     with it (directml only on windows, coreml only on darwin), and nothing
#     outside providers/ imports a tagged provider (the always-compiled cpu
#     provider may be used directly, e.g. by tests);
#   - go vet and go build of every tag alone, and of all linux-compatible
#     tags together (plus the OS-gated ones, which must be no-ops on linux);
#   - the tagged providers' unit tests (-race);
#   - windows/amd64 with -tags directml, cross-compiled with mingw-w64
#     (build/cross-deps.sh installs it): go vet of the provider and core
#     packages and go build of cmd/svc.
# darwin (coreml) needs a macOS toolchain: ci/workflows/release.yml builds
# and tests it on a macOS runner.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
module=$($GO list -m)
linux_tags=(cuda tensorrt rocm openvino)
all_tags=(cuda tensorrt rocm openvino directml coreml)
fail=0
step() { printf '== %s\n' "$*" >&2; }
bad() { printf 'check-tags: %s\n' "$*" >&2; fail=1; }

step "provider packages follow their tags"
for tag in "${all_tags[@]}"; do
  pkg=./providers/$tag
  goos=linux
  case $tag in directml) goos=windows ;; coreml) goos=darwin ;; esac
  untagged=$(GOOS=$goos CGO_ENABLED=1 $GO list -f '{{join .GoFiles " "}}' "$pkg")
  tagged=$(GOOS=$goos CGO_ENABLED=1 $GO list -tags "$tag" -f '{{join .GoFiles " "}}' "$pkg")
  [ "$untagged" = "doc.go" ] || bad "$pkg without -tags $tag compiles more than doc.go: $untagged"
  [ "$tagged" != "doc.go" ] || bad "$pkg with -tags $tag on $goos compiles nothing but doc.go"
  allfiles=$(GOOS=$goos CGO_ENABLED=1 $GO list -tags "$tag" -f '{{join .GoFiles " "}}' ./providers/all)
  [[ " $allfiles " == *" $tag"* ]] || bad "providers/all with -tags $tag on $goos does not import it ($allfiles)"
  if [ "$goos" != linux ]; then
    onlinux=$($GO list -tags "$tag" -f '{{join .GoFiles " "}}' "$pkg")
    [ "$onlinux" = "doc.go" ] || bad "$pkg with -tags $tag compiles on linux: $onlinux"
  fi
done
importers=$($GO list -tags "${all_tags[*]}" -test -f '{{.ImportPath}}: {{join .Imports " "}}' ./... |
  grep -v "^$module/providers" |
  grep -E "$module/providers/(cuda|tensorrt|rocm|openvino|directml|coreml)( |$)" || true)
[ -z "$importers" ] || bad "only providers/ may import a tagged provider (the rest goes through providers/all and the fx group):
$importers"

step "go vet and go build, each tag alone"
for tag in "${linux_tags[@]}"; do
  $GO vet -tags "$tag" ./... || bad "go vet -tags $tag"
  $GO build -tags "$tag" ./... || bad "go build -tags $tag"
done
step "go vet and go build, all linux tags together, and with the OS-gated ones"
$GO vet -tags "${linux_tags[*]}" ./... || bad "go vet -tags '${linux_tags[*]}'"
$GO build -tags "${linux_tags[*]}" ./... || bad "go build -tags '${linux_tags[*]}'"
$GO build -tags "${all_tags[*]}" ./... || bad "go build -tags '${all_tags[*]}' on linux"

step "unit tests of the tagged providers"
$GO test -race -count=1 -tags "${linux_tags[*]}" ./providers/... || bad "go test -tags '${linux_tags[*]}' ./providers/..."

step "windows/amd64 -tags directml (mingw-w64)"
if ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
  bad "x86_64-w64-mingw32-gcc missing: run build/cross-deps.sh (make cross-deps)"
else
  win=(env GOOS=windows GOARCH=amd64 CGO_ENABLED=1 CC=x86_64-w64-mingw32-gcc)
  "${win[@]}" $GO vet -tags directml ./providers/... ./core/... || bad "windows go vet -tags directml"
  "${win[@]}" $GO vet -tags "directml ${linux_tags[*]}" ./providers/... || bad "windows go vet -tags 'directml ${linux_tags[*]}'"
  "${win[@]}" $GO build -tags directml -o /dev/null ./cmd/svc || bad "windows go build -tags directml ./cmd/svc"
fi

if [ "$fail" -ne 0 ]; then
  echo "check-tags: FAILED" >&2
  exit 1
fi
echo "check-tags: ok" >&2
