package openapi

import (
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/oip"
)

// Names of the Open Inference Protocol v2 component schemas and responses.
const (
	SchemaV2Error          = "V2Error"
	SchemaV2ServerMetadata = "V2ServerMetadata"
	SchemaV2ModelMetadata  = "V2ModelMetadata"
	SchemaV2TensorMetadata = "V2TensorMetadata"
	SchemaV2InferRequest   = "V2InferRequest"
	SchemaV2InferResponse  = "V2InferResponse"

	responseV2BadRequest = "V2BadRequest"
	responseV2NotFound   = "V2NotFound"
	responseV2NotReady   = "V2NotReady"
	responseV2TooLarge   = "V2PayloadTooLarge"
	responseV2Media      = "V2UnsupportedMediaType"
	responseV2Failed     = "V2InferenceFailed"
	responseV2Timeout    = "V2InferenceTimeout"

	tagV2 = "open inference protocol v2"
)

// addV2 adds the Open Inference Protocol v2 endpoints (transport/oip) to
// the document, with their own schemas and {"error"} responses; the v1
// parts are left as they are.
func (b builder) addV2(doc *openapi3.T) {
	doc.Tags = append(doc.Tags, &openapi3.Tag{Name: tagV2,
		Description: "KServe/Triton-compatible REST API, with Triton's binary tensor data extension. Errors are `{\"error\": \"...\"}`."})
	c := doc.Components
	c.Schemas[SchemaV2Error] = openapi3.NewSchemaRef("", v2ErrorSchema())
	c.Schemas[SchemaV2ServerMetadata] = openapi3.NewSchemaRef("", openapi3.NewObjectSchema().
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("version", openapi3.NewStringSchema()).
		WithProperty("extensions", openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema())).
		WithRequired([]string{"name", "version", "extensions"}))
	c.Schemas[SchemaV2TensorMetadata] = openapi3.NewSchemaRef("", v2TensorMetadataSchema())
	c.Schemas[SchemaV2ModelMetadata] = openapi3.NewSchemaRef("", openapi3.NewObjectSchema().
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("versions", openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema())).
		WithProperty("platform", openapi3.NewStringSchema()).
		WithPropertyRef("inputs", &openapi3.SchemaRef{Value: &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeArray}, Items: schemaRef(SchemaV2TensorMetadata)}}).
		WithPropertyRef("outputs", &openapi3.SchemaRef{Value: &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeArray}, Items: schemaRef(SchemaV2TensorMetadata)}}).
		WithRequired([]string{"name", "platform", "inputs", "outputs"}))
	c.Schemas[SchemaV2InferRequest] = openapi3.NewSchemaRef("", b.v2InferRequestSchema())
	c.Schemas[SchemaV2InferResponse] = openapi3.NewSchemaRef("", v2InferResponseSchema())
	for name, r := range map[string][2]string{
		responseV2BadRequest: {"Invalid request: malformed JSON, an unknown, duplicate or missing input, a datatype or shape that does not fit the model, data that does not fill the shape, binary sizes that do not add up.", "Missing required input: 'input'"},
		responseV2NotFound:   {"Another model name, or a version other than the model's.", "Unknown model 'resnet'; this server serves '" + b.info.Name + "'"},
		responseV2NotReady:   {"The model is loading, warming up or draining.", "Model '" + b.info.Name + "' is loading; try again shortly"},
		responseV2TooLarge:   {"The request body is larger than the server accepts (limits.max_body_size).", "Request body too large: the limit is 16 MiB"},
		responseV2Media:      {"A Content-Type other than JSON or application/octet-stream.", "Unsupported Content-Type 'text/plain': send application/json, or application/octet-stream with the Inference-Header-Content-Length header"},
		responseV2Failed:     {"Model execution failed.", "Inference failed: <reason>"},
		responseV2Timeout:    {"Model execution took longer than the configured timeout.", "Inference timed out after 30s"},
	} {
		mt := openapi3.NewMediaType().WithSchemaRef(schemaRef(SchemaV2Error))
		mt.Example = map[string]any{"error": r[1]}
		c.Responses[name] = &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription(r[0]).
			WithContent(openapi3.Content{"application/json": mt})}
	}

	name := &openapi3.ParameterRef{Value: openapi3.NewPathParameter("model_name").
		WithDescription("The model's name.").WithSchema(openapi3.NewStringSchema().WithEnum(b.info.Name))}
	version := &openapi3.ParameterRef{Value: openapi3.NewPathParameter("model_version").
		WithDescription("The model's version.").WithSchema(openapi3.NewStringSchema().WithEnum(orDefault(b.info.Version, "1")))}
	model := openapi3.Parameters{name}
	versioned := openapi3.Parameters{name, version}

	doc.Paths.Set(oip.PathServer, &openapi3.PathItem{Get: v2Get("v2ServerMetadata", "Server metadata (v2)",
		"The server's name, version and protocol extensions.", SchemaV2ServerMetadata, nil)})
	doc.Paths.Set(oip.PathLive, &openapi3.PathItem{Get: v2Get("v2ServerLive", "Server liveness (v2)",
		"200 as soon as the process serves.", "", map[string]any{"live": true})})
	ready := v2Get("v2ServerReady", "Server readiness (v2)",
		"200 once the model is loaded and warmed up; 503 while loading and while draining.", "", map[string]any{"ready": true})
	ready.Responses.Set("503", responseRef(responseV2NotReady))
	doc.Paths.Set(oip.PathReady, &openapi3.PathItem{Get: ready})
	for _, p := range []struct {
		suffix string
		params openapi3.Parameters
		id     string
	}{{"", model, ""}, {"/versions/{model_version}", versioned, "Version"}} {
		base := "/v2/models/{model_name}" + p.suffix
		meta := v2Get("v2ModelMetadata"+p.id, "Model metadata (v2)", "The model's inputs and outputs (tensors only) with their datatypes and shapes; -1 is a dynamic dimension."+b.v2MediaNote(), SchemaV2ModelMetadata, b.v2MetadataExample())
		meta.Responses.Set("404", responseRef(responseV2NotFound))
		meta.Responses.Set("503", responseRef(responseV2NotReady))
		doc.Paths.Set(base, &openapi3.PathItem{Get: meta, Parameters: p.params})
		mready := v2Get("v2ModelReady"+p.id, "Model readiness (v2)", "200 when the model takes inferences, else 503.", "", map[string]any{"name": b.info.Name, "ready": true})
		mready.Responses.Set("404", responseRef(responseV2NotFound))
		mready.Responses.Set("503", responseRef(responseV2NotReady))
		doc.Paths.Set(base+"/ready", &openapi3.PathItem{Get: mready, Parameters: p.params})
		doc.Paths.Set(base+"/infer", &openapi3.PathItem{Post: b.v2InferOperation("v2Infer" + p.id), Parameters: p.params})
	}
}

func v2ErrorSchema() *openapi3.Schema {
	s := openapi3.NewObjectSchema().WithProperty("error", openapi3.NewStringSchema()).WithRequired([]string{"error"})
	s.Description = "Body of every v2 error response."
	return s
}

func v2TensorMetadataSchema() *openapi3.Schema {
	return openapi3.NewObjectSchema().
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("datatype", v2DatatypeSchema()).
		WithProperty("shape", openapi3.NewArraySchema().WithItems(openapi3.NewInt64Schema())).
		WithRequired([]string{"name", "datatype", "shape"})
}

func v2DatatypeSchema() *openapi3.Schema {
	var names []any
	for _, d := range []tensor.DType{tensor.Bool, tensor.Uint8, tensor.Uint16, tensor.Uint32, tensor.Uint64, tensor.Int8, tensor.Int16, tensor.Int32,
		tensor.Int64, tensor.Float16, tensor.BFloat16, tensor.Float32, tensor.Float64, tensor.String} {
		names = append(names, oip.Datatype(d))
	}
	return openapi3.NewStringSchema().WithEnum(names...)
}

// v2Get is a GET answering 200 with a JSON schema (or an example only).
func v2Get(id, summary, description, schema string, example any) *openapi3.Operation {
	op := openapi3.NewOperation()
	op.OperationID = id
	op.Tags = []string{tagV2}
	op.Summary = summary
	op.Description = description
	var mt *openapi3.MediaType
	if schema != "" {
		mt = openapi3.NewMediaType().WithSchemaRef(schemaRef(schema))
	} else {
		mt = openapi3.NewMediaType().WithSchema(openapi3.NewObjectSchema())
	}
	if example != nil {
		mt.Example = example
	}
	op.Responses = openapi3.NewResponses(openapi3.WithStatus(http.StatusOK, &openapi3.ResponseRef{Value: openapi3.NewResponse().
		WithDescription(summary + ".").WithContent(openapi3.Content{"application/json": mt})}))
	return op
}

func (b builder) v2InferRequestSchema() *openapi3.Schema {
	var inputNames []any
	for _, in := range b.info.Inputs {
		inputNames = append(inputNames, in.Name)
	}
	params := openapi3.NewObjectSchema()
	params.AdditionalProperties = openapi3.AdditionalProperties{Has: openapi3.Ptr(true)}
	input := openapi3.NewObjectSchema().
		WithProperty("name", openapi3.NewStringSchema().WithEnum(inputNames...)).
		WithProperty("shape", openapi3.NewArraySchema().WithItems(openapi3.NewInt64Schema().WithMin(0))).
		WithProperty("datatype", v2DatatypeSchema()).
		WithProperty("parameters", params).
		WithProperty("data", openapi3.NewArraySchema().WithItems(openapi3.NewSchema())).
		WithRequired([]string{"name", "shape", "datatype"})
	input.Properties["data"].Value.Description = "The elements, flat in row-major order or nested as shape. Absent when parameters.binary_data_size gives the size of the tensor's binary data after the JSON."
	output := openapi3.NewObjectSchema().
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("parameters", params).
		WithRequired([]string{"name"})
	output.Properties["parameters"].Value.Description = "`binary_data: true` returns the output as binary data."
	top := params
	if len(b.media.Outputs()) > 0 {
		top = openapi3.NewObjectSchema().WithProperty(oip.ParamRaw, openapi3.NewBoolSchema())
		top.AdditionalProperties = openapi3.AdditionalProperties{Has: openapi3.Ptr(true)}
		top.Properties[oip.ParamRaw].Value.Description = "`true` answers the model's tensors instead of the decoded outputs (classify, ctc, detect, segment, pose)."
	}
	if b.media.HasDetection() {
		for _, p := range detectionParams {
			sc := p.schema()
			sc.Description = p.doc
			if p.name == codec.ParamClasses {
				sc = openapi3.NewOneOfSchema(openapi3.NewStringSchema(), openapi3.NewArraySchema().WithItems(openapi3.NewIntegerSchema().WithMin(0)))
				sc.Description = p.doc + " In JSON, a list of indices too."
			}
			top = top.WithProperty(p.name, sc)
		}
	}
	s := openapi3.NewObjectSchema().
		WithProperty("id", openapi3.NewStringSchema()).
		WithProperty("parameters", top).
		WithProperty("inputs", openapi3.NewArraySchema().WithItems(input)).
		WithProperty("outputs", openapi3.NewArraySchema().WithItems(output)).
		WithRequired([]string{"inputs"})
	s.Properties["parameters"].Value.Description = "Returned as sent in the response; `binary_data_output: true` returns every output as binary data."
	return s
}

func v2InferResponseSchema() *openapi3.Schema {
	params := openapi3.NewObjectSchema()
	params.AdditionalProperties = openapi3.AdditionalProperties{Has: openapi3.Ptr(true)}
	output := openapi3.NewObjectSchema().
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("datatype", v2DatatypeSchema()).
		WithProperty("shape", openapi3.NewArraySchema().WithItems(openapi3.NewInt64Schema())).
		WithProperty("parameters", params).
		WithProperty("data", openapi3.NewArraySchema().WithItems(openapi3.NewSchema())).
		WithRequired([]string{"name", "datatype", "shape"})
	return openapi3.NewObjectSchema().
		WithProperty("model_name", openapi3.NewStringSchema()).
		WithProperty("model_version", openapi3.NewStringSchema()).
		WithProperty("id", openapi3.NewStringSchema()).
		WithProperty("parameters", params).
		WithProperty("outputs", openapi3.NewArraySchema().WithItems(output)).
		WithRequired([]string{"model_name", "outputs"})
}

func (b builder) v2InferOperation(id string) *openapi3.Operation {
	op := openapi3.NewOperation()
	op.OperationID = id
	op.Tags = []string{tagV2}
	op.Summary = "Run inference (v2)"
	op.Description = "Open Inference Protocol inference. With the `" + oip.HeaderInferenceHeaderLength + "` header, the body is " +
		"that many bytes of JSON followed by the binary data of the inputs that have `parameters.binary_data_size`, in their order " +
		"(little-endian, row-major; BYTES elements as a 4-byte length and the bytes), sent as `application/octet-stream`; " +
		"binary outputs come back the same way." + b.v2MediaNote()
	mt := openapi3.NewMediaType().WithSchemaRef(schemaRef(SchemaV2InferRequest))
	if ex := b.v2Example(); ex != nil {
		mt.Example = ex
	}
	bin := openapi3.NewMediaType().WithSchema(openapi3.NewStringSchema().WithFormat("binary"))
	op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).
		WithContent(openapi3.Content{"application/json": mt, "application/octet-stream": bin})}
	op.Responses = openapi3.NewResponses(
		openapi3.WithStatus(http.StatusOK, &openapi3.ResponseRef{Value: openapi3.NewResponse().
			WithDescription("The requested outputs (all tensor outputs by default).").
			WithContent(openapi3.Content{"application/json": openapi3.NewMediaType().WithSchemaRef(schemaRef(SchemaV2InferResponse)),
				"application/octet-stream": openapi3.NewMediaType().WithSchema(openapi3.NewStringSchema().WithFormat("binary"))})}),
		openapi3.WithStatus(http.StatusBadRequest, responseRef(responseV2BadRequest)),
		openapi3.WithStatus(http.StatusNotFound, responseRef(responseV2NotFound)),
		openapi3.WithStatus(http.StatusRequestEntityTooLarge, responseRef(responseV2TooLarge)),
		openapi3.WithStatus(http.StatusUnsupportedMediaType, responseRef(responseV2Media)),
		openapi3.WithStatus(http.StatusInternalServerError, responseRef(responseV2Failed)),
		openapi3.WithStatus(http.StatusServiceUnavailable, responseRef(responseV2NotReady)),
		openapi3.WithStatus(http.StatusGatewayTimeout, responseRef(responseV2Timeout)),
	)
	return op
}

// v2Example is the /predict example as a v2 request: each required input
// flat, with its shape and datatype.
func (b builder) v2Example() map[string]any {
	body := b.exampleBody()
	if body == nil {
		return nil
	}
	var inputs []any
	for _, in := range b.info.Inputs {
		v, ok := body[in.Name]
		if !ok {
			continue
		}
		if b.imageOf(in.Name) != nil {
			// An image input: BYTES [N], one encoded picture per element.
			inputs = append(inputs, map[string]any{"name": in.Name, "shape": []int64{1}, "datatype": "BYTES", "data": []any{v}})
			continue
		}
		dt, _ := tensor.ParseDType(in.Type)
		shape := make([]int64, len(in.Shape))
		for i, d := range in.Shape {
			if d < 0 {
				d = 1 // a dynamic dimension: one item, as the /predict example
			}
			shape[i] = d
		}
		inputs = append(inputs, map[string]any{"name": in.Name, "shape": shape, "datatype": oip.Datatype(dt), "data": flatten(v)})
	}
	return map[string]any{"inputs": inputs}
}

// flatten lists the leaves of nested []any in order.
func flatten(v any) []any {
	a, ok := v.([]any)
	if !ok {
		return []any{v}
	}
	out := []any{}
	for _, e := range a {
		out = append(out, flatten(e)...)
	}
	return out
}
