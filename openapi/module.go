package openapi

import (
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
	"go.uber.org/fx"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/transport"
)

// Module derives the document from the served model, validates /predict
// bodies against it and mounts the documentation pages.
var Module = fx.Module("openapi",
	fx.Provide(
		newDocFx,
		fx.Annotate(NewValidator, fx.As(new(transport.BodyValidator))),
		fx.Annotate(newDocsFx, fx.As(new(transport.Mounter)), fx.ResultTags(`group:"mounts"`)),
	),
)

func newDocFx(r core.Runner) (*openapi3.T, error) {
	doc, err := Build(r.Info())
	if err != nil {
		return nil, fmt.Errorf("derive the OpenAPI document: %w", err)
	}
	return doc, nil
}

func newDocsFx(doc *openapi3.T) (*Docs, error) { return NewDocs(doc) }
