#!/usr/bin/env bash
# Installs the system packages the tests need when they are missing:
# Chromium for the browser test. Runs apt-get only when something is missing
# (CI runs as root; elsewhere use sudo).
set -euo pipefail

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
bash "$(dirname "$0")/apt-install.sh" "${need[@]}"
