#!/usr/bin/env bash
# The protocol rows of make bench: svc bench on PaddleOCR cls and det
# through each API (v1 /predict JSON, Open Inference Protocol v2 with JSON
# tensors, v2 with binary tensors, v2 over gRPC with raw tensors), each run measuring in-process ONNX
# Runtime (raw) on the same inputs right after, so that the report can show
# served ÷ raw per protocol. build/bench.sh runs it; it also runs alone
# (then build/benchreport reports what it wrote):
#
#   build/bench-protocols.sh && (cd build/benchreport && go run . -out /tmp/BENCHMARKS.md)
#
# Writes $OUT/proto-MODEL-PROTOCOL.json (and .log) and appends to
# $OUT/commands.txt. Knobs: SVC (build/bin/svc), OUT
# (build/artifacts/bench), PROTO_LEVELS (1,4,16), PROTO_DURATION (4s),
# PROTO_WARMUP (1s), PROTO_MODELS (cls det), PROTOCOLS (v1 v2-json
# v2-binary grpc), CLS_SHAPE (x=1,3,48,192), DET_SHAPE (x=1,3,224,256). A short
# look: PROTO_DURATION=1s PROTO_WARMUP=300ms PROTO_LEVELS=1,4.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=build/bench-lib.sh
. build/bench-lib.sh

SVC=${SVC:-build/bin/svc}
OUT=${OUT:-build/artifacts/bench}
PROTO_LEVELS=${PROTO_LEVELS:-1,4,16}
PROTO_DURATION=${PROTO_DURATION:-4s}
PROTO_WARMUP=${PROTO_WARMUP:-1s}
PROTO_MODELS=${PROTO_MODELS:-cls det}
PROTOCOLS=${PROTOCOLS:-v1 v2-json v2-binary grpc}

die() { echo "bench-protocols: $*" >&2; exit 1; }
[ -x "$SVC" ] || die "$SVC missing: run 'make build'"
bench_start bench-protocols

status=0
for name in $PROTO_MODELS; do
	paddle_model "$name"
	for proto in $PROTOCOLS; do
		file=$OUT/proto-$name-$proto.json
		cmd=("$SVC" bench "$model" --shape "$shape" --protocol "$proto" --concurrency "$PROTO_LEVELS"
			--duration "$PROTO_DURATION" --warmup "$PROTO_WARMUP" --raw --json)
		show "${cmd[*]} > $file"
		if ! run "${cmd[@]}" >"$file" 2>"${file%.json}.log"; then
			echo "bench-protocols: $name $proto failed: $(tail -n 3 "${file%.json}.log")" >&2
			rm -f "$file"
			status=1
		fi
	done
done
exit $status
