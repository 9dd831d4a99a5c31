#!/usr/bin/env bash
# Proves the linux/arm64 release archive works (issue 5, item 6): builds it
# with build/release.sh, extracts it, and runs its svc under qemu-user
# (Debian's qemu-user-static, with the arm64 C library of the cross
# toolchain as the loader's root): the archive must carry svc's LICENSE;
# 'svc version' must show the stamped
# version and the bundled library, and 'svc serve' must answer /health and
# one /predict of testdata/models/classifier.onnx on 127.0.0.1, then stop
# cleanly on SIGTERM. It fails loudly on anything missing; it never skips.
#
# Usage: ci/check-arm64.sh   (make check-arm64 installs what it needs first)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
version=0.0.0-check
out=$root/build/artifacts/check
sysroot=/usr/aarch64-linux-gnu
qemu=qemu-aarch64-static

die() { echo "check-arm64: FAILED: $*" >&2; exit 1; }
for tool in "$qemu" aarch64-linux-gnu-gcc aarch64-linux-gnu-readelf curl; do
  command -v "$tool" >/dev/null || die "$tool missing: run build/cross-deps.sh (make cross-deps)"
done
[ -f "$sysroot/lib/ld-linux-aarch64.so.1" ] || die "$sysroot/lib/ld-linux-aarch64.so.1 missing: install libc6-dev-arm64-cross (build/cross-deps.sh)"

start=$(date +%s)
rm -rf "$out"
OUT=$out bash build/release.sh "$version" linux/arm64
archive=$out/svc-$version-linux-arm64.tar.gz
[ -f "$archive" ] || die "no archive at $archive"
(cd "$out" && sha256sum -c --quiet SHA256SUMS) || die "SHA256SUMS does not match the archive"

work=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
tar xzf "$archive" -C "$work"
dir=$work/svc-$version-linux-arm64
for f in svc lib/libonnxruntime.so.1 lib/libonnxruntime.so README.txt THIRD_PARTY_NOTICES.txt LICENSE; do
  [ -e "$dir/$f" ] || die "archive lacks $f"
done
cmp -s "$dir/LICENSE" "$root/LICENSE" || die "LICENSE in the archive is not the repository's LICENSE"
[ "$(readlink "$dir/lib/libonnxruntime.so")" = libonnxruntime.so.1 ] || die "lib/libonnxruntime.so is not a link to libonnxruntime.so.1"
aarch64-linux-gnu-readelf -h "$dir/svc" | grep -q 'Machine:.*AArch64' || die "svc is not an AArch64 executable"
aarch64-linux-gnu-readelf -h "$dir/lib/libonnxruntime.so.1" | grep -q 'Machine:.*AArch64' || die "the bundled library is not AArch64"

# qemu-user's -L prefix: the cross toolchain's C library, and a
# /proc/cpuinfo of an arm64 machine (Cortex-A72 cores, as many as this
# machine has). qemu 7.2 passes the host's own /proc/cpuinfo through, and
# ONNX Runtime's CPU detection, finding no arm64 core in it, crashed while
# loading the library on hosts whose kernels list CPU clusters in sysfs
# (the same library loads with this file in place). qemu looks up every
# absolute path under the prefix first, so the rest comes from the host.
prefix=$work/prefix
mkdir -p "$prefix/proc"
for entry in "$sysroot"/*; do ln -s "$entry" "$prefix/$(basename "$entry")"; done
for ((i = 0; i < $(nproc); i++)); do
  printf 'processor\t: %d\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 3\n\n' "$i"
done >"$prefix/proc/cpuinfo"

# The bundled library must be the one found: no ONNXRUNTIME_LIB, no svc.yml.
unset ONNXRUNTIME_LIB
run() { (cd "$work" && "$qemu" -L "$prefix" "$dir/svc" "$@"); }

echo "check-arm64: svc version under $qemu" >&2
ver=$(run version 2>&1) || die "svc version failed: $ver"
echo "$ver" >&2
grep -qx "svc $version" <<<"$ver" || die "svc version does not print 'svc $version'"
grep -q "linux/arm64" <<<"$ver" || die "svc version does not say linux/arm64"
grep -qF "onnxruntime 1.29.0 ($dir/lib/libonnxruntime.so)" <<<"$ver" || die "svc version did not load the bundled library from lib/"

echo "check-arm64: svc serve under $qemu" >&2
(cd "$work" && exec "$qemu" -L "$prefix" "$dir/svc" serve "$root/testdata/models/classifier.onnx" \
  --host 127.0.0.1 --port 0 >"$work/stdout" 2>"$work/stderr") &
pid=$!
url=""
for _ in $(seq 1 600); do
  url=$(sed -n 's/^ *URL *\(http:[^ ]*\).*/\1/p' "$work/stdout")
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || die "svc serve exited before serving:
$(cat "$work/stdout" "$work/stderr")"
  sleep 0.1
done
[ -n "$url" ] || die "svc serve printed no URL within 60 s:
$(cat "$work/stdout" "$work/stderr")"

health=$(curl -fsS --max-time 30 "$url/health") || die "GET /health failed"
echo "check-arm64: /health $health" >&2
[ "$health" = '{"status":"healthy","model":"classifier"}' ] || die "unexpected /health body: $health"

pred=$(curl -fsS --max-time 60 -X POST "$url/predict" -H 'Content-Type: application/json' \
  -d '{"input": [[5.1, 3.5, 1.4, 0.2]]}') || die "POST /predict failed"
echo "check-arm64: /predict $pred" >&2
grep -q '"label":\[0\]' <<<"$pred" || die "/predict label is not [0]: $pred"
grep -q '"probabilities":\[\[0\.88' <<<"$pred" || die "/predict probabilities are not the classifier's: $pred"

metrics=$(curl -fsS --max-time 30 "$url/metrics") || die "GET /metrics failed"
grep -q '"name":"CPUExecutionProvider"' <<<"$metrics" || die "/metrics does not show the CPU provider: $metrics"

kill -TERM "$pid"
code=0
wait "$pid" || code=$?
pid=""
[ "$code" -eq 0 ] || die "svc serve exited $code after SIGTERM:
$(cat "$work/stderr")"
echo "check-arm64: ok ($(($(date +%s) - start)) s)" >&2
