// Package oip holds the Open Inference Protocol v2, once for all its wire
// forms, and serves it over REST.
//
// The protocol's model: its datatypes (Datatype), the view of the loaded
// model that every codec works from (View: inputs, outputs, metadata), an
// inference request (Request) with its checks against the model's inputs
// and outputs, the outputs a response carries, and the refusals with
// their messages (Error, of a Kind that each codec maps to its own
// status). Its codecs convert their wire form to that model and back: the
// REST codec here (JSON and Triton's binary tensor data extension), and
// the gRPC codec in transport/grpcapi, which imports this package (and no
// other protocol's).
//
// The REST codec serves the KServe and Triton "v2" API on the HTTP port:
// server and model metadata, liveness and readiness, and inference at
// /v2/models/{name}[/versions/{version}]/infer. Errors are
// {"error": "..."}. It decodes requests, calls core's runner (so batching,
// the timeout and the body limit are those of /predict) and encodes the
// answers; it imports no other protocol.
//
// Choices where the protocol leaves room:
//
//   - The request's "parameters" object is returned, as sent, as the
//     response's "parameters"; absent when the request has none.
//   - "id" is echoed as sent; absent when the request has none.
//   - Tensor "data" is flat (row-major) or nested exactly as "shape"; a
//     one-element tensor may be a bare value.
//   - Unknown members of the request, of an input or of an output are
//     ignored, except the shared-memory and classification parameters,
//     which are refused (400) since svc does not implement them.
//   - Outputs that are not tensors (sequences, maps) are not listed in the
//     model metadata and not returned unless named, which is a 400.
//   - Readiness is 200 {"ready": true} or 503 {"error": "..."}; liveness
//     is 200 {"live": true}; model readiness 200 {"name", "ready": true}.
//   - Requests for another model name, or a version other than the
//     model's, are 404. Unknown paths under /v2 and wrong methods get the
//     server's own 404 and 405.
package oip
