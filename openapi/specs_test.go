package openapi_test

import (
	"context"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/openapi"
)

// TestInputSpecsRoundTrip reads the inputs back from each document, as built
// and as reloaded from /openapi.json, and compares them with the model's.
func TestInputSpecsRoundTrip(t *testing.T) {
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			info := loadInfo(t, name)
			doc := buildDoc(t, name)
			data, err := openapi.MarshalDocument(doc)
			if err != nil {
				t.Fatal(err)
			}
			loaded, err := openapi3.NewLoader().LoadFromData(data)
			if err != nil {
				t.Fatal(err)
			}
			if err := loaded.Validate(context.Background()); err != nil {
				t.Fatal(err)
			}
			for label, d := range map[string]*openapi3.T{"built": doc, "reloaded": loaded} {
				got, err := openapi.InputSpecs(d)
				if err != nil {
					t.Fatalf("%s: %v", label, err)
				}
				if len(got) != len(info.Inputs) {
					t.Fatalf("%s: %d inputs, want %d", label, len(got), len(info.Inputs))
				}
				for i, in := range info.Inputs {
					g := got[i]
					wantShape := in.Shape
					if wantShape == nil {
						wantShape = []int64{}
					}
					if g.Name != in.Name || g.Type != in.Type || g.Required != in.Required ||
						!slices.Equal(g.Shape, wantShape) || g.Kind != core.KindTensor {
						t.Errorf("%s: input %d = %+v, want %+v", label, i, g, in)
					}
				}
			}
		})
	}
}
