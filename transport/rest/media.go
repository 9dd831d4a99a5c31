package rest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport"
)

// Body kinds of a /predict.
const (
	bodyOther = iota
	bodyJSON
	bodyMultipart
	bodyImage
)

// bodyKind tells a /predict body's kind from its Content-Type.
func bodyKind(contentType string) (int, map[string]string) {
	mt, params, err := mime.ParseMediaType(contentType)
	switch {
	case errors.Is(err, mime.ErrInvalidMediaParameter) && mt == "multipart/form-data":
		// "boundary=" with no value: a form without a boundary (a 400
		// saying so), not a type svc does not take.
		return bodyMultipart, nil
	case err != nil:
		return bodyOther, nil
	case mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"):
		return bodyJSON, params
	case mt == "multipart/form-data":
		return bodyMultipart, params
	case strings.HasPrefix(mt, "image/"):
		return bodyImage, params
	}
	return bodyOther, params
}

// unsupportedType is the 415's message for a Content-Type the model does
// not take; a model with image inputs takes pictures too.
func unsupportedType(ct string, images bool) string {
	want := "send the body as application/json"
	if images {
		want = "send the body as application/json, multipart/form-data, or an image (image/jpeg, image/png, image/webp, image/gif, image/bmp)"
	}
	if ct == "" {
		return "Missing Content-Type: " + want
	}
	return fmt.Sprintf("Unsupported Content-Type '%s': %s", truncate(ct, 100), want)
}

// wantRaw reports whether the request asks for the outputs as tensors,
// not decoded (POST /predict?raw=true).
func wantRaw(r *http.Request) (bool, error) {
	q := r.URL.Query()
	if !q.Has("raw") {
		return false, nil
	}
	v := q.Get("raw")
	if v == "" {
		return true, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, &tensorjson.Error{Message: fmt.Sprintf("Query parameter raw must be true or false, got '%s'", truncate(transport.Quote(v), 40))}
	}
	return b, nil
}

// mediaSpecs is specs with each image input taking strings of any
// nesting: a picture, or a list of them, in the JSON body.
func mediaSpecs(specs []tensor.Spec, set *codec.Set) []tensor.Spec {
	if len(set.Images()) == 0 {
		return specs
	}
	out := append([]tensor.Spec(nil), specs...)
	for _, im := range set.Images() {
		out[im.Index] = tensor.Spec{Name: im.Name, DType: tensor.String, Required: specs[im.Index].Required}
	}
	return out
}

// imageInputs replaces each image input's strings with the input's tensor
// made from the pictures they carry. maxString caps the other inputs'
// strings (the body's decoder let every string through).
func imageInputs(ctx context.Context, inputs []*tensor.Tensor, specs []tensor.Spec, set *codec.Set, maxString int) error {
	var ps []codec.Pictures
	for k, t := range inputs {
		if k == set.PicturesInput() {
			continue // pictures its runner decodes, bounded by the body
		}
		im := set.ImageAt(k)
		if im == nil {
			if err := checkStrings(t, specs[k].Name, maxString); err != nil {
				return err
			}
			continue
		}
		if t == nil {
			continue
		}
		strs, _ := t.Data.([]string)
		if len(t.Shape) > 1 {
			return &core.InputError{Input: im.Name, Message: fmt.Sprintf("Input '%s' is an image input: send one image (a base64 string or a data: URL) or a list of them", im.Name)}
		}
		pictures := make([][]byte, len(strs))
		for i, s := range strs {
			p, err := codec.Picture(s)
			if err != nil {
				if len(t.Shape) == 0 {
					return &core.InputError{Input: im.Name, Message: fmt.Sprintf("Input '%s': %v", im.Name, err)}
				}
				return &core.InputError{Input: im.Name, Message: fmt.Sprintf("Input '%s', item %d: %v", im.Name, i, err)}
			}
			pictures[i] = p
		}
		ps = append(ps, codec.Pictures{Input: im, Data: pictures, Single: len(t.Shape) == 0})
	}
	if len(ps) == 0 {
		return nil
	}
	ts, err := set.Tensors(ctx, ps)
	if err != nil {
		return err
	}
	for i, p := range ps {
		inputs[p.Input.Index] = ts[i]
	}
	return nil
}

// countStrings refuses, before the body is validated or decoded, a JSON
// body, scanned as sc, that sends more pictures or texts than the limits
// allow, counting the strings under the image inputs' keys (or under
// "text" for a text body) as they are written.
func countStrings(sc *tensorjson.Scan, set *codec.Set, isText bool) error {
	if len(set.Images()) == 0 && !isText {
		return nil
	}
	pictures, texts := 0, 0
	input := ""
	for _, kv := range sc.Keys {
		key := string(kv.Key)
		switch {
		case isText && key == codec.InputText:
			texts += int(kv.Strings)
		case set.Image(key) != nil:
			pictures += int(kv.Strings)
			if input == "" || input == key {
				input = key
			} else {
				input = "-"
			}
		}
	}
	if input == "-" {
		input = ""
	}
	if err := set.CountPictures(input, pictures); err != nil {
		return err
	}
	if isText {
		return set.Text().CountTexts(texts)
	}
	return nil
}

// checkStrings refuses a string element over maxString bytes.
func checkStrings(t *tensor.Tensor, name string, maxString int) error {
	if t == nil || maxString <= 0 {
		return nil
	}
	strs, ok := t.Data.([]string)
	if !ok {
		return nil
	}
	for _, s := range strs {
		if len(s) > maxString {
			return &tensorjson.Error{Input: name, Message: fmt.Sprintf("Invalid value for '%s': string of %d bytes is longer than the limit of %d bytes", name, len(s), maxString)}
		}
	}
	return nil
}

// pictureBody makes the inputs of a body that is one picture, for a model
// whose one required input is its image input.
func pictureBody(ctx context.Context, body []byte, specs []tensor.Spec, set *codec.Set) ([]*tensor.Tensor, error) {
	ims := set.Images()
	for k, s := range specs {
		if s.Required && (len(ims) != 1 || ims[0].Index != k) {
			return nil, &tensorjson.Error{Message: fmt.Sprintf("An image body fills one image input, but the model also needs input '%s': send multipart/form-data or JSON", s.Name)}
		}
	}
	if len(ims) != 1 {
		return nil, &tensorjson.Error{Message: "The model has several image inputs: send multipart/form-data with one field per input, or JSON"}
	}
	t, err := set.Tensor(ctx, ims[0], [][]byte{body}, true)
	if err != nil {
		return nil, err
	}
	inputs := make([]*tensor.Tensor, len(specs))
	inputs[ims[0].Index] = t
	return inputs, nil
}

// multipartBody makes the inputs of a multipart/form-data body: one field
// per input, repeated for a batch of pictures; an image input's field is
// the picture file, any other input's field is its JSON value.
func multipartBody(ctx context.Context, body []byte, boundary string, specs []tensor.Spec, set *codec.Set, maxString int) ([]*tensor.Tensor, error) {
	pictures := map[string][][]byte{}
	var object []byte
	err := eachPart(body, boundary, func(part *multipart.Part, data []byte) {
		name := part.FormName()
		if set.Image(name) != nil {
			pictures[name] = append(pictures[name], data)
			return
		}
		object = appendField(object, name, data)
	})
	if err != nil {
		return nil, err
	}
	inputs, err := decodeRequest(closeObject(object), mediaSpecs(optionalImages(specs, set), set), maxString, 0, nil)
	if err != nil {
		return nil, err
	}
	var ps []codec.Pictures
	for _, im := range set.Images() {
		p, ok := pictures[im.Name]
		if !ok {
			if specs[im.Index].Required {
				tensor.RecycleAll(inputs)
				return nil, &tensorjson.Error{Input: im.Name, Message: "Missing required input: '" + im.Name + "'"}
			}
			continue
		}
		ps = append(ps, codec.Pictures{Input: im, Data: p, Single: len(p) == 1})
	}
	ts, err := set.Tensors(ctx, ps)
	if err != nil {
		tensor.RecycleAll(inputs)
		return nil, err
	}
	for i, p := range ps {
		inputs[p.Input.Index] = ts[i]
	}
	return inputs, nil
}

// eachPart calls fn with each part of a multipart/form-data body and its
// bytes, in order; a missing boundary or a malformed body is the error.
func eachPart(body []byte, boundary string, fn func(part *multipart.Part, data []byte)) error {
	if boundary == "" {
		return &tensorjson.Error{Message: "multipart/form-data body without a boundary in its Content-Type: send one, as in multipart/form-data; boundary=x (an empty or malformed boundary= is none)"}
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return &tensorjson.Error{Message: "Malformed multipart/form-data body: " + err.Error()}
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return &tensorjson.Error{Message: "Malformed multipart/form-data body: " + err.Error()}
		}
		fn(part, data)
	}
}

// optionalImages is specs with the image inputs optional: in a multipart
// body they are files, not JSON fields.
func optionalImages(specs []tensor.Spec, set *codec.Set) []tensor.Spec {
	out := append([]tensor.Spec(nil), specs...)
	for _, im := range set.Images() {
		out[im.Index].Required = false
	}
	return out
}

// appendField appends "name":value to a JSON object under construction.
func appendField(object []byte, name string, value []byte) []byte {
	if len(object) == 0 {
		object = append(object, '{')
	} else {
		object = append(object, ',')
	}
	object = tensorjson.AppendJSON(object, &tensor.Tensor{DType: tensor.String, Shape: []int64{}, Data: []string{name}})
	object = append(object, ':')
	return append(object, value...)
}

func closeObject(object []byte) []byte {
	if len(object) == 0 {
		return []byte("{}")
	}
	return append(object, '}')
}

// appendOutputs writes the outputs as a JSON object keyed by output name
// (keys), each decoded output of set as its meaning, with dec's settings
// and pictures, unless raw; an output a decoded output reads (a segment
// output's prototype masks) is answered only raw.
func appendOutputs(dst []byte, keys [][]byte, res core.Result, set *codec.Set, dec *codec.Decoding, raw bool, json []bool) ([]byte, error) {
	if raw {
		set = nil
	}
	if res.Len() != len(keys) {
		return dst, fmt.Errorf("the run gave %d outputs, the model has %d", res.Len(), len(keys))
	}
	dst = append(dst, '{')
	first := true
	for i, key := range keys {
		if set.Consumed(i) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, key...)
		if o := set.OutputAt(i); o != nil {
			var err error
			if dst, err = dec.AppendJSON(dst, o, res); err != nil {
				return dst, err
			}
			continue
		}
		v, err := res.Value(i)
		if err != nil {
			return dst, fmt.Errorf("encode output %s %w", key, err)
		}
		if !raw && i < len(json) && json[i] {
			if dst, err = appendDocuments(dst, v); err != nil {
				return dst, fmt.Errorf("encode output %s: %w", key, err)
			}
			continue
		}
		dst = appendValue(dst, v)
	}
	return append(dst, '}'), nil
}

// appendDocuments writes a string output whose elements are JSON
// documents (core.OutputSpec.JSON) as a list of them.
func appendDocuments(dst []byte, v core.Value) ([]byte, error) {
	docs, ok := v.Tensor.Data.([]string)
	if v.Kind != core.KindTensor || !ok {
		return dst, errors.New("is not a string tensor")
	}
	dst = append(dst, '[')
	for i, d := range docs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, d...)
	}
	return append(dst, ']'), nil
}

// jsonOutputs marks the outputs whose elements are JSON documents.
func jsonOutputs(outs []core.OutputSpec) []bool {
	var m []bool
	for i, o := range outs {
		if o.JSON {
			if m == nil {
				m = make([]bool, len(outs))
			}
			m[i] = true
		}
	}
	return m
}
