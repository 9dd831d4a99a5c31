#!/usr/bin/env bash
# Installs what make bench needs beyond the build: wrk (Debian package
# wrk), the external HTTP load generator of the served rows. Idempotent:
# returns at once when it is there. CI runs as root; elsewhere apt-get runs
# under sudo.
set -euo pipefail
command -v wrk >/dev/null 2>&1 && exit 0
bash "$(dirname "$0")/../ci/apt-install.sh" wrk
command -v wrk >/dev/null 2>&1 || { echo "bench-deps: wrk still missing after apt-get install" >&2; exit 1; }
