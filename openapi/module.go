package openapi

import (
	"context"
	"fmt"
	"net/http"

	"go.uber.org/fx"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/transport"
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
// still be loading: Prepare builds them for each generation of the model
// (the first load and each reload); until the first, the pages answer 503.
type Site struct {
	codec *codec.Codec
	model *core.Model
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
	// Model is the served model, whose current generation the pages
	// describe.
	Model *core.Model
}

// NewSite returns an empty site.
func NewSite(p SiteParams) *Site { return &Site{codec: p.Codec, model: p.Model} }

// Prepare derives the document from a loaded generation of the model. It
// is a core.Preparer: an error fails start-up, or the reload.
func (s *Site) Prepare(r core.Runner) (any, error) {
	media, err := s.codec.For(r)
	if err != nil {
		return nil, err
	}
	doc, err := BuildWith(r.Info(), media)
	if err != nil {
		return nil, fmt.Errorf("derive the OpenAPI document: %w", err)
	}
	v, err := NewValidator(doc)
	if err != nil {
		return nil, err
	}
	docs, err := NewDocs(doc)
	if err != nil {
		return nil, err
	}
	return &siteState{routes: docs.Routes(), validator: v}, nil
}

// ValidateBody checks a /predict body against the document of generation
// g, the one the request runs on (a no-op without one, when /predict
// answers 503 anyway).
func (s *Site) ValidateBody(ctx context.Context, g *core.Generation, body []byte) error {
	if st, ok := core.ViewOf[*siteState](g); ok {
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
			g, err := s.model.Acquire()
			if err != nil {
				writeDetail(w, http.StatusServiceUnavailable, MsgModelLoading)
				return
			}
			defer g.Release()
			st, ok := core.ViewOf[*siteState](g)
			if !ok {
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
