#!/usr/bin/env bash
# Checks every provider build tag (issue 5, item 4), as the providers declare
# them (svc providers --tags):
#   - each provider package holds only its metadata (doc.go, known.go)
#     without its tag and its provider with it (directml only on windows,
#     coreml only on darwin), providers/all imports it, and nothing
#     outside providers/ imports a tagged provider (the always-compiled cpu
#     provider may be used directly, e.g. by tests);
#   - go vet of every package with each tag alone, and go build of the
#     main packages the tag changes; go vet and go build of everything with
#     all linux-compatible tags together (and a build of what the OS-gated
#     ones add, which on linux must be nothing new);
#   - the tagged providers' unit tests (-race);
#   - windows/amd64 with the windows-only tags (directml), cross-compiled
#     with mingw-w64 (build/cross-deps.sh installs it): go vet of the
#     provider and core packages and go build of cmd/svc.
# darwin (coreml) needs a macOS toolchain: ci/workflows/release.yml builds
# and tests it on a macOS runner.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
module=$($GO list -m)
fail=0
step() { printf '== %s\n' "$*" >&2; }
bad() { printf 'check-tags: %s\n' "$*" >&2; fail=1; }

# The tags come from the providers' own declarations: 'svc providers --tags'
# prints "name goos" per tagged provider (goos "any" = every OS).
step "provider build tags (svc providers --tags)"
tag_list=$($GO run ./cmd/svc providers --tags) || { echo "check-tags: svc providers --tags failed" >&2; exit 1; }
linux_tags=() all_tags=()
declare -A tag_goos=()
while read -r tag goos; do
  [ -n "$tag" ] || continue
  all_tags+=("$tag")
  case $goos in any | linux) linux_tags+=("$tag"); tag_goos[$tag]=linux ;; *) tag_goos[$tag]=$goos ;; esac
done <<<"$tag_list"
[ ${#all_tags[@]} -gt 0 ] && [ ${#linux_tags[@]} -gt 0 ] || { echo "check-tags: no provider tags from svc providers --tags: '$tag_list'" >&2; exit 1; }
echo "tags: ${all_tags[*]} (linux: ${linux_tags[*]})" >&2

# Without its tag a provider package compiles only its documentation and
# its untagged metadata (the files with no build constraint).
meta="doc.go known.go"
step "provider packages follow their tags"
for tag in "${all_tags[@]}"; do
  pkg=./providers/$tag
  goos=${tag_goos[$tag]}
  [ -d "$pkg" ] || { bad "$pkg missing for the declared tag $tag"; continue; }
  untagged=$(GOOS=$goos CGO_ENABLED=1 $GO list -f '{{join .GoFiles " "}}' "$pkg")
  tagged=$(GOOS=$goos CGO_ENABLED=1 $GO list -tags "$tag" -f '{{join .GoFiles " "}}' "$pkg")
  [ "$untagged" = "$meta" ] || bad "$pkg without -tags $tag compiles more than $meta: $untagged"
  [ "$tagged" != "$meta" ] || bad "$pkg with -tags $tag on $goos compiles nothing but $meta"
  allimports=$(GOOS=$goos CGO_ENABLED=1 $GO list -tags "$tag" -f '{{join .Imports " "}}' ./providers/all)
  [[ " $allimports " == *" $module/providers/$tag "* ]] || bad "providers/all with -tags $tag on $goos does not import it ($allimports)"
  if [ "$goos" != linux ]; then
    onlinux=$($GO list -tags "$tag" -f '{{join .GoFiles " "}}' "$pkg")
    [ "$onlinux" = "$meta" ] || bad "$pkg with -tags $tag compiles on linux: $onlinux"
  fi
done
tag_re=$(IFS='|'; echo "${all_tags[*]}")
importers=$($GO list -tags "${all_tags[*]}" -test -f '{{.ImportPath}}: {{join .Imports " "}}' ./... |
  grep -v "^$module/providers" |
  grep -E "$module/providers/($tag_re)( |$)" || true)
[ -z "$importers" ] || bad "only providers/ may import a tagged provider (the rest goes through providers/all and the fx group):
$importers"

# tagged_mains prints the main packages that link other code with the
# tags $1 than without: those importing, at any depth, a package whose
# files the tags change. go vet -tags has type-checked every package
# with them; linking the mains the tags leave alone again would check
# nothing new (a link of svc is most of a build's cost).
untagged_files=$($GO list -f '{{.ImportPath}} {{.GoFiles}} {{.CgoFiles}}' ./...)
# tagged TAGS GO-LIST-ARGS...: the main packages go list finds (with -test:
# the test binaries, named PKG.test) that link, at any depth, a package
# whose files TAGS change.
tagged() {
  local tags=$1 changed
  shift
  changed=$(comm -13 <(echo "$untagged_files" | sort) <($GO list -tags "$tags" -f '{{.ImportPath}} {{.GoFiles}} {{.CgoFiles}}' ./... | sort) | cut -d' ' -f1)
  [ -n "$changed" ] || return 0
  $GO list -tags "$tags" -f '{{if eq .Name "main"}}{{.ImportPath}} {{join .Deps " "}}{{end}}' "$@" |
    grep -F -w -f <(echo "$changed") | cut -d' ' -f1
}
tagged_mains() { tagged "$1" ./...; }
build_tagged() {
  local mains
  mains=$(tagged_mains "$1")
  [ -n "$mains" ] || { bad "-tags '$1' changes no main package's code"; return; }
  # shellcheck disable=SC2086 # one package path a word
  $GO build -tags "$1" -o "$bin/" $mains || bad "go build -tags '$1' $(echo $mains)"
}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT

step "go vet of every package and go build of the main packages it changes, each tag alone"
for tag in "${linux_tags[@]}"; do
  $GO vet -tags "$tag" ./... || bad "go vet -tags $tag"
  build_tagged "$tag"
done
step "go vet and go build, all linux tags together, and with the OS-gated ones"
$GO vet -tags "${linux_tags[*]}" ./... || bad "go vet -tags '${linux_tags[*]}'"
$GO build -tags "${linux_tags[*]}" ./... || bad "go build -tags '${linux_tags[*]}'"
build_tagged "${all_tags[*]}"

step "unit tests of the tagged providers"
# Those of the packages under providers/ the tags change: the rest run
# untagged in make test's race pass.
tagged_tests=$(tagged "${linux_tags[*]}" -test ./providers/... | sed -n 's/\.test$//p')
[ -n "$tagged_tests" ] || bad "-tags '${linux_tags[*]}' changes no package with tests under providers/"
# shellcheck disable=SC2086 # one package path a word
$GO test -race -ldflags=-w -count=1 -tags "${linux_tags[*]}" $tagged_tests || bad "go test -tags '${linux_tags[*]}' $(echo $tagged_tests)"

win_tags=()
for tag in "${all_tags[@]}"; do [ "${tag_goos[$tag]}" != windows ] || win_tags+=("$tag"); done
step "windows/amd64 -tags '${win_tags[*]}' (mingw-w64)"
if ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
  bad "x86_64-w64-mingw32-gcc missing: run build/cross-deps.sh (make cross-deps)"
else
  win=(env GOOS=windows GOARCH=amd64 CGO_ENABLED=1 CC=x86_64-w64-mingw32-gcc)
  "${win[@]}" $GO vet -tags "${win_tags[*]}" ./providers/... ./core/... || bad "windows go vet -tags '${win_tags[*]}'"
  "${win[@]}" $GO vet -tags "${win_tags[*]} ${linux_tags[*]}" ./providers/... || bad "windows go vet -tags '${win_tags[*]} ${linux_tags[*]}'"
  "${win[@]}" $GO build -tags "${win_tags[*]}" -o /dev/null ./cmd/svc || bad "windows go build -tags '${win_tags[*]}' ./cmd/svc"
fi

if [ "$fail" -ne 0 ]; then
  echo "check-tags: FAILED" >&2
  exit 1
fi
echo "check-tags: ok" >&2
