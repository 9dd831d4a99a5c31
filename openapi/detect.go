package openapi

import (
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/transport/rest"
)

// What the document says of detection outputs (detect, segment, pose):
// the answer's schema, the request settings in /predict's query and in
// the Open Inference Protocol's parameters, and the picture drawn.

// detectionParams describes each request setting of detection outputs.
var detectionParams = []struct {
	name, doc string
	schema    func() *openapi3.Schema
}{
	{codec.ParamConfidence, "The least score a box is kept with (kept when strictly greater), from 0 to 1; default: svc.yml's, else 0.25.", func() *openapi3.Schema {
		return openapi3.NewFloat64Schema().WithMin(0).WithMax(1)
	}},
	{codec.ParamIoU, "The overlap (IoU) above which suppression drops the lesser box, from 0 to 1; default: svc.yml's, else 0.7.", func() *openapi3.Schema {
		return openapi3.NewFloat64Schema().WithMin(0).WithMax(1)
	}},
	{codec.ParamMaxDet, "The most boxes per picture, from 1 to 30000; default: svc.yml's, else 300.", func() *openapi3.Schema {
		return openapi3.NewIntegerSchema().WithMin(1).WithMax(30000)
	}},
	{codec.ParamClasses, "Only boxes of these classes: their indices separated by commas (`0,2`); empty for every class.", openapi3.NewStringSchema},
	{codec.ParamRLE, "Also answer each mask (segment) as COCO run-length encoding on the picture's pixels.", openapi3.NewBoolSchema},
}

// detectionParameters are /predict's query parameters of a model with
// detection outputs, those its runner takes (ModelInfo.Parameters: a
// pipeline's), and draw for a model that can be drawn.
func (b builder) detectionParameters() openapi3.Parameters {
	var ps openapi3.Parameters
	if b.media.HasDetection() {
		for _, p := range detectionParams {
			q := openapi3.NewQueryParameter(p.name).WithDescription(p.doc).WithSchema(p.schema())
			ps = append(ps, &openapi3.ParameterRef{Value: q})
		}
	}
	for _, p := range b.info.Parameters {
		sch := openapi3.NewBoolSchema()
		if p.Type == "number" {
			sch = openapi3.NewFloat64Schema().WithMin(p.Min).WithMax(p.Max)
			if p.MinExclusive {
				sch = sch.WithExclusiveMin(true)
			}
		}
		ps = append(ps, &openapi3.ParameterRef{Value: openapi3.NewQueryParameter(p.Name).WithDescription(p.Doc).WithSchema(sch)})
	}
	if b.drawable() {
		what := "what the decoded outputs say drawn on it: boxes, labels, scores, masks and keypoints, classes and text as a caption"
		if b.media.PicturesInput() >= 0 {
			what = "what the model answers of it drawn on it (a page's lines: each box outlined, its text above it)"
		}
		q := openapi3.NewQueryParameter(rest.ParamDraw).
			WithDescription("Answer the picture with " + what + "; in the format of the picture sent (JPEG for a JPEG, PNG for any other) unless the Accept header names image/png or image/jpeg. `Accept: image/png` or `image/jpeg` asks for it too. One picture per request.").
			WithSchema(openapi3.NewBoolSchema())
		q.Schema.Value.Default = false
		ps = append(ps, &openapi3.ParameterRef{Value: q})
	}
	return ps
}

// drawable reports whether /predict can answer a drawing: a model with
// one image input and decoded outputs, or a pipeline that draws its
// answers (codec.Set.Drawable).
func (b builder) drawable() bool { return b.media.Drawable() }

// addDrawingContent adds to /predict's 200 the pictures a drawing answers.
func (b builder) addDrawingContent(r *openapi3.Response) {
	if !b.drawable() {
		return
	}
	what := "what the decoded outputs say"
	if b.media.PicturesInput() >= 0 {
		what = "what the model answers of it"
	}
	for _, mt := range []string{codec.DrawPNG, codec.DrawJPEG} {
		s := openapi3.NewStringSchema().WithFormat("binary")
		s.Description = "With ?draw=true or this Accept header: the picture sent, as shown (EXIF orientation applied), with " + what + " drawn on it."
		r.Content[mt] = openapi3.NewMediaType().WithSchema(s)
	}
}

// detectionsSchema is one picture's detections in the /predict answer.
func detectionsSchema(o *codec.Output) *openapi3.Schema {
	num := func(d string) *openapi3.Schema {
		s := openapi3.NewFloat64Schema()
		s.Nullable = true
		s.Description = d
		return s
	}
	box := openapi3.NewObjectSchema().
		WithProperty("x1", num("Left, in the picture's pixels.")).
		WithProperty("y1", num("Top.")).
		WithProperty("x2", num("Right.")).
		WithProperty("y2", num("Bottom.")).
		WithRequired([]string{"x1", "y1", "x2", "y2"})
	box.Description = "The box's corners in the pixels of the picture sent (after its EXIF orientation), the letterbox undone, clipped to the picture."
	det := openapi3.NewObjectSchema().
		WithProperty("label", openapi3.NewStringSchema()).
		WithProperty("index", openapi3.NewIntegerSchema().WithMin(0)).
		WithPropertyRef("score", openapi3.NewSchemaRef("", scoreSchema())).
		WithProperty("box", box).
		WithRequired([]string{"label", "index", "score", "box"})
	det.Properties["label"].Value.Description = "The class label (its index when it has none)."
	det.Properties["index"].Value.Description = "The class index."
	switch o.Kind {
	case codec.KindSegment:
		point := openapi3.NewArraySchema().WithItems(openapi3.NewFloat64Schema()).WithMinItems(2).WithMaxItems(2)
		poly := openapi3.NewArraySchema().WithItems(point)
		poly.Description = "The outer contour of the mask, [x, y] points in the picture's pixels."
		rle := openapi3.NewObjectSchema().
			WithProperty("size", openapi3.NewArraySchema().WithItems(openapi3.NewIntegerSchema()).WithMinItems(2).WithMaxItems(2)).
			WithProperty("counts", openapi3.NewStringSchema()).
			WithRequired([]string{"size", "counts"})
		rle.Description = "With ?rle=true: the mask on the picture's pixels as COCO run-length encoding: size [height, width], counts compressed as pycocotools writes them."
		det = det.WithProperty("polygon", poly).WithProperty("mask", rle)
		det.Required = append(det.Required, "polygon")
	case codec.KindPose:
		kp := openapi3.NewObjectSchema().
			WithProperty("x", num("In the picture's pixels.")).
			WithProperty("y", num("In the picture's pixels.")).
			WithProperty("score", num("The keypoint's score, when the model gives one.")).
			WithRequired([]string{"x", "y"})
		kps := openapi3.NewArraySchema().WithItems(kp)
		kps.Description = "The keypoints, in the model's order."
		det = det.WithProperty("keypoints", kps)
		det.Required = append(det.Required, "keypoints")
	}
	list := openapi3.NewArraySchema().WithItems(det)
	list.Description = "One picture's detections, best first."
	return list
}

// detectionNote is the v2 descriptions' note on a detection output.
func detectionNote(o *codec.Output) string {
	return fmt.Sprintf(" Output `%s` answers BYTES of shape [-1]: per picture, its %s detections as a JSON list, as /predict answers them; the parameters confidence, iou, max_det, classes and rle set them for the request.", o.Name, o.Kind)
}
