#!/usr/bin/env bash
# Runs, without the race detector, the tests that only a build without it
# compiles: those in the product module's test files that begin with
# //go:build !race. In them the race detector would find nothing and cost
# several times the time (a codec compared with its reference case by
# case, in one goroutine), or would change what they measure (allocation
# counts: it makes sync.Pool drop items at random). make test's race pass
# (go test -race ./...) leaves them out; this pass runs them, and only
# them.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
# The test files built only without -race that hold tests (some hold
# only a constant that says so).
files=$($GO list -f '{{$d := .Dir}}{{range .TestGoFiles}}{{$d}}/{{.}} {{end}}{{range .XTestGoFiles}}{{$d}}/{{.}} {{end}}' ./... |
  xargs -r grep -lx '//go:build !race' | xargs -r grep -l '^func \(Test\|Fuzz\)' || true)
[ -n "$files" ] || { echo "norace: no test is built only without -race" >&2; exit 1; }
# shellcheck disable=SC2086 # one path a word
tests=$(grep -ho '^func \(Test\|Fuzz\)[A-Za-z0-9_]*' $files | cut -d' ' -f2 | sort -u | paste -sd'|')
# shellcheck disable=SC2086
pkgs=$(dirname $files | sort -u)
echo "norace: $(echo "$tests" | tr '|' ' ')" >&2
# shellcheck disable=SC2086
exec $GO test -ldflags=-w -count=1 -run "^($tests)\$" $pkgs
