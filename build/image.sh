#!/usr/bin/env bash
# Builds the svc container images (build/Containerfile, FROM scratch) for
# linux/amd64 and linux/arm64, and the CUDA variant for linux/amd64, with
# buildah: no daemon, no registry, no base
# image. For each architecture it builds the release archive
# (build/release.sh), unpacks it into a root filesystem with the dynamic
# loader and exactly the shared libraries svc and ONNX Runtime need (found by
# walking their DT_NEEDED entries with readelf: the host's Debian libraries
# for amd64, the arm64 cross toolchain's Debian libraries for arm64) with
# their copyright files in /usr/share/doc, svc's LICENSE (in /opt/svc from
# the archive, and as /usr/share/doc/svc/LICENSE beside the libraries'
# notices), CA certificates, /etc/passwd with the non-root user svc (65532),
# /tmp and the /mnt/models mount point; then builds the image with every
# timestamp fixed and exports it as an OCI archive.
#
# Usage: build/image.sh [--context-only|--check-reproducible] VERSION [ARCH...]
#   VERSION               x.y.z (as for build/release.sh)
#   ARCH                  amd64, arm64, amd64-cuda (default: all three).
#                         amd64-cuda is the linux/amd64:cuda release build
#                         (-tags "cuda tensorrt", ONNX Runtime's CUDA and
#                         TensorRT provider libraries from make lib-cuda);
#                         the NVIDIA driver and the CUDA 13, cuDNN 9 and
#                         TensorRT 10 libraries are the host's (NVIDIA
#                         Container Toolkit) or mounted (SVC_CUDA_LIBRARY_PATH)
#   --context-only        prepare the build context and stop (for
#                         docker/podman builds elsewhere; see build/Containerfile)
#   --check-reproducible  then stage the context again from the same release
#                         archives, build again and fail unless the image ids
#                         are the same
# Environment: OUT (build/artifacts/image), STORE (buildah/podman storage,
#   build/artifacts/containers: a private root, the system store is never
#   touched), SOURCE_DATE_EPOCH (default: the last commit's time).
# Output: OUT/svc-VERSION-linux-ARCH.oci.tar, OUT/svc-linux-ARCH.iid (the
#   image id) and the image localhost/svc:VERSION-ARCH in STORE.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
context_only=false
check=false
case ${1:-} in
  --context-only) context_only=true; shift ;;
  --check-reproducible) check=true; shift ;;
esac
version=${1:-}
if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$ ]]; then
  echo "usage: build/image.sh [--context-only] VERSION [ARCH...]  (VERSION like 1.2.3, got '${version}')" >&2
  exit 2
fi
shift
arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=(amd64 arm64 amd64-cuda)
out=${OUT:-$root/build/artifacts/image}
store=${STORE:-$root/build/artifacts/containers}
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}
export SOURCE_DATE_EPOCH=$epoch
tag=${version//+/_}
ctx=$out/context

die() { echo "image: $*" >&2; exit 1; }

# stage_rootfs <arch>: ctx/rootfs-<arch> from the release archive and the
# libraries it needs.
stage_rootfs() {
  local arch=$1 triplet libdirs docs archive rootfs interp
  case $arch in
    amd64|amd64-cuda)
      triplet=x86_64-linux-gnu
      libdirs=(/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu)
      docs=(/usr/share/doc/libc6 /usr/share/doc/libstdc++6 /usr/share/doc/libgcc-s1) ;;
    arm64)
      triplet=aarch64-linux-gnu
      libdirs=(/usr/aarch64-linux-gnu/lib)
      docs=(/usr/share/doc/libc6-arm64-cross /usr/share/doc/libstdc++6-arm64-cross /usr/share/doc/libgcc-s1-arm64-cross) ;;
    *) die "unknown architecture $arch (amd64, arm64, amd64-cuda)" ;;
  esac
  command -v readelf >/dev/null || die "readelf missing (binutils)"
  [ -f /etc/ssl/certs/ca-certificates.crt ] || die "/etc/ssl/certs/ca-certificates.crt missing: run ci/install-deps.sh"

  archive=$out/release/svc-$version-linux-$arch.tar.gz
  [ -f "$archive" ] || die "no release archive at $archive"

  rootfs=$ctx/rootfs-$arch
  rm -rf "$rootfs"
  mkdir -p "$rootfs/opt" "$rootfs/lib/$triplet" "$rootfs/etc/ssl/certs" "$rootfs/tmp" "$rootfs/mnt/models" "$rootfs/usr/share/doc"
  tar -xzf "$archive" -C "$rootfs/opt"
  mv "$rootfs/opt/svc-$version-linux-$arch" "$rootfs/opt/svc"

  interp=$(readelf -l "$rootfs/opt/svc/svc" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
  [ -n "$interp" ] || die "svc ($arch) has no program interpreter"
  copy_lib "$(find_lib "$(basename "$interp")" "${libdirs[@]}")" "$rootfs$interp"

  # Every DT_NEEDED of svc and ONNX Runtime, transitively.
  local queue=("$rootfs/opt/svc/svc" "$rootfs/opt/svc/lib/libonnxruntime.so.1") seen=" " elf so src
  while [ ${#queue[@]} -gt 0 ]; do
    elf=${queue[0]}
    queue=("${queue[@]:1}")
    for so in $(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | LC_ALL=C sort); do
      [ "$so" = "$(basename "$interp")" ] && continue
      [[ $seen == *" $so "* ]] && continue
      seen="$seen$so "
      src=$(find_lib "$so" "${libdirs[@]}")
      copy_lib "$src" "$rootfs/lib/$triplet/$so"
      queue+=("$rootfs/lib/$triplet/$so")
    done
  done
  echo "image: linux/$arch libraries:$seen(loader $interp)" >&2

  [ -f "$rootfs/opt/svc/LICENSE" ] || die "$archive lacks LICENSE"
  mkdir -p "$rootfs/usr/share/doc/svc"
  cp "$rootfs/opt/svc/LICENSE" "$rootfs/usr/share/doc/svc/LICENSE"
  for d in "${docs[@]}"; do
    [ -f "$d/copyright" ] || die "$d/copyright missing"
    mkdir -p "$rootfs/usr/share/doc/$(basename "$d")"
    cp "$d/copyright" "$rootfs/usr/share/doc/$(basename "$d")/copyright"
  done
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nsvc:x:65532:65532:svc:/home/svc:/sbin/nologin\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\nsvc:x:65532:\n' >"$rootfs/etc/group"
  printf 'hosts: files dns\n' >"$rootfs/etc/nsswitch.conf"
  normalize "$rootfs"
  chmod 1777 "$rootfs/tmp"
}

# find_lib <soname> <dir...>: the first file by that name.
find_lib() {
  local so=$1 d
  shift
  for d in "$@"; do
    if [ -e "$d/$so" ]; then echo "$d/$so"; return; fi
  done
  die "shared library $so not found in $* (gcc-aarch64-linux-gnu and libc6-dev-arm64-cross provide the arm64 ones: build/cross-deps.sh)"
}

# copy_lib <src> <dst>: the file behind src (symlinks resolved) at dst.
copy_lib() {
  mkdir -p "$(dirname "$2")"
  cp -L "$1" "$2"
}

# normalize <dir>: fixed modes and timestamps, whatever the umask and clock.
normalize() {
  find "$1" -type d -exec chmod 0755 {} +
  find "$1" -type f -exec chmod 0644 {} +
  find "$1" -type f \( -path '*/opt/svc/svc' -o -name 'ld-linux*' \) -exec chmod 0755 {} +
  find "$1" -exec touch -h -d "@$epoch" {} +
}

# stage_context: ctx with every architecture's root filesystem.
stage_context() {
  rm -rf "$ctx"
  mkdir -p "$ctx/home"
  for arch in "${arches[@]}"; do
    stage_rootfs "$arch"
  done
  normalize "$ctx/home"
  touch -h -d "@$epoch" "$ctx"
}

for arch in "${arches[@]}"; do
  target=linux/$arch
  [ "$arch" = amd64-cuda ] && target=linux/amd64:cuda
  OUT=$out/release bash build/release.sh "$version" "$target"
done
stage_context
if $context_only; then
  echo "image: build context in $ctx (build with: podman build --platform linux/ARCH -f build/Containerfile $ctx)" >&2
  exit 0
fi

command -v buildah >/dev/null || die "buildah missing: run ci/install-deps.sh"
mkdir -p "$store"
printf '{"default":[{"type":"insecureAcceptAnything"}]}\n' >"$store/policy.json"
buildah=(buildah --root "$store/root" --runroot "$store/run" --storage-driver vfs)
# build_image <arch> <iidfile> <tag>: <arch> is amd64, arm64 or amd64-cuda
# (the platform, then the variant: the root filesystem rootfs-<arch> and,
# for CUDA, the NVIDIA Container Toolkit's variables).
build_image() {
  local platform=${1%%-*} variant=${1#*-} gpu=()
  [ "$variant" = "$1" ] && variant=
  [ "$variant" = cuda ] && gpu=(--build-arg NVIDIA_DEVICES=all)
  "${buildah[@]}" build --quiet --platform "linux/$platform" --timestamp "$epoch" --build-arg "VERSION=$version" \
    --build-arg "VARIANT=${variant:+-$variant}" "${gpu[@]}" \
    --signature-policy "$store/policy.json" --iidfile "$2" \
    -f "$root/build/Containerfile" -t "$3" "$ctx" >/dev/null
}
for arch in "${arches[@]}"; do
  start=$(date +%s)
  name=svc-$version-linux-$arch
  build_image "$arch" "$out/svc-linux-$arch.iid" "localhost/svc:$tag-$arch"
  rm -f "$out/$name.oci.tar"
  "${buildah[@]}" push --quiet --signature-policy "$store/policy.json" "localhost/svc:$tag-$arch" "oci-archive:$out/$name.oci.tar:svc:$tag"
  echo "image: $out/$name.oci.tar ($(du -h "$out/$name.oci.tar" | cut -f1), image id $(cat "$out/svc-linux-$arch.iid"), $(($(date +%s) - start)) s)" >&2
done

# Earlier builds' images, untagged by these, would pile up in the store.
"${buildah[@]}" rmi --prune >/dev/null 2>&1 || true

if $check; then
  stage_context
  for arch in "${arches[@]}"; do
    build_image "$arch" "$out/svc-linux-$arch.check.iid" "localhost/svc:$tag-$arch-check"
    "${buildah[@]}" rmi "localhost/svc:$tag-$arch-check" >/dev/null 2>&1 || true
    first=$(cat "$out/svc-linux-$arch.iid")
    second=$(cat "$out/svc-linux-$arch.check.iid")
    [ "$first" = "$second" ] || die "linux/$arch is not reproducible: image id $first, then $second from a context staged again"
    echo "image: linux/$arch reproducible (image id $first twice)" >&2
  done
fi
