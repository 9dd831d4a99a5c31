package openapi

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"

	"go.uber.org/fx"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/transport"
	"github.com/svc-dev/svc/transport/codec"
	"github.com/svc-dev/svc/transport/rest"
)

// Module derives the document from the served model once it has loaded,
// validates /predict bodies against it and serves the documentation pages.
var Module = fx.Module("openapi",
	fx.Provide(
		NewSite,
		func(s *Site) rest.BodyValidator { return s },
		transport.AsRoutes(func(s *Site) []transport.Route { return s.Routes() }),
		core.AsPreparer(func(s *Site) core.Preparer { return s.Prepare }),
	),
)

// Site is the document, its validator and its pages for a model that may
// still be loading: Prepare builds them once it has loaded; until then the
// pages answer 503.
type Site struct {
	codec *codec.Codec
	state atomic.Pointer[siteState]
}

type siteState struct {
	routes    []transport.Route
	validator *Validator
}

// SiteParams are what NewSite takes through fx.
type SiteParams struct {
	fx.In
	// Codec gives the loaded model's image inputs and decoded outputs;
	// without it the document describes plain tensors.
	Codec *codec.Codec `optional:"true"`
}

// NewSite returns an empty site.
func NewSite(p SiteParams) *Site { return &Site{codec: p.Codec} }

// Prepare derives the document from the loaded model. It is a
// core.Preparer: an error fails start-up.
func (s *Site) Prepare(r core.Runner) error {
	media, err := s.codec.For(r)
	if err != nil {
		return err
	}
	doc, err := BuildWith(r.Info(), media)
	if err != nil {
		return fmt.Errorf("derive the OpenAPI document: %w", err)
	}
	v, err := NewValidator(doc)
	if err != nil {
		return err
	}
	docs, err := NewDocs(doc)
	if err != nil {
		return err
	}
	s.state.Store(&siteState{routes: docs.Routes(), validator: v})
	return nil
}

// ValidateBody checks a /predict body against the document (a no-op until
// the model has loaded, when /predict answers 503 anyway).
func (s *Site) ValidateBody(ctx context.Context, body []byte) error {
	if st := s.state.Load(); st != nil {
		return st.validator.ValidateBody(ctx, body)
	}
	return nil
}

// Routes are the documentation routes; each answers 503 until the model
// has loaded.
func (s *Site) Routes() []transport.Route {
	routes := (&Docs{}).Routes()
	for i := range routes {
		routes[i].Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			st := s.state.Load()
			if st == nil {
				writeDetail(w, http.StatusServiceUnavailable, MsgModelLoading)
				return
			}
			st.routes[i].Handler.ServeHTTP(w, r)
		})
	}
	return routes
}

// MsgModelLoading is the 503 detail of the documentation while the model
// loads.
const MsgModelLoading = "The model is still loading; the documentation is derived from it"
