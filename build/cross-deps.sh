#!/usr/bin/env bash
# Installs what the release builds and the arm64 check need, from Debian:
# the aarch64 cross compiler with its C library (libc6-dev-arm64-cross, which
# also holds the arm64 dynamic loader qemu runs binaries with), the mingw-w64
# cross compiler for windows/amd64, qemu-user-static, and zip, unzip and
# curl for the archives and their checks. Idempotent: when
# every tool is already there it returns at once without touching apt.
# CI runs as root; elsewhere apt-get runs under sudo.
set -euo pipefail

need=()
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need+=(gcc-aarch64-linux-gnu)
[ -f /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ] && [ -f /usr/aarch64-linux-gnu/include/stdio.h ] ||
  need+=(libc6-dev-arm64-cross)
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || need+=(gcc-mingw-w64-x86-64)
command -v qemu-aarch64-static >/dev/null 2>&1 || need+=(qemu-user-static)
command -v zip >/dev/null 2>&1 || need+=(zip)
command -v unzip >/dev/null 2>&1 || need+=(unzip)
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
bash "$(dirname "$0")/../ci/apt-install.sh" "${need[@]}"
for tool in aarch64-linux-gnu-gcc x86_64-w64-mingw32-gcc qemu-aarch64-static zip unzip curl; do
  command -v "$tool" >/dev/null 2>&1 || { echo "cross-deps: $tool still missing after apt-get install" >&2; exit 1; }
done
