package openapi_test

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/openapi"
	"github.com/svc-dev/svc/transport/rest"
)

// TestSchemaAgreesWithDecoder feeds the bodies of TestBatchRule, and every
// example, to both the document's full request schema and core/tensor's
// typed decoder: what the document says is accepted must be what the server
// accepts, and the other way round.
func TestSchemaAgreesWithDecoder(t *testing.T) {
	bodies := map[string][]string{}
	for _, tt := range batchRuleCases {
		bodies[tt.model] = append(bodies[tt.model], tt.body)
	}
	for model, list := range bodies {
		doc := buildDoc(t, model)
		schema := requestSchema(t, doc)
		specs := tensorSpecs(t, model)
		for _, body := range list {
			schemaErr := schema.VisitJSON(mustJSON(t, body), openapi3.MultiErrors())
			_, decodeErr := rest.DecodeRequest([]byte(body), specs)
			if (schemaErr == nil) != (decodeErr == nil) {
				t.Errorf("%s %s: schema accepts=%v (%v), decoder accepts=%v (%v)",
					model, body, schemaErr == nil, schemaErr, decodeErr == nil, decodeErr)
			}
		}
	}
}

// tensorSpecs builds the typed decoder's specs from the inputs read back from
// the document, so that both checks are driven by the same derived spec.
func tensorSpecs(tb testing.TB, model string) []tensor.Spec {
	tb.Helper()
	inputs, err := openapi.InputSpecs(buildDoc(tb, model))
	if err != nil {
		tb.Fatal(err)
	}
	var specs []tensor.Spec
	for _, in := range inputs {
		dt, ok := tensor.ParseDType(in.Type)
		if !ok {
			tb.Fatalf("%s: core/tensor has no dtype %q", model, in.Type)
		}
		specs = append(specs, tensor.Spec{Name: in.Name, DType: dt, Shape: in.Shape, Required: in.Required})
	}
	return specs
}
