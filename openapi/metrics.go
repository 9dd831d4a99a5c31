package openapi

import (
	"github.com/getkin/kin-openapi/openapi3"
)

// Names of the statistics schemas (transport/metrics).
const (
	SchemaV2Stats          = "V2Stats"
	SchemaV2ModelStats     = "V2ModelStats"
	SchemaV2StatsDuration  = "V2StatsDuration"
	mediaPrometheusText    = "text/plain"
	mediaOpenMetricsText   = "application/openmetrics-text"
	metricsNegotiationNote = "\n\nWith an `Accept` header that prefers a Prometheus exposition format (`application/openmetrics-text`, " +
		"`text/plain`, as Prometheus sends when it scrapes) the answer is the Prometheus exposition instead: " +
		"OpenMetrics 1.0.0 or the text format 0.0.4, whichever the header prefers. " +
		"Without an `Accept` header, with `*/*`, `application/json` or anything else, it is the JSON record. " +
		"The answer carries `Vary: Accept`. Under `--workers N` the exposition holds every worker's series, each labelled `worker`."
)

// addMetrics documents the two representations of GET /metrics and the
// Triton-style statistics of GET /v2/models/{model_name}/stats
// (transport/metrics).
func (b builder) addMetrics(doc *openapi3.T) {
	if item := doc.Paths.Value(PathMetrics); item != nil && item.Get != nil {
		op := item.Get
		op.Description += metricsNegotiationNote
		ok := op.Responses.Value("200").Value
		ok.WithDescription("The JSON metrics record, or the Prometheus exposition (by `Accept`).")
		for media, example := range map[string]string{
			mediaOpenMetricsText: "# HELP svc_inference_requests Inference requests answered, by status (success or failure).\n" +
				"# TYPE svc_inference_requests counter\n" +
				`svc_inference_requests_total{model="` + b.info.Name + `",status="success",version="` + b.info.Version + "\"} 16.0\n# EOF\n",
			mediaPrometheusText: "# HELP svc_inference_requests_total Inference requests answered, by status (success or failure).\n" +
				"# TYPE svc_inference_requests_total counter\n" +
				`svc_inference_requests_total{model="` + b.info.Name + `",status="success",version="` + b.info.Version + "\"} 16\n",
		} {
			mt := openapi3.NewMediaType().WithSchema(openapi3.NewStringSchema())
			mt.Example = example
			ok.Content[media] = mt
		}
	}

	c := doc.Components
	duration := openapi3.NewObjectSchema().
		WithProperty("count", openapi3.NewInt64Schema().WithMin(0)).
		WithProperty("ns", openapi3.NewInt64Schema().WithMin(0)).
		WithRequired([]string{"count", "ns"})
	duration.Description = "A count and a cumulative duration in nanoseconds."
	c.Schemas[SchemaV2StatsDuration] = openapi3.NewSchemaRef("", duration)
	inferenceStats := openapi3.NewObjectSchema()
	for _, name := range []string{"success", "fail", "queue", "compute_infer"} {
		inferenceStats.WithPropertyRef(name, schemaRef(SchemaV2StatsDuration))
	}
	inferenceStats.Required = []string{"success", "fail", "queue", "compute_infer"}
	inferenceStats.Description = "`success` and `fail`: requests and their whole duration; `queue`: requests that reached the model and their wait for a session; " +
		"`compute_infer`: model executions and their time."
	modelStats := openapi3.NewObjectSchema().
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("version", openapi3.NewStringSchema()).
		WithProperty("last_inference", openapi3.NewInt64Schema().WithMin(0)).
		WithProperty("inference_count", openapi3.NewInt64Schema().WithMin(0)).
		WithProperty("execution_count", openapi3.NewInt64Schema().WithMin(0)).
		WithProperty("inference_stats", inferenceStats).
		WithRequired([]string{"name", "version", "last_inference", "inference_count", "execution_count", "inference_stats"})
	modelStats.Properties["last_inference"].Value.Description = "When the last request ended, in milliseconds since the epoch (0: none yet)."
	modelStats.Properties["inference_count"].Value.Description = "Inferences (rows of the batch dimension) run by successful executions."
	modelStats.Properties["execution_count"].Value.Description = "Successful model executions."
	c.Schemas[SchemaV2ModelStats] = openapi3.NewSchemaRef("", modelStats)
	c.Schemas[SchemaV2Stats] = openapi3.NewSchemaRef("", openapi3.NewObjectSchema().
		WithPropertyRef("model_stats", &openapi3.SchemaRef{Value: &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeArray}, Items: schemaRef(SchemaV2ModelStats)}}).
		WithRequired([]string{"model_stats"}))

	zero := map[string]any{"count": 0, "ns": 0}
	example := map[string]any{"model_stats": []any{map[string]any{
		"name": b.info.Name, "version": orDefault(b.info.Version, "1"), "last_inference": 0, "inference_count": 0, "execution_count": 0,
		"inference_stats": map[string]any{"success": zero, "fail": zero, "queue": zero, "compute_infer": zero},
	}}}
	name := &openapi3.ParameterRef{Value: openapi3.NewPathParameter("model_name").
		WithDescription("The model's name.").WithSchema(openapi3.NewStringSchema().WithEnum(b.info.Name))}
	version := &openapi3.ParameterRef{Value: openapi3.NewPathParameter("model_version").
		WithDescription("The model's version.").WithSchema(openapi3.NewStringSchema().WithEnum(orDefault(b.info.Version, "1")))}
	for _, p := range []struct {
		suffix string
		params openapi3.Parameters
		id     string
	}{{"", openapi3.Parameters{name}, ""}, {"/versions/{model_version}", openapi3.Parameters{name, version}, "Version"}} {
		op := v2Get("v2ModelStatistics"+p.id, "Model statistics (v2)",
			"Triton-style statistics of the model since the server started: request counts and cumulative durations. "+
				"Under `--workers N`, the sums over the workers that answered within a second.", SchemaV2Stats, example)
		op.Responses.Set("404", responseRef(responseV2NotFound))
		doc.Paths.Set("/v2/models/{model_name}"+p.suffix+"/stats", &openapi3.PathItem{Get: op, Parameters: p.params})
	}
}
