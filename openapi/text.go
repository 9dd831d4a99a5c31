package openapi

import (
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/svc-dev/svc/transport/codec"
)

// What the document says of text inputs and the embedding output (svc.yml's
// models.NAME.text, or a tokenizer.json beside the model, resolved by
// transport/codec): a body carries text (and text_pair), or the model's
// id inputs, and the answer to text is embedding.

// textInputSchema is a text input in the JSON body: one text or a list.
func textInputSchema(description string) *openapi3.Schema {
	one := openapi3.NewStringSchema()
	one.Title = "text"
	batch := openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema())
	batch.Title = "batch"
	batch.Description = "A list of texts: a batch, one embedding each."
	s := openapi3.NewOneOfSchema(one, batch)
	s.Description = description
	return s
}

// addTextInputs adds text and text_pair to the PredictRequest schema of
// a model with text inputs, and their names to names.
func (b builder) addTextInputs(s *openapi3.Schema, names []string) []string {
	t := b.media.Text()
	if t == nil {
		return names
	}
	s.Properties[codec.InputText] = openapi3.NewSchemaRef("", textInputSchema("A text, or a list of texts, in place of the id inputs: "+t.Describe()+"."))
	s.Properties[codec.InputTextPair] = openapi3.NewSchemaRef("", textInputSchema("The second text of each pair, one per text (optional)."))
	return append(names, codec.InputText, codec.InputTextPair)
}

// addEmbeddingOutput adds embedding to the PredictResponse schema of a
// model with text inputs: the answer to a text request.
func (b builder) addEmbeddingOutput(s *openapi3.Schema) {
	t := b.media.Text()
	if t == nil {
		return
	}
	vec := openapi3.NewArraySchema().WithItems(openapi3.NewFloat64Schema())
	if t.Hidden > 0 {
		vec.MinItems = uint64(t.Hidden)
		vec.MaxItems = openapi3.Ptr(uint64(t.Hidden))
	}
	e := openapi3.NewArraySchema().WithItems(vec)
	e.Description = "One embedding per text (the answer to a text request; a request with the id inputs, or with raw, answers the model's outputs)."
	s.Properties[codec.OutputEmbedding] = openapi3.NewSchemaRef("", e)
}
