package openapi

import (
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/svc-dev/svc/core/codec"
)

// What the document says of text inputs and the answer to text (svc.yml's
// models.NAME.text, or a tokenizer.json beside the model, resolved by
// core/codec): a body carries text (and text_pair), or the model's
// id inputs, and the answer to text is embedding, labels or entities.

// textInputSchema is a text input in the JSON body: one text or a list.
func textInputSchema(description string) *openapi3.Schema {
	one := openapi3.NewStringSchema()
	one.Title = "text"
	batch := openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema())
	batch.Title = "batch"
	batch.Description = "A list of texts: a batch, one answer each."
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

// addTextOutput adds the answer to text to the PredictResponse schema of
// a model with text inputs: embedding, labels or entities, one item per
// text.
func (b builder) addTextOutput(s *openapi3.Schema) {
	t := b.media.Text()
	if t == nil {
		return
	}
	var e *openapi3.Schema
	switch t.Answer() {
	case codec.OutputLabels:
		top := classesSchema(t.TopK(), "The label (its index when the model names none).", "The label's index in the model's logits.", "One text's labels, best first.")
		e = openapi3.NewArraySchema().WithItems(top)
		e.Description = fmt.Sprintf("The labels of each text (the answer to a text request; a request with the id inputs, or with raw, answers the model's outputs): %s scores.", t.Activation())
	case codec.OutputEntities:
		start := openapi3.NewIntegerSchema().WithMin(0)
		start.Description = "Where the entity starts in the text, in characters (Unicode code points)."
		end := openapi3.NewIntegerSchema().WithMin(0)
		end.Description = "Where the entity ends (exclusive), in characters."
		entity := openapi3.NewObjectSchema().
			WithProperty("entity", openapi3.NewStringSchema()).
			WithProperty("start", start).
			WithProperty("end", end).
			WithProperty("text", openapi3.NewStringSchema()).
			WithPropertyRef("score", openapi3.NewSchemaRef("", scoreSchema())).
			WithRequired([]string{"entity", "start", "end", "text", "score"})
		entity.Properties["entity"].Value.Description = "The entity's label, without its B- or I- prefix."
		entity.Properties["text"].Value.Description = "The entity's text, as the request wrote it."
		list := openapi3.NewArraySchema().WithItems(entity)
		list.Description = "One text's entities, in the order of the text."
		e = openapi3.NewArraySchema().WithItems(list)
		e.Description = "The entities of each text (the answer to a text request; a request with the id inputs, or with raw, answers the model's outputs)."
	default:
		vec := openapi3.NewArraySchema().WithItems(openapi3.NewFloat64Schema())
		if t.Hidden > 0 {
			vec.MinItems = uint64(t.Hidden)
			vec.MaxItems = openapi3.Ptr(uint64(t.Hidden))
		}
		e = openapi3.NewArraySchema().WithItems(vec)
		e.Description = "One embedding per text (the answer to a text request; a request with the id inputs, or with raw, answers the model's outputs)."
	}
	s.Properties[t.Answer()] = openapi3.NewSchemaRef("", e)
}

// classesSchema is one item's classes, best first (at most topK when it
// is above 0): each its label, index and score; the descriptions say what
// label, index and the list are for the answer at hand.
func classesSchema(topK int, labelDoc, indexDoc, listDoc string) *openapi3.Schema {
	class := openapi3.NewObjectSchema().
		WithProperty("label", openapi3.NewStringSchema()).
		WithProperty("index", openapi3.NewIntegerSchema().WithMin(0)).
		WithPropertyRef("score", openapi3.NewSchemaRef("", scoreSchema())).
		WithRequired([]string{"label", "index", "score"})
	class.Properties["label"].Value.Description = labelDoc
	class.Properties["index"].Value.Description = indexDoc
	top := openapi3.NewArraySchema().WithItems(class)
	if topK > 0 {
		top = top.WithMaxItems(int64(topK))
	}
	top.Description = listDoc
	return top
}

// scoreSchema is a score: a number, or null when it is not finite.
func scoreSchema() *openapi3.Schema {
	score := openapi3.NewFloat64Schema()
	score.Nullable = true
	score.Description = "The score (null if it is not a finite number)."
	return score
}

// textExample is the /predict example of a model with text inputs: a
// sentence.
func textExample() map[string]any {
	return map[string]any{codec.InputText: "The quick brown fox jumps over the lazy dog."}
}
