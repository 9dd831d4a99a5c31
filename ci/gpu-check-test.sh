#!/usr/bin/env bash
# make gpu-check OUT=dir (and make test): the GPU proof of build/gpu-check.sh,
# rehearsed on this machine, which has no GPU.
#
#  1. The reassembly on a small synthetic kit of three parts: all staged, it
#     verifies; a corrupt part is refused when staged, and 'run' with a part
#     corrupted after staging or a part missing ends with exit 1 and a report
#     that names the part.
#  2. The real kit of make gpu-kit (build/gpu-kit): every part staged as the
#     device calls of PLAN.md would, then 'run OUT' with
#     SVC_GPU_CHECK_REHEARSE=1. It must end with exit 2 (no GPU here), its
#     report saying "libcuda.so.1 not found (NVIDIA driver)" (or the stub
#     driver's "no CUDA-capable device"), and the steps it can run here on the
#     CPU (serve, compare with the kit's references, bench) must pass.
#     Again with stub CUDA libraries and driver (generated, test-only) in
#     $SVC_CUDA_LIBRARY_PATH: exit 2 on the driver's CUDA_ERROR_NO_DEVICE.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build/gpu-check}
check=$root/build/gpu-check.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "gpu-check-test: FAIL: $*" >&2; exit 1; }

# expect CODE TEXT FILE: a run ended with CODE and FILE says TEXT.
expect() {
  [ "$1" = "$2" ] || fail "exit status $2, want $1 ($4)"
  grep -qF -- "$3" "$5" || { cat "$5" >&2; fail "$5 does not say: $3 ($4)"; }
}

synthetic() {
  local kit=$tmp/syn parts=$tmp/syn-parts code
  mkdir -p "$kit/kit/bin" "$parts"
  head -c 300000 /dev/urandom >"$kit/kit/bin/blob"
  echo "synthetic kit" >"$kit/kit/KIT"
  (cd "$kit/kit" && sha256sum bin/blob KIT >SHA256SUMS)
  tar -C "$kit" -cf - kit | zstd -q -c >"$kit/kit.tar.zst"
  split -b 120000 -d -a 2 --numeric-suffixes=1 "$kit/kit.tar.zst" "$kit/kit.tar.zst."
  local n i
  n=$(ls "$kit"/kit.tar.zst.[0-9][0-9] | wc -l)
  [ "$n" = 3 ] || fail "synthetic kit: $n parts, want 3"
  : >"$kit/MANIFEST"
  for i in 1 2 3; do
    (cd "$kit" && sha256sum "kit.tar.zst.0$i") >>"$kit/MANIFEST"
  done
  (cd "$kit" && sha256sum kit.tar.zst) >>"$kit/MANIFEST"
  for i in 1 2 3; do
    mkdir -p "$parts/part$i"
    cp "$kit/kit.tar.zst.0$i" "$kit/MANIFEST" "$parts/part$i/"
    echo "parts 3" >"$parts/part$i/PARTS"
  done

  export SVC_GPU_KIT_STAGE=$tmp/stage-ok
  for i in 1 2 3; do bash "$check" stage "$parts/part$i" 2>/dev/null; done
  bash "$check" verify 2>"$tmp/log" || { cat "$tmp/log" >&2; fail "the synthetic kit does not verify"; }
  grep -qF "3 parts joined, every sum verified; synthetic kit" "$tmp/log" || fail "verify says: $(cat "$tmp/log")"

  # A corrupt part is refused when it is staged.
  cp -r "$parts/part2" "$tmp/bad2"
  printf 'X' | dd of="$tmp/bad2/kit.tar.zst.02" bs=1 seek=100 conv=notrunc status=none
  export SVC_GPU_KIT_STAGE=$tmp/stage-bad
  code=0
  bash "$check" stage "$tmp/bad2" 2>"$tmp/log" || code=$?
  expect 1 "$code" "part kit.tar.zst.02 ($tmp/bad2/kit.tar.zst.02): sha256 mismatch with MANIFEST" "stage of a corrupt part" "$tmp/log"

  # A part corrupted after staging: run fails, and its report says so.
  for i in 1 2 3; do bash "$check" stage "$parts/part$i" 2>/dev/null; done
  printf 'X' | dd of="$SVC_GPU_KIT_STAGE/parts/kit.tar.zst.02" bs=1 seek=100 conv=notrunc status=none
  code=0
  bash "$check" run "$tmp/out-bad" 2>/dev/null || code=$?
  expect 1 "$code" "part 2 (kit.tar.zst.02): sha256 mismatch with MANIFEST: the part is corrupt" "run with a corrupt part" "$tmp/out-bad/gpu-report.md"
  grep -qF '"exit": 1' "$tmp/out-bad/gpu-report.json" || fail "gpu-report.json of the corrupt run has no exit 1"

  # A part missing (the machine went cold between calls).
  export SVC_GPU_KIT_STAGE=$tmp/stage-missing
  bash "$check" stage "$parts/part1" 2>/dev/null
  bash "$check" stage "$parts/part3" 2>/dev/null
  code=0
  bash "$check" run "$tmp/out-missing" 2>/dev/null || code=$?
  expect 1 "$code" "missing parts: 2 of 3" "run with a part missing" "$tmp/out-missing/gpu-report.md"
  echo "gpu-check-test: synthetic kit: verified; corrupt and missing parts refused" >&2
}

real_kit() {
  local kitdir=$root/build/gpu-kit code=0 s
  [ -f "$kitdir/part1/PARTS" ] || fail "no kit in $kitdir: run make gpu-kit"
  export SVC_GPU_KIT_STAGE=$tmp/stage-real
  for p in "$kitdir"/part*; do bash "$check" stage "$p"; done
  rm -f "$out"/gpu-report.md "$out"/gpu-report.json "$out"/nvidia-smi.txt "$out"/logs.tar.gz
  SVC_GPU_CHECK_REHEARSE=1 bash "$check" run "$out" || code=$?
  local report=$out/gpu-report.md
  [ -f "$report" ] || fail "no $report"
  [ "$code" = 2 ] || { cat "$report" >&2; fail "exit status $code, want 2 (no GPU here)"; }
  grep -qF "**Result: no GPU here** (exit status 2)" "$report" || fail "$report does not give the verdict"
  grep -qE 'libcuda\.so\.1 not found \(NVIDIA driver\)|no CUDA-capable device' "$report" || fail "$report does not give the CUDA diagnosis"
  grep -qF '"exit": 2' "$out/gpu-report.json" || fail "gpu-report.json has no exit 2"
  for s in kit machine providers-check serve-cpu-det serve-cpu-cls bench-cpu-cls; do
    grep -qE "^\| $s \| (ok|no-gpu) \|" "$report" || { cat "$report" >&2; fail "step $s did not pass"; }
  done
  for f in gpu-report.md gpu-report.json nvidia-smi.txt logs.tar.gz; do
    [ -s "$out/$f" ] || fail "no $out/$f"
  done
  echo "gpu-check-test: the real kit, rehearsed here: exit 2, no GPU; report in $report" >&2

  # With STUB CUDA libraries and driver (test-only, generated; no device)
  # found through svc's own discovery ($SVC_CUDA_LIBRARY_PATH), the CUDA
  # diagnosis goes as far as the driver's answer: no device, exit 2.
  local stub=$tmp/stubcuda
  mkdir -p "$stub"
  (cd "$root" && go run ./providers/internal/providertest/stubcuda \
    -provider build/lib/linux-amd64-cuda/libonnxruntime_providers_cuda.so -driver "$stub" >/dev/null)
  code=0
  SVC_CUDA_LIBRARY_PATH=$stub bash "$check" run "$tmp/out-stub" 2>/dev/null || code=$?
  expect 2 "$code" "no GPU here: CUDA_ERROR_NO_DEVICE" "stub CUDA driver, no device" "$tmp/out-stub/gpu-report.md"
  [ -n "${GPU_CHECK_KEEP_STUB:-}" ] && cp "$tmp/out-stub/gpu-report.md" "$GPU_CHECK_KEEP_STUB"
  echo "gpu-check-test: with the stub CUDA driver: exit 2, no device" >&2
}

synthetic
real_kit
