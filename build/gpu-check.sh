#!/usr/bin/env bash
# The GPU proof, run on the GPU machine from the kit of 'make gpu-kit'
# (build/gpu-kit/partN, one part per device call; see build/gpu-kit/PLAN.md):
#
#   gpu-check.sh stage PARTDIR   check one part against its MANIFEST and copy it
#                                to the staging folder ($SVC_GPU_KIT_STAGE,
#                                default /tmp/svc-gpu-kit), which stays while
#                                the machine is warm
#   gpu-check.sh run OUT         reassemble the staged parts, verify every sum,
#                                run the checks, write the report into OUT
#   gpu-check.sh verify          only reassemble and verify (ci/gpu-check-test.sh)
#
# The checks, each bounded by timeout: (1) svc providers --check on det;
# (2) svc serve --provider cuda on det and cls, the answers compared with the
# CPU's answers computed when the kit was made (max |diff| <= 1e-3), with the
# banner's node placement; (3) the same with --provider webgpu on the NVIDIA
# Vulkan driver; (4) --provider tensorrt, which must name the missing
# TensorRT libraries exactly; (5) svc bench at concurrency 1 and 8 for each
# provider that ran, and the CPU. CUDA and cuDNN are found by svc's own
# discovery in the Python environment ($VIRTUAL_ENV, default /opt/torch/.venv
# where it exists). OUT gets gpu-report.md, gpu-report.json, nvidia-smi.txt
# and logs.tar.gz.
#
# Exit status: 0 proved, 2 no GPU here (the CUDA diagnosis says there is no
# NVIDIA driver or no device), 1 failed. With SVC_GPU_CHECK_REHEARSE=1 and no
# GPU, steps 2 and 5 run on the CPU provider before the exit 2, so that a
# machine without a GPU exercises them too (make gpu-check).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
stage_dir=${SVC_GPU_KIT_STAGE:-/tmp/svc-gpu-kit}
PY=${PYTHON:-$(command -v python3 || echo /opt/torch/.venv/bin/python3)}
helper=$here/gpu-check.py
TOL=1e-3
TRT_WANT="libnvinfer.so.10 and libnvonnxparser.so.10 not found (TensorRT 10: install TensorRT 10 for CUDA 13)"

die() { echo "gpu-check: $*" >&2; exit 1; }

# sum_ok MANIFEST DIR NAME: NAME in DIR has the sum MANIFEST gives it.
sum_ok() {
  local want
  want=$(awk -v n="$3" '$2 == n {print $1}' "$1")
  [ -n "$want" ] && echo "$want  $2/$3" | sha256sum -c --status
}

cmd_stage() {
  local part=${1:?usage: gpu-check.sh stage PARTDIR}
  [ -f "$part/MANIFEST" ] && [ -f "$part/PARTS" ] || die "$part: no MANIFEST or PARTS: not a part folder of make gpu-kit"
  mkdir -p "$stage_dir/parts"
  if [ -f "$stage_dir/parts/MANIFEST" ] && ! cmp -s "$part/MANIFEST" "$stage_dir/parts/MANIFEST"; then
    echo "gpu-check: $stage_dir holds parts of another kit: removing them" >&2
    rm -rf "$stage_dir/parts"
    mkdir -p "$stage_dir/parts"
  fi
  local f name found=0
  for f in "$part"/kit.tar.zst.[0-9][0-9]; do
    [ -f "$f" ] || continue
    name=$(basename "$f")
    sum_ok "$part/MANIFEST" "$part" "$name" || die "part $name ($f): sha256 mismatch with MANIFEST: the part is corrupt or from another kit; run make gpu-kit again and send it again"
    cp "$f" "$stage_dir/parts/"
    found=1
  done
  [ "$found" = 1 ] || die "$part: no kit.tar.zst.NN in it"
  cp "$part/MANIFEST" "$part/PARTS" "$stage_dir/parts/"
  cp "$part"/zstd_*.deb "$stage_dir/parts/" 2>/dev/null || true
  echo "gpu-check: staged $(basename "$part") in $stage_dir/parts: $(missing_parts || true)" >&2
}

# missing_parts prints which parts are still missing ("all N parts" if none).
missing_parts() {
  local n i miss=""
  n=$(awk '/^parts /{print $2}' "$stage_dir/parts/PARTS")
  for i in $(seq "$n"); do
    [ -f "$stage_dir/parts/kit.tar.zst.$(printf %02d "$i")" ] || miss="$miss $i"
  done
  if [ -n "$miss" ]; then
    echo "missing parts:$miss of $n"
    return 1
  fi
  echo "all $n parts"
}

# find_zstd prints a zstd command: the system's, or the one of the .deb the
# last part carries, unpacked into the staging folder.
find_zstd() {
  if command -v zstd >/dev/null; then
    command -v zstd
    return
  fi
  local deb
  deb=$(ls "$stage_dir"/parts/zstd_*.deb 2>/dev/null | head -1)
  [ -n "$deb" ] || return 1
  dpkg-deb -x "$deb" "$stage_dir/zstd" || return 1
  echo "$stage_dir/zstd/usr/bin/zstd"
}

# assemble verifies the staged parts, joins them and unpacks the kit into
# $stage_dir/kit; it prints what went wrong and returns 1 on failure.
assemble() {
  local p="$stage_dir/parts" missing n i name z
  [ -f "$p/MANIFEST" ] || { echo "no parts staged in $p: run the stage calls first (build/gpu-kit/PLAN.md)"; return 1; }
  missing=$(missing_parts) || { echo "$missing in $p: the machine was not warm for every call; make all the calls again"; return 1; }
  n=$(awk '/^parts /{print $2}' "$p/PARTS")
  for i in $(seq "$n"); do
    name=kit.tar.zst.$(printf %02d "$i")
    sum_ok "$p/MANIFEST" "$p" "$name" || { echo "part $i ($name): sha256 mismatch with MANIFEST: the part is corrupt"; return 1; }
  done
  cat "$p"/kit.tar.zst.[0-9][0-9] >"$stage_dir/kit.tar.zst"
  sum_ok "$p/MANIFEST" "$stage_dir" kit.tar.zst || { echo "the joined kit.tar.zst: sha256 mismatch with MANIFEST"; return 1; }
  z=$(find_zstd) || { echo "no zstd here and no zstd .deb in the last part"; return 1; }
  rm -rf "$stage_dir/kit"
  "$z" -d -q -c "$stage_dir/kit.tar.zst" | tar -x -C "$stage_dir" || { echo "unpacking kit.tar.zst failed"; return 1; }
  rm -f "$stage_dir/kit.tar.zst"
  (cd "$stage_dir/kit" && sha256sum -c --quiet SHA256SUMS) || { echo "a file of the kit does not match its SHA256SUMS"; return 1; }
  echo "$n parts joined, every sum verified; $(head -1 "$stage_dir/kit/KIT")"
}

# step NAME STATUS KEY=VALUE...: record one step (VALUE @FILE: the file's text).
step() { "$PY" "$helper" step "$work/steps.jsonl" "$@"; }

# finish CODE: write the report into OUT and exit with CODE.
finish() {
  "$PY" "$helper" report "$work" "$1"
  cp "$work/gpu-report.md" "$work/gpu-report.json" "$out/"
  tar -C "$work" -czf "$out/logs.tar.gz" logs steps.jsonl 2>/dev/null
  echo "gpu-check: $(sed -n 3p "$out/gpu-report.md") — report in $out/gpu-report.md" >&2
  exit "$1"
}

# table_field LOG PROVIDER COLUMN: a column of svc providers' table (1-based
# after the provider's name: 4 usable now, 5 why not).
table_field() {
  awk -v p="$2" -v c="$3" '$1 == p && NF > 3 { n = split($0, f, /  +/); if (c + 1 <= n) { s = f[c + 1]; for (i = c + 2; i <= n; i++) s = s "  " f[i]; print s }; exit }' "$1"
}

# serve PROVIDER MODEL: svc serve on a free port; sets url and spid, or
# returns 1 (the log says why). Start-up (with the warm-up inference and, on
# WebGPU, shader compilation) is bounded.
serve() {
  local log=$work/logs/serve-$1-$2
  timeout -k 5 240 "$svc" serve "$kit/models/$2.onnx" --provider "$1" --host 127.0.0.1 --port 0 >"$log.out" 2>"$log.err" &
  spid=$!
  url=""
  local i
  for i in $(seq 240); do
    url=$(sed -n 's/^  URL *//p' "$log.out" | head -1)
    [ -n "$url" ] && return 0
    kill -0 "$spid" 2>/dev/null || return 1
    sleep 0.5
  done
  stop
  return 1
}

stop() {
  kill "$spid" 2>/dev/null
  wait "$spid" 2>/dev/null
}

# serve_check PROVIDER MODEL ORTNAME: the model served on PROVIDER answers
# as the CPU did; the banner names ORTNAME with no fallback. Returns 1 on
# failure; records the step.
serve_check() {
  local p=$1 m=$2 want=$3 log=$work/logs/serve-$1-$2 t0 banner nodes cmp reason ok=ok
  t0=$(date +%s.%N)
  if ! serve "$p" "$m"; then
    step "serve-$p-$m" fail summary="svc serve --provider $p did not start" stderr=@"$log.err"
    return 1
  fi
  local ready
  ready=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
  banner=$(sed -n 's/^  provider *//p' "$log.out" | head -1)
  nodes=$(sed -n 's/^  nodes *//p' "$log.out" | head -1)
  reason=$("$PY" "$helper" reason "$log.err")
  if ! timeout 120 "$PY" "$helper" post "$url/predict" "$kit/inputs/$m.json" "$log.answer.json" 2>"$log.post"; then
    stop
    step "serve-$p-$m" fail summary="POST /predict failed on $banner" error=@"$log.post" stderr=@"$log.err"
    return 1
  fi
  stop
  cmp=$("$PY" "$helper" compare "$kit/refs/$m.cpu.json" "$log.answer.json" "$TOL") || ok=fail
  [ "$banner" = "$want" ] || ok=fail
  step "serve-$p-$m" "$ok" summary="$banner; $nodes; vs CPU: $cmp" provider="$banner" nodes="$nodes" \
    compare="$cmp" ready_s="$ready" fallback_reason="$reason"
  [ "$ok" = ok ]
}

# bench PROVIDER MODEL DURATION: svc bench at concurrency 1 and 8.
bench() {
  local p=$1 m=$2 log=$work/logs/bench-$1-$2 sum
  if ! timeout -k 5 200 "$svc" bench "$kit/models/$m.onnx" --input "$kit/inputs/$m.json" --concurrency 1,8 \
    --duration "$3" --warmup 1s --no-raw --json -- --provider "$p" >"$log.json" 2>"$log.err"; then
    step "bench-$p-$m" fail summary="svc bench failed" model="$m" stderr=@"$log.err"
    return 1
  fi
  sum=$("$PY" "$helper" benchsum "$log.json")
  step "bench-$p-$m" ok summary="$sum" model="$m" bench="$sum"
}

# providers_check runs step 1 and decides whether there is a GPU: it returns
# 0 (CUDA usable), 2 (no NVIDIA driver or device) or 1.
providers_check() {
  local log=$work/logs/providers-check code usable why
  timeout -k 5 180 "$svc" providers --check "$kit/models/det.onnx" --runs 3 >"$log.out" 2>"$log.err"
  code=$?
  usable=$(table_field "$log.out" cuda 4)
  why=$(table_field "$log.out" cuda 5)
  if [ "$usable" = yes ]; then
    # CUDA is there: the other steps run even if the self-check failed.
    if [ "$code" = 0 ]; then
      step providers-check ok summary="CUDA usable; svc providers --check det ran" output=@"$log.out"
    else
      check_failed=1
      step providers-check fail summary="CUDA usable, but svc providers --check det exited $code" output=@"$log.out" stderr=@"$log.err"
    fi
    return 0
  fi
  local nogpu
  nogpu=$(grep -oE 'libcuda\.so\.1 not found \(NVIDIA driver\)|no CUDA-capable device|CUDA_ERROR_NO_DEVICE|the NVIDIA driver sees no CUDA device' <<<"$why" | head -1)
  if [ "$usable" != yes ] && ! "$gpu_seen" && [ -n "$nogpu" ]; then
    step providers-check no-gpu summary="no GPU here: $nogpu (cuda not usable: $why)" cuda_why_not="$why" output=@"$log.out" stderr=@"$log.err"
    return 2
  fi
  step providers-check fail summary="svc providers --check exit $code; cuda usable: ${usable:-?}; ${why}" output=@"$log.out" stderr=@"$log.err"
  return 1
}

# vulkan makes the Vulkan loader the kit carries loadable (the device
# README's recipe: unpack at / and ldconfig, as root on the GPU machine;
# otherwise into the staging folder, on LD_LIBRARY_PATH) and points it at
# the NVIDIA driver.
vulkan() {
  local f
  if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1 '; then
    if [ "$(id -u)" = 0 ] && "$gpu_seen"; then
      for f in "$kit"/debs/*.deb; do dpkg -x "$f" /; done
      ldconfig
    else
      for f in "$kit"/debs/*.deb; do dpkg-deb -x "$f" "$stage_dir/gl"; done
      export LD_LIBRARY_PATH=$stage_dir/gl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    fi
  fi
  local icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json egl=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  [ -f "$icd" ] && export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
  [ -f "$egl" ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$egl
  step vulkan ok summary="Vulkan loader: $(ldconfig -p 2>/dev/null | grep -m1 'libvulkan\.so\.1 ' | sed 's/.*=> //')${LD_LIBRARY_PATH:+ from the kit, LD_LIBRARY_PATH=$LD_LIBRARY_PATH}; NVIDIA ICD: ${VK_DRIVER_FILES:-none}"
}

# tensorrt_check: TensorRT is not on the machine; svc must say exactly which
# libraries are missing and fall back to the CPU.
tensorrt_check() {
  local log=$work/logs/serve-tensorrt-det reason ok=ok
  serve tensorrt det || { step serve-tensorrt-det fail summary="svc serve --provider tensorrt did not start" stderr=@"$log.err"; return 1; }
  stop
  reason=$("$PY" "$helper" reason "$log.err")
  [ "$reason" = "$TRT_WANT" ] || ok=fail
  step serve-tensorrt-det "$ok" summary="fallback reason: $reason" want="$TRT_WANT" \
    provider="$(sed -n 's/^  provider *//p' "$log.out" | head -1)"
  [ "$ok" = ok ]
}

cmd_run() {
  out=${1:?usage: gpu-check.sh run OUT}
  mkdir -p "$out" || die "cannot create $out"
  out=$(cd "$out" && pwd)
  work=$stage_dir/work
  rm -rf "$work"
  mkdir -p "$work/logs"
  local msg
  if ! msg=$(assemble); then
    step kit fail summary="$msg"
    finish 1
  fi
  step kit ok summary="$msg"
  kit=$stage_dir/kit
  svc=$kit/bin/svc
  export SVC_LOG_FORMAT=json
  if [ -z "${VIRTUAL_ENV:-}" ] && [ -d /opt/torch/.venv ]; then export VIRTUAL_ENV=/opt/torch/.venv; fi
  gpu_seen=false
  if ! command -v nvidia-smi >/dev/null; then
    echo "nvidia-smi: not found" >"$out/nvidia-smi.txt"
  elif timeout 60 nvidia-smi >"$out/nvidia-smi.txt" 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    gpu_seen=true
  fi
  local gpus
  gpus=$(nvidia-smi -L 2>/dev/null | tr '\n' ' ')
  step machine ok summary="$(uname -srm); $(nproc) cores; GPU: ${gpus:-none}" \
    nvidia_smi=@"$out/nvidia-smi.txt" virtual_env="${VIRTUAL_ENV:-}" \
    cuda_dirs="$(ls -d "${VIRTUAL_ENV:-/nonexistent}"/lib/python3.*/site-packages/nvidia/*/lib 2>/dev/null | tr '\n' ' ')"

  vulkan
  check_failed=0
  providers_check
  case $? in
    0) ;;
    2)
      if [ "${SVC_GPU_CHECK_REHEARSE:-}" = 1 ]; then
        serve_check cpu det CPUExecutionProvider
        serve_check cpu cls CPUExecutionProvider
        bench cpu cls 1s
      fi
      finish 2
      ;;
    *) finish 1 ;;
  esac

  local failed=$check_failed ran=(cuda) m
  for m in det cls; do serve_check cuda "$m" CUDAExecutionProvider || failed=1; done
  local wg=0
  for m in det cls; do serve_check webgpu "$m" WebGpuExecutionProvider || { failed=1; wg=1; }; done
  [ "$wg" = 0 ] && ran+=(webgpu)
  tensorrt_check || failed=1
  for p in "${ran[@]}" cpu; do
    for m in det cls; do bench "$p" "$m" 2s || failed=1; done
  done
  finish "$failed"
}

# cmd_verify only reassembles and verifies the staged parts (for tests).
cmd_verify() {
  local msg
  msg=$(assemble) || die "$msg"
  echo "gpu-check: $msg" >&2
}

case ${1:-} in
  stage) shift; cmd_stage "$@" ;;
  run) shift; cmd_run "$@" ;;
  verify) cmd_verify ;;
  *) echo "usage: gpu-check.sh stage PARTDIR | run OUT | verify" >&2; exit 1 ;;
esac
