package openapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	picture "github.com/svc-dev/svc/core/codec/image"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/oip"
	"github.com/svc-dev/svc/transport/rest"
)

// What the document says of image inputs and decoded outputs (svc.yml's
// models.NAME.inputs and .outputs, resolved by core/codec).
//
// A picture in a JSON body is a plain string schema, with no format: the
// server takes base64 (padded or not, standard or URL-safe, with line
// breaks) and data: URLs, and OpenAPI's "byte" format admits neither a
// data: URL nor a line break (kin-openapi checks it with a regular
// expression over the whole string, so a validator holding the document
// would refuse valid requests, at a cost linear in a string of megabytes).
// The Validator never sees the string anyway: it checks JSON kinds on a
// stand-in (README.md).

// extImage marks an image input's property in the PredictRequest schema;
// its value is the input's preprocessing, as GET /info writes it.
const extImage = "x-svc-image"

// ParamRaw is the /predict query parameter that answers the model's
// tensors instead of the decoded outputs.
const ParamRaw = "raw"

// imageMediaTypes are the Content-Types of a /predict body that is one
// picture.
var imageMediaTypes = []string{"image/jpeg", "image/png", "image/webp", "image/gif", "image/bmp"}

// pictureWording names what a picture may be, for descriptions.
const pictureWording = "a JPEG, PNG, WebP, GIF or BMP picture"

// examplePicture is a valid 1×1 PNG as base64, the example value of an
// image input.
var examplePicture = func() string {
	img := image.NewNRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.NRGBA{R: 200, G: 120, B: 40, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err) // encoding a 1×1 picture in memory cannot fail
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}()

// imageOf returns the image input named name, or nil.
func (b builder) imageOf(name string) *codec.Image { return b.media.Image(name) }

// picturesOf reports whether input name takes pictures that its runner
// decodes itself (core.InputSpec.Pictures: a pipeline's page): described
// as an image input's, with no preprocessing of the server's.
func (b builder) picturesOf(name string) bool {
	k := b.media.PicturesInput()
	return k >= 0 && k < len(b.info.Inputs) && b.info.Inputs[k].Name == name
}

// takesPictures reports whether /predict takes pictures: image inputs,
// or an input whose runner decodes them.
func (b builder) takesPictures() bool {
	return len(b.media.Images()) > 0 || b.media.PicturesInput() >= 0
}

// picturesInputSchema describes an input whose runner decodes its
// pictures (a pipeline's) in the JSON body, as imageInputSchema does an
// image input's.
func picturesInputSchema(in core.InputSpec) *openapi3.Schema {
	s := pictureOrBatch()
	s.Description = joinSentences(fmt.Sprintf(
		"Pictures: %s as base64 or a data: URL, or a list of them for a batch; the model decodes and reads each picture whole.",
		pictureWording), in.Description)
	s.Extensions = map[string]any{extImage: map[string]any{"formats": toJSONValue(picture.Formats()), "decoded_by": "the model"}}
	return s
}

// pictureOrBatch is one picture or a list of them (a batch): told apart by
// their JSON kind, so oneOf holds.
func pictureOrBatch() *openapi3.Schema {
	batch := openapi3.NewArraySchema().WithItems(pictureSchema())
	batch.Title = "batch"
	batch.Description = "A list of pictures: a batch, one item each."
	return openapi3.NewOneOfSchema(pictureSchema(), batch)
}

// pictureSchema is one picture in a JSON body.
func pictureSchema() *openapi3.Schema {
	s := openapi3.NewStringSchema()
	s.Title = "picture"
	s.Description = "Base64 (or a data: URL such as `data:image/png;base64,...`) of " + pictureWording + "."
	return s
}

// imageInputSchema describes an image input in the JSON body: one
// picture, or a list of them (a batch). The two are told apart by their
// JSON kind, so oneOf holds.
func imageInputSchema(in core.InputSpec, im *codec.Image) *openapi3.Schema {
	s := pictureOrBatch()
	s.Description = joinSentences(fmt.Sprintf(
		"Image input: %s as base64 or a data: URL, or a list of them for a batch. "+
			"The server makes the model's %s tensor of shape %s from each picture (%s).",
		pictureWording, in.Type, tensor.FormatShape(in.Shape), im.Describe()), in.Description)
	s.Extensions = map[string]any{extImage: toJSONValue(rest.NewImageInfo(im))}
	return s
}

// infoExample is the GET /info body of the model, with what it says of
// image inputs and decoded outputs.
func (b builder) infoExample() rest.Info { return rest.NewMediaInfo(b.info, b.media) }

// multipartMediaType is /predict's multipart/form-data body: a field per
// input, a file for an image input (repeated for a batch), the JSON text
// of the value for the others.
func (b builder) multipartMediaType(example map[string]any) *openapi3.MediaType {
	s := openapi3.NewObjectSchema()
	s.Description = "One field per input: a file for an image input (repeat the field for a batch), the input's value as JSON text for the others."
	s.AdditionalProperties = openapi3.AdditionalProperties{Has: openapi3.Ptr(false)}
	s.Properties = make(openapi3.Schemas, len(b.info.Inputs))
	encoding := map[string]*openapi3.Encoding{}
	for _, in := range b.info.Inputs {
		p := openapi3.NewStringSchema()
		if im := b.imageOf(in.Name); im != nil {
			p.Format = "binary"
			p.Description = fmt.Sprintf("%s file; repeat the field for a batch. Preprocessing: %s.", upperFirst(pictureWording), im.Describe())
			encoding[in.Name] = &openapi3.Encoding{ContentType: strings.Join(imageMediaTypes, ", ")}
		} else if b.picturesOf(in.Name) {
			p.Format = "binary"
			p.Description = fmt.Sprintf("%s file; repeat the field for a batch.", upperFirst(pictureWording))
			encoding[in.Name] = &openapi3.Encoding{ContentType: strings.Join(imageMediaTypes, ", ")}
		} else {
			p.Description = "The input's value as JSON text, as in an application/json body."
			if v, ok := example[in.Name]; ok {
				if text, err := json.Marshal(v); err == nil {
					p.Example = string(text)
				}
			}
		}
		s.Properties[in.Name] = openapi3.NewSchemaRef("", p)
		if in.Required {
			s.Required = append(s.Required, in.Name)
		}
	}
	mt := openapi3.NewMediaType().WithSchema(s)
	mt.Encoding = encoding
	return mt
}

// pictureBodyInput returns the image input that a body of one picture
// feeds: the model's only image input, when no other input is required.
func (b builder) pictureBodyInput() *codec.Image {
	images := b.media.Images()
	if len(images) != 1 {
		return nil
	}
	for _, in := range b.info.Inputs {
		if in.Required && in.Name != images[0].Name {
			return nil
		}
	}
	return images[0]
}

// addMediaContent adds to /predict's request content the bodies a model
// with image inputs takes besides JSON.
func (b builder) addMediaContent(content openapi3.Content, example map[string]any) {
	if !b.takesPictures() {
		return
	}
	content["multipart/form-data"] = b.multipartMediaType(example)
	if k := b.media.PicturesInput(); k >= 0 && len(b.media.Images()) == 0 {
		for _, t := range imageMediaTypes {
			s := openapi3.NewStringSchema().WithFormat("binary")
			s.Description = fmt.Sprintf("The picture of input '%s' as the whole body, which the model decodes and reads whole.", b.info.Inputs[k].Name)
			content[t] = openapi3.NewMediaType().WithSchema(s)
		}
		return
	}
	im := b.pictureBodyInput()
	if im == nil {
		return
	}
	for _, t := range imageMediaTypes {
		s := openapi3.NewStringSchema().WithFormat("binary")
		s.Description = fmt.Sprintf("The picture of input '%s' as the whole body. Preprocessing: %s.", im.Name, im.Describe())
		content[t] = openapi3.NewMediaType().WithSchema(s)
	}
}

// rawParameter is /predict's raw query parameter, for a model with
// decoded outputs.
func rawParameter() *openapi3.ParameterRef {
	p := openapi3.NewQueryParameter(ParamRaw).
		WithDescription("Answer the model's tensors instead of the decoded outputs.").
		WithSchema(openapi3.NewBoolSchema())
	p.Schema.Value.Default = false
	return &openapi3.ParameterRef{Value: p}
}

// decodedOutputSchema describes a decoded output in the /predict answer:
// the decoded form, or with ?raw=true the model's tensor. anyOf: an empty
// batch fits both.
func decodedOutputSchema(out core.OutputSpec, o *codec.Output) *openapi3.Schema {
	var decoded *openapi3.Schema
	switch o.Kind {
	case codec.KindClassify:
		top := classesSchema(o.TopK(), "The class label (empty when the class has none).", "The class index.", "One item's top classes, best first.")
		decoded = openapi3.NewArraySchema().WithItems(top)
	case codec.KindDetect, codec.KindSegment, codec.KindPose:
		decoded = openapi3.NewArraySchema().WithItems(detectionsSchema(o))
	default:
		text := openapi3.NewObjectSchema().
			WithProperty("text", openapi3.NewStringSchema()).
			WithPropertyRef("score", openapi3.NewSchemaRef("", scoreSchema())).
			WithRequired([]string{"text", "score"})
		text.Properties["text"].Value.Description = "The decoded text."
		decoded = openapi3.NewArraySchema().WithItems(text)
	}
	decoded.Title = "decoded"
	decoded.Description = "One entry per batch item: " + o.Describe() + "."
	raw := outputSchema(out)
	raw.Title = "raw=true"
	s := openapi3.NewAnyOfSchema(decoded, raw)
	s.Description = fmt.Sprintf("Decoded output (%s): %s. With ?raw=true, the model's tensor instead: %s",
		o.Kind, o.Describe(), raw.Description)
	return s
}

// mediaDescription adds to /predict's description what a model with
// image inputs or decoded outputs takes and answers.
func (b builder) mediaDescription(sb *strings.Builder) {
	if len(b.media.Images()) > 0 {
		names := make([]string, 0, len(b.media.Images()))
		for _, im := range b.media.Images() {
			names = append(names, "`"+im.Name+"`")
		}
		fmt.Fprintf(sb, "\n\nImage inputs (%s) take %s: in a JSON body as base64 or a data: URL, or a list of them for a batch; "+
			"in a `multipart/form-data` body as a file field per input (repeated for a batch), the other inputs' fields holding their JSON value",
			strings.Join(names, ", "), pictureWording)
		if im := b.pictureBodyInput(); im != nil {
			fmt.Fprintf(sb, "; or as the whole body, with its `image/...` Content-Type, for input `%s`", im.Name)
		}
		sb.WriteString(". The server resizes and normalises each picture into the model's tensor.")
	}
	if k := b.media.PicturesInput(); k >= 0 {
		fmt.Fprintf(sb, "\n\nInput `%s` takes %s, which the model decodes and reads whole: in a JSON body as base64 or a data: URL, "+
			"or a list of them for a batch; in a `multipart/form-data` body as a file field (repeated for a batch); or as the whole body, "+
			"with its `image/...` Content-Type.", b.info.Inputs[k].Name, pictureWording)
	}
	if len(b.media.Outputs()) > 0 {
		names := make([]string, 0, len(b.media.Outputs()))
		for _, o := range b.media.Outputs() {
			names = append(names, fmt.Sprintf("`%s`: %s", o.Name, o.Kind))
		}
		fmt.Fprintf(sb, "\n\nDecoded outputs (%s) answer labels and scores, text or boxes; `?raw=true` answers the model's tensors instead.",
			strings.Join(names, ", "))
	}
	if b.media.HasDetection() {
		sb.WriteString(" The query's confidence, iou, max_det, classes and rle set the detections of this request.")
	}
	if b.drawable() {
		sb.WriteString(" `?draw=true` (or `Accept: image/png` or `image/jpeg`) answers the picture with what the outputs say drawn on it.")
	}
}

// v2MediaNote adds to the v2 descriptions how image inputs and decoded
// outputs travel.
func (b builder) v2MediaNote() string {
	var sb strings.Builder
	for _, im := range b.media.Images() {
		fmt.Fprintf(&sb, " Input `%s` is an image input: BYTES of shape [-1], one encoded picture (%s) per element; base64 or a data: URL in JSON, the file's bytes in binary data.",
			im.Name, pictureWording)
	}
	if k := b.media.PicturesInput(); k >= 0 {
		fmt.Fprintf(&sb, " Input `%s` takes pictures, which the model decodes and reads whole: BYTES of shape [-1], one encoded picture (%s) per element; base64 or a data: URL in JSON, the file's bytes in binary data.",
			b.info.Inputs[k].Name, pictureWording)
	}
	for _, o := range b.media.Outputs() {
		switch {
		case o.Kind == codec.KindClassify:
			fmt.Fprintf(&sb, " Output `%s` answers BYTES of shape [-1, %d], \"score:index:label\" strings, best first.", o.Name, o.TopK())
		case o.IsDetection():
			sb.WriteString(detectionNote(o))
		default:
			fmt.Fprintf(&sb, " Output `%s` answers BYTES of shape [-1], the decoded texts.", o.Name)
		}
	}
	if len(b.media.Outputs()) > 0 {
		sb.WriteString(" The request parameter `\"raw\": true` answers the model's tensors instead.")
	}
	return sb.String()
}

// v2MetadataExample is the v2 model metadata of a model with image inputs
// or decoded outputs (nil for another): image inputs as BYTES [-1],
// decoded outputs as BYTES. It is an any so that none is a nil any.
func (b builder) v2MetadataExample() any {
	if b.media.Empty() {
		return nil
	}
	tensorMeta := func(name, dtype string, shape []int64) map[string]any {
		if shape == nil {
			shape = []int64{-1}
		}
		out := make([]any, len(shape))
		for i, d := range shape {
			out[i] = max(d, -1)
		}
		return map[string]any{"name": name, "datatype": dtype, "shape": out}
	}
	inputs, outputs := []any{}, []any{}
	for _, in := range b.info.Inputs {
		switch {
		case b.imageOf(in.Name) != nil:
			inputs = append(inputs, tensorMeta(in.Name, "BYTES", []int64{-1}))
		case inputKind(in.Kind, in.Type) == core.KindTensor:
			inputs = append(inputs, tensorMeta(in.Name, v2Datatype(in.Type), in.Shape))
		}
	}
	for _, out := range b.info.Outputs {
		o := b.media.Output(out.Name)
		switch {
		case o != nil:
			outputs = append(outputs, tensorMeta(out.Name, "BYTES", o.Shape()))
		case inputKind(out.Kind, out.Type) == core.KindTensor:
			outputs = append(outputs, tensorMeta(out.Name, v2Datatype(out.Type), out.Shape))
		}
	}
	return map[string]any{"name": b.info.Name, "versions": []any{orDefault(b.info.Version, "1")},
		"platform": oip.Platform, "inputs": inputs, "outputs": outputs}
}

// v2Datatype is the protocol's name of an element type.
func v2Datatype(t string) string {
	dt, _ := tensor.ParseDType(t)
	return oip.Datatype(dt)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// unsupportedMediaResponse is /predict's 415, which a model with image
// inputs answers for fewer Content-Types.
func (b builder) unsupportedMediaResponse() *openapi3.ResponseRef {
	if !b.takesPictures() {
		return errorResponse("The request has no `Content-Type: application/json` header.",
			"Unsupported Content-Type 'text/plain': send the body as application/json")
	}
	return errorResponse("The request's Content-Type is none of application/json, multipart/form-data and "+strings.Join(imageMediaTypes, ", ")+".",
		"Unsupported Content-Type 'text/plain': send the body as application/json, multipart/form-data, or an image (image/jpeg, image/png, image/webp, image/gif, image/bmp)")
}

// imageInfoSchema is an image input's entry in GET /info (rest.ImageInfo).
func imageInfoSchema() *openapi3.Schema {
	str := func(d string) *openapi3.Schema {
		s := openapi3.NewStringSchema()
		s.Description = d
		return s
	}
	num := func(d string) *openapi3.Schema {
		s := openapi3.NewFloat64Schema()
		s.Description = d
		return s
	}
	list := func(items *openapi3.Schema, d string) *openapi3.Schema {
		s := openapi3.NewArraySchema().WithItems(items)
		s.Description = d
		return s
	}
	s := openapi3.NewObjectSchema().
		WithProperty("formats", list(openapi3.NewStringSchema(), "The picture formats the input takes.")).
		WithProperty("preset", str("The preset the settings start from, if any.")).
		WithProperty("size", list(openapi3.NewIntegerSchema(), "[height, width] of the tensor's picture; with resize height and a dynamic model width, the width is the narrowest batch width.")).
		WithProperty("resize", str("How the picture is fitted to the size: stretch, fit (letterbox), cover (centre crop) or height (keep the aspect, pad right).")).
		WithProperty("interpolation", str("Resampling filter: nearest, bilinear, bicubic or area.")).
		WithProperty("color", str("Channel order: rgb, bgr or grey.")).
		WithProperty("scale", num("Each pixel value (0–255) is multiplied by it, then (value - mean) / std.")).
		WithProperty("mean", list(openapi3.NewFloat64Schema(), "Per channel, or one value for all.")).
		WithProperty("std", list(openapi3.NewFloat64Schema(), "Per channel, or one value for all.")).
		WithProperty("layout", str("Tensor layout: nchw or nhwc.")).
		WithProperty("pad", num("Value of the padding of fit and height, in pixel units (0–255) before normalisation.")).
		WithProperty("width_multiple", openapi3.NewIntegerSchema()).
		WithProperty("max_width", openapi3.NewIntegerSchema()).
		WithRequired([]string{"formats", "resize", "interpolation", "color", "layout"})
	s.Properties["width_multiple"].Value.Description = "With resize height and a dynamic width: the batch width is rounded up to a multiple of it."
	s.Properties["max_width"].Value.Description = "With resize height: no item is wider; a wider picture is squeezed."
	s.Description = "Present for an image input: the pictures it takes and how the server makes the model's tensor from them."
	return s
}

// decodeInfoSchema is a decoded output's entry in GET /info
// (rest.DecodeInfo).
func decodeInfoSchema() *openapi3.Schema {
	s := openapi3.NewObjectSchema().
		WithProperty("kind", openapi3.NewStringSchema().WithEnum(codec.KindClassify, codec.KindCTC, codec.KindDetect, codec.KindSegment, codec.KindPose)).
		WithProperty("description", openapi3.NewStringSchema()).
		WithRequired([]string{"kind", "description"})
	s.Description = "Present for a decoded output: what /predict answers for it (`?raw=true` answers the tensor)."
	return s
}
