// Package inference is the Go code generated from grpc_predict_v2.proto,
// the Open Inference Protocol v2 over gRPC (KServe's and Triton's
// inference.GRPCInferenceService, with Triton's model-repository RPCs):
// the messages and the service's client and server stubs. make proto
// regenerates it; transport/grpcapi serves it.
package inference
