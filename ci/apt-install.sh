#!/usr/bin/env bash
# Installs Debian packages with apt-get (under sudo unless root). The
# project's install scripts call it with the packages they found missing.
set -euo pipefail
[ $# -gt 0 ] || exit 0
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "installing $*" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
