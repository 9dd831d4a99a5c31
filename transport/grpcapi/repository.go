package grpcapi

import (
	"context"
	"errors"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/svc-dev/svc/transport/grpcapi/inference"
	"github.com/svc-dev/svc/transport/repository"
)

// The model-repository extension, Triton's RPCs over the one model svc
// serves, with the semantics of its REST routes (transport/repository):
// the index lists the model's version and state, a load reloads it from
// its source while the old version serves, an unload is refused.

func (s *Service) repository() (*repository.Handler, error) {
	if s.opts.Repository == nil {
		return nil, status.Error(codes.Unimplemented, "this server has no model-repository extension")
	}
	return s.opts.Repository, nil
}

// RepositoryIndex lists the served model: READY with the version that
// serves, LOADING with a reload under way, UNAVAILABLE with the last
// reload's failure. ready keeps the READY entries only.
func (s *Service) RepositoryIndex(_ context.Context, r *inference.RepositoryIndexRequest) (*inference.RepositoryIndexResponse, error) {
	h, err := s.repository()
	if err != nil {
		return nil, err
	}
	entries := h.Index()
	if r.GetReady() {
		entries = repository.Ready(entries)
	}
	resp := &inference.RepositoryIndexResponse{Models: make([]*inference.RepositoryIndexResponse_ModelIndex, len(entries))}
	for i, e := range entries {
		resp.Models[i] = &inference.RepositoryIndexResponse_ModelIndex{Name: e.Name, Version: e.Version, State: e.State, Reason: e.Reason}
	}
	return resp, nil
}

// RepositoryModelLoad reloads the model (a hot reload) and answers once
// the new version serves, or with why it does not (the old one still
// serves).
func (s *Service) RepositoryModelLoad(ctx context.Context, r *inference.RepositoryModelLoadRequest) (*inference.RepositoryModelLoadResponse, error) {
	h, err := s.repository()
	if err != nil {
		return nil, err
	}
	if _, err := h.Load(ctx, r.GetModelName(), len(r.GetParameters()) > 0); err != nil {
		return nil, repositoryStatus(err)
	}
	return &inference.RepositoryModelLoadResponse{}, nil
}

// RepositoryModelUnload is refused: svc serves one model.
func (s *Service) RepositoryModelUnload(_ context.Context, r *inference.RepositoryModelUnloadRequest) (*inference.RepositoryModelUnloadResponse, error) {
	h, err := s.repository()
	if err != nil {
		return nil, err
	}
	return nil, repositoryStatus(h.Unload(r.GetModelName()))
}

// repositoryStatus is the gRPC status of a repository call's error: the
// code of the HTTP status its REST route answers with.
func repositoryStatus(err error) error {
	var e *repository.Error
	if !errors.As(err, &e) {
		return status.Error(codes.Internal, err.Error())
	}
	code := codes.Internal
	switch e.Status {
	case http.StatusBadRequest:
		code = codes.InvalidArgument
	case http.StatusNotFound:
		code = codes.NotFound
	case http.StatusServiceUnavailable:
		code = codes.Unavailable
	}
	return status.Error(code, e.Msg)
}
