package imports

// table is svc's architecture as an allow-list, in the manner of Go's own
// go/build/deps_test.go: each line "A, B < C, D" says that C and D may
// import A and B, and everything A and B may import. The lines go up the
// layers, each headed by a comment "## name: what it holds", from the
// ONNX Runtime binding and the execution providers to the commands. Every
// package of the module must be on the right of a line (NONE for one that
// imports nothing of svc), so that a new package is placed on purpose; an
// import the table does not allow points up, or sideways within a layer,
// and fails. A name in capitals is a group: "A, B < G" makes G stand for
// A and B (and what they may import). ORT is the ONNX Runtime binding.
//
// Exceptions are single edges, each with its reason; test helpers are
// packages any _test.go file may import.
const table = `
## providers: the ONNX Runtime binding and the execution providers, which import nothing of svc outside providers/
NONE < ORT, providers/internal/ldpath;
providers/internal/ldpath < providers/internal/sysprobe;
ORT, providers/internal/sysprobe < providers;
providers < providers/internal/nvidia;
providers, providers/internal/nvidia
  < providers/coreml, providers/cpu, providers/cuda, providers/directml,
    providers/openvino, providers/rocm, providers/tensorrt, providers/webgpu;
providers/coreml, providers/cpu, providers/cuda, providers/directml,
  providers/openvino, providers/rocm, providers/tensorrt, providers/webgpu
  < providers/all;

## blocks: core's pure Go building blocks: tensors and their JSON, the ONNX protobuf reader, svc.yml
NONE < core/tensor, core/internal/loop, core/onnxpb;
core/tensor < core/tensor/tensorjson;
providers < core/config;

## lifecycle: the served model's lifecycle, states and error kinds, protocol-neutral
core/tensor < core;

## runtime: the ONNX Runtime boundary: the only packages that call ONNX Runtime
core/tensor, ORT < core/onnxrt;
core, core/config, core/internal/loop, core/onnxpb, core/onnxrt, providers < core/session;

## services: what serves the model above the lifecycle, beside the runtime, in pure Go: the scheduler, sequences, the memory budget, the response cache, worker processes, the model store
core, core/internal/loop < core/sched;
core < core/seq, core/budget, core/workers, core/cache;
core/seq < core/workers/seqroute;
core, core/config, core/onnxpb < core/registry;
core/registry < core/watch;

## codecs: what users send and what outputs mean, protocol-neutral and pure Go: pictures, tokenizers, decoded outputs, and svc.yml's declarations resolved for a model
NONE < core/codec/tokenizer, core/codec/geom;
core/codec/geom < core/codec/page;
core/tensor < core/codec/image;
core/tensor/tensorjson < core/codec/decode;
NONE < core/codec/draw;
core/codec/image, core/tensor/tensorjson < core/codec/detect;
core/budget, core/config, core/onnxpb, core/sched, core/tensor/tensorjson,
  core/codec/decode, core/codec/detect, core/codec/draw, core/codec/image,
  core/codec/tokenizer
  < core/codec;

## pipelines: models made of models, each stage run through the Runner that serves its model alone
core, core/config, core/codec, core/codec/decode, core/codec/draw, core/codec/image, core/codec/page < core/pipeline;

## checks: what runs the model outside a request: the providers' checks
core/session < core/providercheck;

## plumbing: transport's shared HTTP and gRPC plumbing: listeners, the server, middleware, the log, metrics, access control, tracing
NONE < transport/log;
core, core/budget, core/config, core/tensor/tensorjson, transport/log < transport;
transport < transport/access;
transport, core/budget, core/cache, core/codec, core/seq < transport/metrics;
transport, core/workers < transport/tracing;
transport < transport/payload;
core/budget, core/codec, core/seq, transport < PLUMBING;

## protocols: one package each, none importing another's but for the exceptions below
PLUMBING < transport/rest, transport/oip, transport/repository, transport/stream,
  transport/openai, transport/tei;
NONE < transport/grpcapi/inference;
PLUMBING, transport/access, transport/grpcapi/inference < transport/grpcapi;

## docs: the OpenAPI document and the documentation pages, over the protocols they describe
transport/rest, transport/oip, transport/openai, transport/tei < openapi;

## commands: the CLI, its tools and the checks of the repository
core/onnxpb < cmd/genmodels/slowload;
cmd/genmodels/slowload < cmd/genmodels;
core/session, transport/grpcapi, transport/oip, transport/rest < cmd/internal/bench;
cmd/internal/bench, core/cache, core/pipeline, core/providercheck, core/registry, core/sched, core/watch,
  core/workers/seqroute, openapi, providers/all, transport/grpcapi,
  transport/metrics, transport/openai, transport/repository, transport/stream,
  transport/tei, transport/tracing, transport/payload
  < cmd/svc;
cmd/svc < cmd/svc/fuzzhttp;
NONE < core/codec/tokenizer/internal/textbench;
core/session, core/codec < cmd/internal/detbench;
NONE < ci/filesize, ci/funclen, ci/imports, ci/hostile;

## helpers: packages written for tests
core/onnxrt < core/onnxrt/onnxrttest;
NONE < core/registry/hubtest;
providers, providers/internal/sysprobe, core/onnxrt/onnxrttest < providers/internal/providertest;
providers/internal/providertest < providers/internal/providertest/stubcuda;
`

// exceptions are the single edges the layers do not allow, each with its
// reason.
var exceptions = []Exception{
	{From: "transport/grpcapi", To: "transport/oip", Why: "the gRPC codec of the Open Inference Protocol decodes into the protocol's model, whose checks and messages are REST's"},
	{From: "transport/grpcapi", To: "transport/repository", Why: "the gRPC codec serves the model-repository extension's RPCs over the REST routes' handler"},
}

// testHelpers are the packages written for tests: any _test.go file may
// import them.
var testHelpers = []Exception{
	{To: "core/onnxrt/onnxrttest", Why: "finds the ONNX Runtime library the tests load"},
	{To: "core/registry/hubtest", Why: "a fake Hugging Face Hub"},
	{To: "providers/internal/providertest", Why: "a fake machine for the providers' checks"},
	{To: "ci/hostile", Why: "what an attacker sends, for the bounds tests"},
}

// testExceptions are single edges from _test.go files that the layers do
// not allow, each with its reason.
var testExceptions = []Exception{
	{From: "core/codec/page", To: "core/session", Why: "the exactness test gives both implementations the real PaddleOCR detector's maps of rendered pages"},
	{From: "core/codec/page", To: "core/config", Why: "it opens the detector with the default runtime settings"},
	{From: "core/codec/page", To: "core/tensor", Why: "it feeds the detector a page as a tensor"},
	{From: "core/pipeline", To: "core/session", Why: "the accuracy test runs the real PaddleOCR models behind the real scheduler"},
	{From: "core/pipeline", To: "core/sched", Why: "the accuracy test runs each stage behind the scheduler that serves single models"},
	{From: "providers", To: "core/session", Why: "the providers' contract test opens real sessions with each provider"},
	{From: "providers", To: "core/config", Why: "the providers' tests read their sections as svc.yml gives them"},
	{From: "providers", To: "providers/all", Why: "the contract test runs over every provider compiled in"},
	{From: "providers", To: "providers/cpu", Why: "the contract test's reference provider"},
	{From: "providers", To: "providers/tensorrt", Why: "the contract test checks a provider that needs another's libraries"},
	{From: "providers/openvino", To: "core/config", Why: "its settings' test reads them as svc.yml gives them"},
	{From: "providers/tensorrt", To: "core/config", Why: "its settings' test reads them as svc.yml gives them"},
	{From: "providers/internal/nvidia", To: "providers/internal/sysprobe", Why: "its test probes the machine as the providers do"},
	{From: "core/config", To: "providers/all", Why: "the configuration's tests validate every provider's section"},
	{From: "core/session", To: "core/sched", Why: "the session's tests run it under the real scheduler"},
	{From: "core/session", To: "core/tensor/tensorjson", Why: "the session's tests compare outputs as the protocols write them"},
	{From: "core/session", To: "providers/cpu", Why: "the session's tests open real sessions on the CPU"},
	{From: "core/providercheck", To: "providers/cpu", Why: "the checks' tests run the CPU provider's"},
	{From: "cmd/genmodels/slowload", To: "core/onnxrt", Why: "its test measures a real session's creation"},
	{From: "cmd/genmodels/slowload", To: Runtime, Why: "its test measures a real session's creation"},
	{From: "cmd/internal/bench", To: "providers/all", Why: "the raw baseline's test opens sessions with every provider compiled in"},
	{From: "openapi", To: "core/config", Why: "the document's tests build it from svc.yml declarations"},
	{From: "transport/metrics", To: "core/tensor", Why: "the metrics' tests make results of fake runs"},
	{From: "transport/repository", To: "core/tensor", Why: "the repository's tests make results of fake runs"},
	{From: "cmd/svc", To: "ci/imports", Why: "the documentation's tests check that design.md names this table's layers"},
	{From: "cmd/svc", To: "cmd/genmodels/slowload", Why: "the reload and start-up tests write the model that takes seconds to load"},
}
