#!/usr/bin/env bash
# Prints the device calls that run the GPU proof from the kit in DIR
# (build/gpu-kit): one call per part, each carrying that part's folder, then
# the last one, which stages the last part, reassembles the kit, verifies the
# sums and runs build/gpu-check.sh. Written to build/gpu-kit/PLAN.md by
# build/gpu-kit.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build/gpu-kit}
n=$(awk '/^parts /{print $2}' "$dir/part1/PARTS")
rel=${dir#"$root"/}
tree=$(cd "$root" && { git ls-files -z; git ls-files -z --others --exclude-standard; } | xargs -0 du -cb 2>/dev/null | awk 'END{print $1}')
mib() { awk -v b="$1" 'BEGIN{printf "%.1f MiB", b/1048576}'; }

cat <<EOF
# GPU proof: device calls

The kit is $n parts in \`$rel/part1\` … \`$rel/part$n\` (sums in \`$rel/MANIFEST\`).
Each call below carries one part folder with the working tree ($(mib "$tree")
tracked and untracked-not-ignored); the device machine keeps the staged parts
in /tmp/svc-gpu-kit while it is warm, **30 s after a call**: make the calls
back to back, with no \`kind\` (or the same kind each time). The first call
starts the machine (minutes). If a later call finds a fresh machine, the check
says which parts are missing: make all the calls again.

| call | carry | size | timeout_s | command |
|---|---|---|---|---|
EOF
for i in $(seq "$n"); do
  size=$(du -cb "$dir/part$i" | awk 'END{print $1}')
  cmd="bash build/gpu-check.sh stage $rel/part$i"
  timeout=120
  if [ "$i" = "$n" ]; then
    cmd="$cmd && bash build/gpu-check.sh run \"\$OUT\""
    timeout=540
  fi
  echo "| $i | \`[\"$rel/part$i\"]\` | $(mib $((size + tree))) | $timeout | \`$cmd\` |"
done
cat <<EOF

The last call writes \`gpu-report.md\`, \`gpu-report.json\`, \`nvidia-smi.txt\`
and \`logs.tar.gz\` into \$OUT, which come back. Its exit status: 0 proved,
2 no GPU there, 1 failed (the report says which step). The run takes under
5 minutes on an H100; each step is bounded by \`timeout\`.

Rehearse it here: \`make gpu-check OUT=dir\` runs the check on this machine, requires its exit 2 (no GPU here) and its report, and exits 0 when the rehearsal holds.
EOF
