package openapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/rest"
)

// OpenAPIVersion is the version of the OpenAPI specification the derived
// document follows.
const OpenAPIVersion = "3.0.3"

// Names of the document's component schemas and responses.
const (
	SchemaPredictRequest  = "PredictRequest"
	SchemaPredictResponse = "PredictResponse"
	SchemaError           = "Error"
	SchemaHealth          = "Health"
	SchemaModelInfo       = "ModelInfo"
	SchemaInputSpec       = "InputSpec"
	SchemaOutputSpec      = "OutputSpec"
	SchemaMetrics         = "Metrics"
	SchemaProviderInfo    = "ProviderInfo"

	responseBadRequest       = "BadRequest"
	responseTooLarge         = "PayloadTooLarge"
	responseUnsupportedMedia = "UnsupportedMediaType"
	responseInferenceFailed  = "InferenceFailed"
	responseInferenceTimeout = "InferenceTimeout"
	responseInternalError    = "InternalError"
	responseDocsUnavailable  = "DocsUnavailable"
)

// Paths of the v1 API, which the document describes.
const (
	PathPredict = rest.PathPredict
	PathHealth  = rest.PathHealth
	PathInfo    = rest.PathInfo
	PathMetrics = rest.PathMetrics
)

// Paths of the documentation this package serves.
const (
	PathDocs  = "/docs"
	PathRedoc = "/redoc"
	PathSpec  = "/openapi.json"
)

// ErrInvalidModelInfo is wrapped by Build when the model description cannot
// be turned into a document (an input without a name, a duplicate name).
var ErrInvalidModelInfo = errors.New("invalid model info")

// Build derives the service's OpenAPI document from the model description
// and validates it with kin-openapi. The document is self-contained: every
// $ref points into its own components, and every ref carries its value, so it
// can be used for validation without loading it again.
func Build(info core.ModelInfo) (*openapi3.T, error) {
	return BuildWith(info, nil)
}

// BuildWith is Build for a model with the image inputs and decoded outputs
// of media (core/codec; nil: none): an image input takes pictures
// (base64 or data: URLs in JSON, files in multipart/form-data, or the
// whole body), a decoded output answers labels and scores or text, and
// /predict takes ?raw=true.
func BuildWith(info core.ModelInfo, media *codec.Set) (*openapi3.T, error) {
	if err := checkInfo(info); err != nil {
		return nil, err
	}
	b := builder{info: info, media: media}
	doc := b.document()
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("derived OpenAPI document is invalid: %w", err)
	}
	return doc, nil
}

func checkInfo(info core.ModelInfo) error {
	seen := make(map[string]bool, len(info.Inputs))
	for i, in := range info.Inputs {
		if in.Name == "" {
			return fmt.Errorf("%w: input %d has no name", ErrInvalidModelInfo, i)
		}
		if seen[in.Name] {
			return fmt.Errorf("%w: input %q appears twice", ErrInvalidModelInfo, in.Name)
		}
		seen[in.Name] = true
	}
	seen = make(map[string]bool, len(info.Outputs))
	for i, out := range info.Outputs {
		if out.Name == "" {
			return fmt.Errorf("%w: output %d has no name", ErrInvalidModelInfo, i)
		}
		if seen[out.Name] {
			return fmt.Errorf("%w: output %q appears twice", ErrInvalidModelInfo, out.Name)
		}
		seen[out.Name] = true
	}
	return nil
}

type builder struct {
	info core.ModelInfo
	// media holds the image inputs and decoded outputs (nil: none).
	media *codec.Set
}

func schemaRef(name string) *openapi3.SchemaRef {
	return openapi3.NewSchemaRef("#/components/schemas/"+name, nil)
}

func responseRef(name string) *openapi3.ResponseRef {
	return &openapi3.ResponseRef{Ref: "#/components/responses/" + name}
}

func (b builder) document() *openapi3.T {
	title := b.info.Name
	if title == "" {
		title = "svc"
	}
	version := b.info.Version
	if version == "" {
		version = "unversioned"
	}
	doc := &openapi3.T{
		OpenAPI: OpenAPIVersion,
		Info: &openapi3.Info{
			Title:       title,
			Version:     version,
			Description: b.description(),
		},
		Tags: openapi3.Tags{
			{Name: "inference", Description: "Run the model."},
			{Name: "model", Description: "The loaded model and the server."},
			{Name: "documentation", Description: "This document and its pages."},
		},
		Components: b.components(),
	}
	doc.Paths = openapi3.NewPaths(
		openapi3.WithPath(PathPredict, &openapi3.PathItem{Post: b.predictOperation()}),
		openapi3.WithPath(PathHealth, &openapi3.PathItem{Get: b.simpleGet("health", "model", "Health check",
			"Answers `healthy` whenever the server responds.", SchemaHealth,
			rest.Health{Status: "healthy", Model: b.info.Name})}),
		openapi3.WithPath(PathInfo, &openapi3.PathItem{Get: b.infoOperation()}),
		openapi3.WithPath(PathMetrics, &openapi3.PathItem{Get: b.simpleGet("metrics", "model", "Provider information",
			"The execution provider in use and the providers available on the host.", SchemaMetrics, nil)}),
		openapi3.WithPath(PathDocs, &openapi3.PathItem{Get: b.pageOperation("docs", "Interactive documentation (Swagger UI)")}),
		openapi3.WithPath(PathRedoc, &openapi3.PathItem{Get: b.pageOperation("redoc", "Alternative documentation (ReDoc)")}),
		openapi3.WithPath(PathSpec, &openapi3.PathItem{Get: b.specOperation()}),
	)
	b.addV2(doc)
	b.addMetrics(doc)
	b.addTextAPIs(doc)
	resolveRefs(doc)
	return doc
}

func (b builder) description() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Inference service for the %s model", strings.ToUpper(orDefault(b.info.Format, "onnx")))
	if b.info.Name != "" {
		fmt.Fprintf(&sb, " `%s`", b.info.Name)
	}
	sb.WriteString(".\n\n")
	if b.takesPictures() {
		sb.WriteString("Bodies are JSON, except that /predict also takes pictures for the model's image inputs (multipart/form-data, or an image body). Every error answers")
	} else {
		sb.WriteString("All bodies are JSON. Every error answers")
	}
	sb.WriteString(" with a JSON object holding one string field, `detail`. ")
	sb.WriteString("An unknown path answers 404 and a known path with another method answers 405, both with that error body.")
	return sb.String()
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (b builder) components() *openapi3.Components {
	c := openapi3.NewComponents()
	c.Schemas = openapi3.Schemas{
		SchemaError:           openapi3.NewSchemaRef("", errorSchema()),
		SchemaHealth:          openapi3.NewSchemaRef("", healthSchema()),
		SchemaModelInfo:       openapi3.NewSchemaRef("", modelInfoSchema()),
		SchemaInputSpec:       openapi3.NewSchemaRef("", inputSpecSchema()),
		SchemaOutputSpec:      openapi3.NewSchemaRef("", outputSpecSchema()),
		SchemaMetrics:         openapi3.NewSchemaRef("", metricsSchema()),
		SchemaProviderInfo:    openapi3.NewSchemaRef("", providerInfoSchema()),
		SchemaPredictRequest:  openapi3.NewSchemaRef("", b.predictRequestSchema()),
		SchemaPredictResponse: openapi3.NewSchemaRef("", b.predictResponseSchema()),
	}
	firstRequired := "input"
	for _, in := range b.info.Inputs {
		if in.Required {
			firstRequired = in.Name
			break
		}
	}
	c.Responses = openapi3.ResponseBodies{
		responseBadRequest: errorResponse(
			"Invalid input: a required input is missing, an input has the wrong JSON type, shape or element type, or the body is not a JSON object.",
			fmt.Sprintf("Missing required input: '%s'", firstRequired)),
		responseTooLarge:         errorResponse("The request body is larger than the server accepts (limits.max_body_size).", "Request body too large: the limit is 16 MiB"),
		responseUnsupportedMedia: b.unsupportedMediaResponse(),
		responseInferenceFailed:  errorResponse("Model execution failed.", "Inference failed: <reason>"),
		responseInferenceTimeout: errorResponse("Model execution took longer than the configured timeout.", "Inference timed out after 30s"),
		responseInternalError:    errorResponse("Internal server error.", "Internal server error"),
		responseDocsUnavailable: errorResponse("The documentation assets were not bundled into this build.",
			"Documentation assets are not bundled in this build; run 'make assets' and rebuild"),
	}
	return &c
}

func errorResponse(description, example string) *openapi3.ResponseRef {
	mt := openapi3.NewMediaType().WithSchemaRef(schemaRef(SchemaError))
	mt.Example = map[string]any{"detail": example}
	return &openapi3.ResponseRef{Value: openapi3.NewResponse().
		WithDescription(description).
		WithContent(openapi3.Content{"application/json": mt})}
}

func (b builder) predictRequestSchema() *openapi3.Schema {
	s := openapi3.NewObjectSchema()
	s.Description = "One property per model input, keyed by the input name. A list of items under one input name sends a batch."
	s.AdditionalProperties = openapi3.AdditionalProperties{Has: openapi3.Ptr(false)}
	s.Properties = make(openapi3.Schemas, len(b.info.Inputs))
	names := make([]string, 0, len(b.info.Inputs))
	for _, in := range b.info.Inputs {
		if im := b.imageOf(in.Name); im != nil {
			s.Properties[in.Name] = openapi3.NewSchemaRef("", imageInputSchema(in, im))
		} else if b.picturesOf(in.Name) {
			s.Properties[in.Name] = openapi3.NewSchemaRef("", picturesInputSchema(in))
		} else {
			s.Properties[in.Name] = openapi3.NewSchemaRef("", inputSchema(in))
		}
		if in.Required && b.media.Text() == nil {
			s.Required = append(s.Required, in.Name)
		}
		names = append(names, in.Name)
	}
	names = b.addTextInputs(s, names)
	s.Extensions = map[string]any{extInputs: names}
	return s
}

func (b builder) predictResponseSchema() *openapi3.Schema {
	s := openapi3.NewObjectSchema()
	s.Description = "One property per model output, keyed by the output name."
	s.Properties = make(openapi3.Schemas, len(b.info.Outputs))
	for i, out := range b.info.Outputs {
		if o := b.media.Output(out.Name); o != nil {
			s.Properties[out.Name] = openapi3.NewSchemaRef("", decodedOutputSchema(out, o))
		} else {
			s.Properties[out.Name] = openapi3.NewSchemaRef("", outputSchema(out))
		}
		if b.media.Consumed(i) {
			p := s.Properties[out.Name].Value
			p.Description = "Answered with ?raw=true only: a decoded output reads it (a segment output's prototype masks). " + p.Description
			continue
		}
		if b.media.Text() == nil {
			s.Required = append(s.Required, out.Name)
		}
	}
	b.addTextOutput(s)
	return s
}

func (b builder) predictOperation() *openapi3.Operation {
	op := openapi3.NewOperation()
	op.OperationID = "predict"
	op.Tags = []string{"inference"}
	op.Summary = "Run inference"
	op.Description = b.predictDescription()
	mt := openapi3.NewMediaType().WithSchemaRef(schemaRef(SchemaPredictRequest))
	ex := b.exampleBody()
	if ex != nil {
		mt.Example = ex
	}
	content := openapi3.Content{"application/json": mt}
	b.addMediaContent(content, ex)
	description := "JSON object mapping each model input name to its value."
	if len(content) > 1 {
		description += " For image inputs, also a multipart/form-data body of a field per input."
	}
	op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().
		WithDescription(description).
		WithRequired(true).
		WithContent(content)}
	if ps := b.detectionParameters(); len(b.media.Outputs()) > 0 {
		op.Parameters = append(openapi3.Parameters{rawParameter()}, ps...)
	} else if len(ps) > 0 {
		op.Parameters = ps // a pipeline's draw
	}
	ok := openapi3.NewResponse().WithDescription("The model's outputs.").WithJSONSchemaRef(schemaRef(SchemaPredictResponse))
	b.addDrawingContent(ok)
	op.Responses = openapi3.NewResponses(
		openapi3.WithStatus(http.StatusOK, &openapi3.ResponseRef{Value: ok}),
		openapi3.WithStatus(http.StatusBadRequest, responseRef(responseBadRequest)),
		openapi3.WithStatus(http.StatusRequestEntityTooLarge, responseRef(responseTooLarge)),
		openapi3.WithStatus(http.StatusUnsupportedMediaType, responseRef(responseUnsupportedMedia)),
		openapi3.WithStatus(http.StatusInternalServerError, responseRef(responseInferenceFailed)),
		openapi3.WithStatus(http.StatusGatewayTimeout, responseRef(responseInferenceTimeout)),
	)
	return op
}

func (b builder) predictDescription() string {
	var sb strings.Builder
	sb.WriteString("Runs the model on the inputs in the body and answers with its outputs.\n\n")
	sb.WriteString("| Input | Type | Shape | Required |\n|---|---|---|---|\n")
	for _, in := range b.info.Inputs {
		shape := "scalar"
		if inputKind(in.Kind, in.Type) != core.KindTensor {
			shape = "n/a"
		} else if in.Shape == nil {
			shape = "any"
		} else if len(in.Shape) > 0 {
			shape = tensor.FormatShape(in.Shape)
		}
		typ := in.Type
		if b.imageOf(in.Name) != nil || b.picturesOf(in.Name) {
			typ, shape = "image", "one picture, or a list (batch)"
		}
		fmt.Fprintf(&sb, "| `%s` | %s | %s | %s |\n", in.Name, typ, shape, yesNo(in.Required))
	}
	sb.WriteString("\n-1 is a dynamic dimension. A list of items under one input name sends a batch; ")
	sb.WriteString("when the first dimension is -1 or 1, a single item may be sent without the batch level.")
	b.mediaDescription(&sb)
	return sb.String()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func (b builder) simpleGet(id, tag, summary, description, schema string, example any) *openapi3.Operation {
	op := openapi3.NewOperation()
	op.OperationID = id
	op.Tags = []string{tag}
	op.Summary = summary
	op.Description = description
	mt := openapi3.NewMediaType().WithSchemaRef(schemaRef(schema))
	if example != nil {
		mt.Example = toJSONValue(example)
	}
	op.Responses = openapi3.NewResponses(
		openapi3.WithStatus(http.StatusOK, &openapi3.ResponseRef{Value: openapi3.NewResponse().
			WithDescription(summary + ".").
			WithContent(openapi3.Content{"application/json": mt})}),
	)
	return op
}

func (b builder) infoOperation() *openapi3.Operation {
	info := b.infoExample()
	op := b.simpleGet("info", "model", "Model information",
		"Name, version, format, size, inputs and outputs of the loaded model. The input names are the keys of the /predict body.",
		SchemaModelInfo, info)
	op.Responses.Set("500", responseRef(responseInternalError))
	return op
}

func (b builder) pageOperation(id, summary string) *openapi3.Operation {
	op := openapi3.NewOperation()
	op.OperationID = id
	op.Tags = []string{"documentation"}
	op.Summary = summary
	op.Description = "An HTML page generated from /openapi.json. Its scripts and styles are served by this server; the page loads nothing from elsewhere."
	op.Responses = openapi3.NewResponses(
		openapi3.WithStatus(http.StatusOK, &openapi3.ResponseRef{Value: openapi3.NewResponse().
			WithDescription("HTML page.").
			WithContent(openapi3.Content{"text/html": openapi3.NewMediaType().WithSchema(openapi3.NewStringSchema())})}),
		openapi3.WithStatus(http.StatusServiceUnavailable, responseRef(responseDocsUnavailable)),
	)
	return op
}

func (b builder) specOperation() *openapi3.Operation {
	op := openapi3.NewOperation()
	op.OperationID = "openapi"
	op.Tags = []string{"documentation"}
	op.Summary = "Machine-readable API specification"
	op.Description = "This OpenAPI document, derived from the loaded model."
	obj := openapi3.NewObjectSchema()
	obj.AdditionalProperties = openapi3.AdditionalProperties{Has: openapi3.Ptr(true)}
	op.Responses = openapi3.NewResponses(
		openapi3.WithStatus(http.StatusOK, &openapi3.ResponseRef{Value: openapi3.NewResponse().
			WithDescription("OpenAPI 3.0 document.").
			WithJSONSchema(obj)}),
	)
	return op
}

// toJSONValue turns a Go value into its generic JSON form (maps, slices,
// float64), which is what an example must be for kin-openapi to validate it.
func toJSONValue(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil
	}
	return out
}

// resolveRefs fills the Value of every component $ref in the document so
// that it can be validated and used without a loader.
func resolveRefs(doc *openapi3.T) {
	schemas := doc.Components.Schemas
	responses := doc.Components.Responses
	var visitSchema func(ref *openapi3.SchemaRef)
	seen := map[*openapi3.Schema]bool{}
	visitSchema = func(ref *openapi3.SchemaRef) {
		if ref == nil {
			return
		}
		if ref.Ref != "" && ref.Value == nil {
			ref.Value = schemas[strings.TrimPrefix(ref.Ref, "#/components/schemas/")].Value
		}
		s := ref.Value
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		for _, p := range s.Properties {
			visitSchema(p)
		}
		visitSchema(s.Items)
		visitSchema(s.AdditionalProperties.Schema)
		for _, list := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf, s.AllOf} {
			for _, r := range list {
				visitSchema(r)
			}
		}
	}
	visitContent := func(c openapi3.Content) {
		for _, mt := range c {
			visitSchema(mt.Schema)
		}
	}
	for _, s := range schemas {
		visitSchema(s)
	}
	for _, r := range responses {
		visitContent(r.Value.Content)
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.RequestBody != nil {
				visitContent(op.RequestBody.Value.Content)
			}
			for _, r := range op.Responses.Map() {
				if r.Ref != "" && r.Value == nil {
					r.Value = responses[strings.TrimPrefix(r.Ref, "#/components/responses/")].Value
				}
				visitContent(r.Value.Content)
			}
		}
	}
}

func errorSchema() *openapi3.Schema {
	s := openapi3.NewObjectSchema().
		WithProperty("detail", openapi3.NewStringSchema()).
		WithRequired([]string{"detail"})
	s.Description = "Body of every error response."
	s.Properties["detail"].Value.Description = "What went wrong."
	return s
}

func healthSchema() *openapi3.Schema {
	s := openapi3.NewObjectSchema().
		WithProperty("status", openapi3.NewStringSchema().WithEnum("healthy")).
		WithProperty("model", openapi3.NewStringSchema()).
		WithRequired([]string{"status", "model"})
	s.Properties["status"].Value.Description = "`healthy` whenever the server responds."
	s.Properties["model"].Value.Description = "Name of the loaded model."
	return s
}

func modelInfoSchema() *openapi3.Schema {
	metadata := openapi3.NewObjectSchema().WithAdditionalProperties(openapi3.NewStringSchema())
	metadata.Description = "Free-form custom fields; may be empty."
	s := openapi3.NewObjectSchema().
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("version", openapi3.NewStringSchema()).
		WithProperty("format", openapi3.NewStringSchema()).
		WithProperty("size_mb", openapi3.NewFloat64Schema().WithFormat("double")).
		WithProperty("path", openapi3.NewStringSchema()).
		WithPropertyRef("inputs", &openapi3.SchemaRef{Value: &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeArray}, Items: schemaRef(SchemaInputSpec)}}).
		WithPropertyRef("outputs", &openapi3.SchemaRef{Value: &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeArray}, Items: schemaRef(SchemaOutputSpec)}}).
		WithProperty("metadata", metadata).
		WithRequired([]string{"name", "version", "format", "size_mb", "inputs", "outputs", "metadata"})
	s.Properties["name"].Value.Description = "Model name."
	s.Properties["version"].Value.Description = "Model version."
	s.Properties["format"].Value.Description = "Model format, for example `onnx`."
	s.Properties["size_mb"].Value.Description = "Model size in megabytes."
	s.Properties["path"].Value.Description = "Path to the model file; may be absent."
	s.Properties["inputs"].Value.Description = "One entry per model input."
	s.Properties["outputs"].Value.Description = "One entry per model output."
	return s
}

func shapeArraySchema(description string) *openapi3.Schema {
	s := openapi3.NewArraySchema().WithItems(openapi3.NewInt64Schema())
	s.Description = description
	return s
}

func inputSpecSchema() *openapi3.Schema {
	s := openapi3.NewObjectSchema().
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("type", openapi3.NewStringSchema()).
		WithProperty("shape", shapeArraySchema("Tensor shape; -1 is a dynamic dimension. Absent for non-tensor inputs.")).
		WithProperty("required", openapi3.NewBoolSchema()).
		WithProperty("description", openapi3.NewStringSchema()).
		WithProperty("image", imageInfoSchema()).
		WithRequired([]string{"name", "type", "required"})
	s.Properties["name"].Value.Description = "Input name; the key of this input in the /predict body."
	s.Properties["type"].Value.Description = "Data type, such as `float32`, `int64`, `string`."
	s.Properties["required"].Value.Description = "Whether the input must be supplied."
	return s
}

func outputSpecSchema() *openapi3.Schema {
	s := openapi3.NewObjectSchema().
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("type", openapi3.NewStringSchema()).
		WithProperty("shape", shapeArraySchema("Tensor shape; -1 is a dynamic dimension. Absent for non-tensor outputs.")).
		WithProperty("labels", openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema())).
		WithProperty("description", openapi3.NewStringSchema()).
		WithProperty("decode", decodeInfoSchema()).
		WithRequired([]string{"name", "type"})
	s.Properties["name"].Value.Description = "Output name; the key of this output in the /predict response."
	s.Properties["type"].Value.Description = "Data type."
	s.Properties["labels"].Value.Description = "Class labels, if known."
	return s
}

func providerInfoSchema() *openapi3.Schema {
	s := openapi3.NewObjectSchema().
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("available", openapi3.NewBoolSchema()).
		WithProperty("platform", openapi3.NewStringSchema()).
		WithProperty("description", openapi3.NewStringSchema()).
		WithRequired([]string{"name", "available", "platform"})
	s.Description = "The execution provider in use."
	s.Properties["name"].Value.Description = "Provider identifier, ending in ExecutionProvider."
	return s
}

func metricsSchema() *openapi3.Schema {
	s := openapi3.NewObjectSchema().
		WithPropertyRef("provider", schemaRef(SchemaProviderInfo)).
		WithProperty("available_providers", openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema())).
		WithProperty("compiled_providers", openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema())).
		WithProperty("runtime_providers", openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema())).
		WithRequired([]string{"provider", "available_providers"})
	s.Properties["available_providers"].Value.Description = "Provider identifiers available on the host: " +
		"the providers compiled into this server that can run here now (libraries, driver and device present), " +
		"highest priority first, as 'svc providers' reports them usable."
	s.Properties["compiled_providers"].Value.Description = "Provider identifiers compiled into this server (--provider values)."
	s.Properties["runtime_providers"].Value.Description = "The execution providers the ONNX Runtime library was built with " +
		"(its GetAvailableProviders), whether or not they can run on this host."
	return s
}
