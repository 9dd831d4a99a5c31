#!/usr/bin/env bash
# Regenerates the Go code of the gRPC service from its .proto: protoc from
# Debian (protobuf-compiler), the Go plugins at the versions the Makefile
# pins, installed into build/tools. The generated code is committed, so a
# normal build needs none of this.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${PROTOC_GEN_GO_VERSION:?}" "${PROTOC_GEN_GO_GRPC_VERSION:?}"
tools="$PWD/build/tools"
command -v protoc >/dev/null 2>&1 || bash ci/apt-install.sh protobuf-compiler
GOBIN="$tools" go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION"
GOBIN="$tools" go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION"
dir=transport/grpcapi/inference
PATH="$tools:$PATH" protoc -I "$dir" \
  --go_out="$dir" --go_opt=paths=source_relative \
  --go-grpc_out="$dir" --go-grpc_opt=paths=source_relative \
  "$dir"/grpc_predict_v2.proto
