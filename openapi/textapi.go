package openapi

import (
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/transport/openai"
	"github.com/svc-dev/svc/transport/tei"
)

// What the document says of the routes a text model answers in other
// servers' shapes (transport/openai, transport/tei): OpenAI's embeddings
// and models, Cohere's and Jina's rerank, TEI's embed, rerank, tokenize
// and decode, each with its own error shape.

// Names of their component schemas.
const (
	SchemaOpenAIError   = "OpenAIError"
	SchemaTEIError      = "TEIError"
	tagOpenAI           = "openai"
	tagTEI              = "text-embeddings-inference"
	openAIErrorExample  = "'input[1]' is an empty string: send a text"
	teiErrorExample     = "`inputs[1]` cannot be empty"
	textOrTextsOrIDsDoc = "A text, a list of texts, a list of token ids (as /tokenize answers them, special tokens included) or a list of such lists."
)

// addTextAPIs adds the routes of a text model in other servers' shapes:
// /v1/models and TEI's /tokenize and /decode for any, /v1/embeddings and
// /embed for an embedding model, /v1/rerank and /rerank for a
// cross-encoder.
func (b builder) addTextAPIs(doc *openapi3.T) {
	x := b.media.Text()
	if x == nil {
		return
	}
	doc.Tags = append(doc.Tags,
		&openapi3.Tag{Name: tagOpenAI, Description: "OpenAI's embeddings and models, and Cohere's and Jina's rerank, as OpenAI-compatible servers answer them. Errors are OpenAI's `{\"error\": {\"message\", \"type\", \"param\", \"code\"}}`."},
		&openapi3.Tag{Name: tagTEI, Description: "Hugging Face text-embeddings-inference's routes. Errors are `{\"error\", \"error_type\"}`."})
	c := doc.Components
	str := openapi3.NewStringSchema
	c.Schemas[SchemaOpenAIError] = openapi3.NewSchemaRef("", openapi3.NewObjectSchema().WithPropertyRef("error", openapi3.NewSchemaRef("", openapi3.NewObjectSchema().
		WithProperty("message", str()).WithProperty("type", str()).
		WithProperty("param", nullable(str())).WithProperty("code", nullable(str())).
		WithRequired([]string{"message", "type", "param", "code"}))).WithRequired([]string{"error"}))
	c.Schemas[SchemaTEIError] = openapi3.NewSchemaRef("", openapi3.NewObjectSchema().
		WithProperty("error", str()).
		WithProperty("error_type", str().WithEnum(tei.ErrValidation, tei.ErrTokenizer, tei.ErrEmpty, tei.ErrOverloaded, tei.ErrUnhealthy, tei.ErrBackend)).
		WithRequired([]string{"error", "error_type"}))
	model := openapi3.NewObjectSchema().WithProperty("id", str()).WithProperty("object", str()).
		WithProperty("created", openapi3.NewInt64Schema()).WithProperty("owned_by", str())
	models := &openapi3.Operation{OperationID: "openaiModels", Tags: []string{tagOpenAI}, Summary: "List the model (OpenAI)",
		Description: "The one model served, as OpenAI's API lists models.", Responses: openapi3.NewResponses()}
	models.Responses.Set("200", jsonResponse("The model.", openapi3.NewObjectSchema().WithProperty("object", str()).
		WithProperty("data", openapi3.NewArraySchema().WithItems(model)), map[string]any{"object": "list", "data": []any{map[string]any{"id": b.info.Name, "object": "model", "created": 0, "owned_by": "svc"}}}))
	doc.Paths.Set(openai.PathModels, &openapi3.PathItem{Get: models})
	if x.Task == config.TaskEmbedding {
		doc.Paths.Set(openai.PathEmbeddings, &openapi3.PathItem{Post: b.embeddingsOperation()})
		doc.Paths.Set(tei.PathEmbed, &openapi3.PathItem{Post: b.teiEmbedOperation()})
	}
	if x.Reranks() {
		doc.Paths.Set(openai.PathRerank, &openapi3.PathItem{Post: b.rerankOperation()})
		doc.Paths.Set(tei.PathRerank, &openapi3.PathItem{Post: b.teiRerankOperation()})
	}
	doc.Paths.Set(tei.PathTokenize, &openapi3.PathItem{Post: b.teiTokenizeOperation()})
	doc.Paths.Set(tei.PathDecode, &openapi3.PathItem{Post: b.teiDecodeOperation()})
}

func nullable(s *openapi3.Schema) *openapi3.Schema {
	s.Nullable = true
	return s
}

func jsonResponse(description string, s *openapi3.Schema, example any) *openapi3.ResponseRef {
	mt := openapi3.NewMediaType().WithSchema(s)
	mt.Example = example
	return &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription(description).WithContent(openapi3.Content{"application/json": mt})}
}

// errorResponses adds the error statuses of a route in the shape of
// schema, each with its description.
func errorResponses(op *openapi3.Operation, schema string, example any, statuses map[string]string) {
	for status, description := range statuses {
		mt := openapi3.NewMediaType().WithSchemaRef(schemaRef(schema))
		mt.Example = example
		op.Responses.Set(status, &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription(description).WithContent(openapi3.Content{"application/json": mt})})
	}
}

func jsonBody(s *openapi3.Schema, example any) *openapi3.RequestBodyRef {
	mt := openapi3.NewMediaType().WithSchema(s)
	mt.Example = example
	return &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithContent(openapi3.Content{"application/json": mt})}
}

// textInputs is input (OpenAI's) or inputs (TEI's): a text, texts, ids.
func textInputs() *openapi3.Schema {
	ids := openapi3.NewArraySchema().WithItems(openapi3.NewInt64Schema().WithMin(0)).WithMinItems(1)
	s := openapi3.NewOneOfSchema(openapi3.NewStringSchema().WithMinLength(1),
		openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema().WithMinLength(1)).WithMinItems(1),
		ids, openapi3.NewArraySchema().WithItems(ids).WithMinItems(1))
	s.Description = textOrTextsOrIDsDoc
	return s
}

func (b builder) openAIErrors(op *openapi3.Operation) {
	errorResponses(op, SchemaOpenAIError, map[string]any{"error": map[string]any{"message": openAIErrorExample, "type": "invalid_request_error", "param": "input", "code": nil}}, map[string]string{
		"400": "invalid_request_error, param naming the field at fault: an empty input or text, a field the route does not take, a value out of range.",
		"404": "model_not_found: another model's name.",
		"413": "request_too_large: the body, or a limit (limits.max_texts, limits.max_tokens: param names the key).",
		"503": "server_error: busy (Retry-After), or the model is not ready.",
		"504": "server_error: the request's deadline passed.",
	})
}

func (b builder) embeddingsOperation() *openapi3.Operation {
	req := openapi3.NewObjectSchema().WithPropertyRef("input", openapi3.NewSchemaRef("", textInputs())).
		WithProperty("model", openapi3.NewStringSchema().WithEnum(b.info.Name)).
		WithProperty("encoding_format", openapi3.NewStringSchema().WithEnum("float", "base64")).
		WithProperty("dimensions", openapi3.NewIntegerSchema().WithMin(1)).
		WithProperty("user", openapi3.NewStringSchema()).WithRequired([]string{"input"})
	req.AdditionalProperties = openapi3.AdditionalProperties{Has: openapi3.Ptr(false)}
	vector := openapi3.NewOneOfSchema(openapi3.NewArraySchema().WithItems(openapi3.NewFloat64Schema()), openapi3.NewStringSchema().WithFormat("byte"))
	vector.Description = "The embedding: numbers (float), or little-endian float32 in base64 (base64)."
	item := openapi3.NewObjectSchema().WithProperty("object", openapi3.NewStringSchema()).
		WithProperty("index", openapi3.NewIntegerSchema()).WithPropertyRef("embedding", openapi3.NewSchemaRef("", vector))
	usage := openapi3.NewObjectSchema().WithProperty("prompt_tokens", openapi3.NewIntegerSchema()).WithProperty("total_tokens", openapi3.NewIntegerSchema())
	resp := openapi3.NewObjectSchema().WithProperty("object", openapi3.NewStringSchema()).
		WithProperty("data", openapi3.NewArraySchema().WithItems(item)).
		WithProperty("model", openapi3.NewStringSchema()).WithProperty("usage", usage)
	op := &openapi3.Operation{OperationID: "openaiEmbeddings", Tags: []string{tagOpenAI}, Summary: "Embeddings (OpenAI)",
		Description: "OpenAI's embeddings: one embedding per input, in its order; the texts run in batches by tokens (text.max_batch_tokens). `dimensions` keeps the first values and normalises them again when the model normalises.",
		RequestBody: jsonBody(req, map[string]any{"model": b.info.Name, "input": []string{"A sentence in.", "One vector out, for each text."}, "encoding_format": "float"}),
		Responses:   openapi3.NewResponses()}
	op.Responses.Set("200", jsonResponse("The embeddings.", resp, nil))
	b.openAIErrors(op)
	return op
}

func (b builder) rerankOperation() *openapi3.Operation {
	doc := openapi3.NewOneOfSchema(openapi3.NewStringSchema().WithMinLength(1),
		openapi3.NewObjectSchema().WithProperty("text", openapi3.NewStringSchema().WithMinLength(1)).WithRequired([]string{"text"}))
	req := openapi3.NewObjectSchema().WithProperty("query", openapi3.NewStringSchema().WithMinLength(1)).
		WithProperty("documents", openapi3.NewArraySchema().WithItems(doc).WithMinItems(1)).
		WithProperty("top_n", openapi3.NewIntegerSchema().WithMin(1)).
		WithProperty("return_documents", openapi3.NewBoolSchema()).
		WithProperty("model", openapi3.NewStringSchema().WithEnum(b.info.Name)).WithRequired([]string{"query", "documents"})
	req.AdditionalProperties = openapi3.AdditionalProperties{Has: openapi3.Ptr(false)}
	result := openapi3.NewObjectSchema().WithProperty("index", openapi3.NewIntegerSchema()).
		WithProperty("relevance_score", openapi3.NewFloat64Schema()).
		WithProperty("document", openapi3.NewObjectSchema().WithProperty("text", openapi3.NewStringSchema()))
	resp := openapi3.NewObjectSchema().WithProperty("id", openapi3.NewStringSchema()).WithProperty("model", openapi3.NewStringSchema()).
		WithProperty("results", openapi3.NewArraySchema().WithItems(result)).
		WithProperty("usage", openapi3.NewObjectSchema().WithProperty("total_tokens", openapi3.NewIntegerSchema())).
		WithProperty("meta", openapi3.NewObjectSchema())
	op := &openapi3.Operation{OperationID: "rerank", Tags: []string{tagOpenAI}, Summary: "Rerank (Cohere, Jina)",
		Description: "Cohere's and Jina's rerank: the documents best first, each scored by the cross-encoder against the query (the sigmoid of its logit).",
		RequestBody: jsonBody(req, map[string]any{"query": "Is it raining?", "documents": []string{"It rains all day.", "The sun is out."}, "top_n": 1, "return_documents": true}),
		Responses:   openapi3.NewResponses()}
	op.Responses.Set("200", jsonResponse("The documents, best first.", resp, nil))
	b.openAIErrors(op)
	return op
}

func (b builder) teiErrors(op *openapi3.Operation) {
	errorResponses(op, SchemaTEIError, map[string]any{"error": teiErrorExample, "error_type": tei.ErrEmpty}, map[string]string{
		"400": "Empty: an empty input, or an empty text in it.",
		"413": "Validation: a text over the maximum length not to be cut, a limit passed, a value out of range.",
		"422": "Validation: a body the route cannot read (not JSON, an unknown field, a wrong kind); Tokenizer: an id the tokenizer does not have.",
		"424": "Backend: the run failed.",
		"429": "Overloaded: busy (Retry-After).",
		"503": "Unhealthy: the model is not ready.",
	})
}

func teiOperation(id, summary, description string, req *openapi3.Schema, example any, resp *openapi3.Schema) *openapi3.Operation {
	req.AdditionalProperties = openapi3.AdditionalProperties{Has: openapi3.Ptr(false)}
	op := &openapi3.Operation{OperationID: id, Tags: []string{tagTEI}, Summary: summary, Description: description,
		RequestBody: jsonBody(req, example), Responses: openapi3.NewResponses()}
	op.Responses.Set("200", jsonResponse(summary+".", resp, nil))
	return op
}

func truncation(s *openapi3.Schema) *openapi3.Schema {
	return s.WithProperty("truncate", openapi3.NewBoolSchema()).
		WithProperty("truncation_direction", openapi3.NewStringSchema().WithEnum("Left", "Right"))
}

func (b builder) teiEmbedOperation() *openapi3.Operation {
	req := truncation(openapi3.NewObjectSchema().WithPropertyRef("inputs", openapi3.NewSchemaRef("", textInputs())).
		WithProperty("normalize", openapi3.NewBoolSchema()).WithProperty("dimensions", openapi3.NewIntegerSchema().WithMin(1)).
		WithProperty("prompt_name", openapi3.NewStringSchema())).WithRequired([]string{"inputs"})
	op := teiOperation("teiEmbed", "Embed (TEI)", "TEI's embed: one embedding per input, normalised unless normalize is false.", req,
		map[string]any{"inputs": []string{"A sentence in."}}, openapi3.NewArraySchema().WithItems(openapi3.NewArraySchema().WithItems(openapi3.NewFloat64Schema())))
	b.teiErrors(op)
	return op
}

func (b builder) teiRerankOperation() *openapi3.Operation {
	result := openapi3.NewObjectSchema().WithProperty("index", openapi3.NewIntegerSchema()).
		WithProperty("score", openapi3.NewFloat64Schema()).WithProperty("text", openapi3.NewStringSchema())
	req := truncation(openapi3.NewObjectSchema().WithProperty("query", openapi3.NewStringSchema().WithMinLength(1)).
		WithProperty("texts", openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema().WithMinLength(1)).WithMinItems(1)).
		WithProperty("raw_scores", openapi3.NewBoolSchema()).WithProperty("return_text", openapi3.NewBoolSchema())).WithRequired([]string{"query", "texts"})
	op := teiOperation("teiRerank", "Rerank (TEI)", "TEI's rerank: the texts best first, scored by the cross-encoder against the query (the sigmoid of its logit unless raw_scores).", req,
		map[string]any{"query": "Is it raining?", "texts": []string{"It rains all day.", "The sun is out."}}, openapi3.NewArraySchema().WithItems(result))
	b.teiErrors(op)
	return op
}

func (b builder) teiTokenizeOperation() *openapi3.Operation {
	offset := nullable(openapi3.NewIntegerSchema().WithMin(0))
	offset.Description = "In characters (Unicode code points) of the input; null for a special token."
	tok := openapi3.NewObjectSchema().WithProperty("id", openapi3.NewIntegerSchema()).WithProperty("text", openapi3.NewStringSchema()).
		WithProperty("special", openapi3.NewBoolSchema()).WithProperty("start", offset).WithProperty("stop", offset)
	inputs := openapi3.NewOneOfSchema(openapi3.NewStringSchema().WithMinLength(1),
		openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema().WithMinLength(1)).WithMinItems(1))
	req := openapi3.NewObjectSchema().WithPropertyRef("inputs", openapi3.NewSchemaRef("", inputs)).
		WithProperty("add_special_tokens", openapi3.NewBoolSchema()).WithProperty("prompt_name", openapi3.NewStringSchema()).WithRequired([]string{"inputs"})
	op := teiOperation("teiTokenize", "Tokenize (TEI)", "TEI's tokenize: each input's tokens, with their place in it.", req,
		map[string]any{"inputs": "hello world"}, openapi3.NewArraySchema().WithItems(openapi3.NewArraySchema().WithItems(tok)))
	b.teiErrors(op)
	return op
}

func (b builder) teiDecodeOperation() *openapi3.Operation {
	ids := openapi3.NewArraySchema().WithItems(openapi3.NewInt64Schema().WithMin(0)).WithMinItems(1)
	req := openapi3.NewObjectSchema().WithPropertyRef("ids", openapi3.NewSchemaRef("", openapi3.NewOneOfSchema(ids, openapi3.NewArraySchema().WithItems(ids).WithMinItems(1)))).
		WithProperty("skip_special_tokens", openapi3.NewBoolSchema()).WithRequired([]string{"ids"})
	op := teiOperation("teiDecode", "Decode (TEI)", "TEI's decode: ids back to text, as the tokenizer.json's decoder says.", req,
		map[string]any{"ids": []int{0}}, openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema()))
	b.teiErrors(op)
	return op
}
