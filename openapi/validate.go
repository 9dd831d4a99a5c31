package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// StructureMediaType is the private media type under which the shallow body
// decoder is registered with openapi3filter. kin-openapi keeps body decoders
// in a process-wide table keyed by media type, with no per-call override; a
// media type of our own keeps the registration from replacing the decoder
// anyone else in the process uses for application/json. Clients never see
// it: the Validator sets it on the request it builds for openapi3filter.
const StructureMediaType = "application/vnd.svc.predict-structure+json"

var registerDecoder sync.Once

// Messages of the body-level errors.
const (
	msgNotObject = "Request body must be a JSON object mapping input names to values"
	msgEmpty     = "Invalid JSON body: the body is empty"
	msgInvalid   = "Invalid request body"
)

// ValidationError is a /predict body that does not fit the model's inputs.
// Its Error is the client-facing detail of a 400 response.
type ValidationError struct {
	// Input names the offending input, or is empty for the body as a whole.
	Input   string
	Message string
}

func (e *ValidationError) Error() string { return e.Message }

// Validator checks the structure of POST /predict bodies with openapi3filter
// against a schema derived from the document's PredictRequest schema.
//
// The body itself never goes to openapi3filter, which would copy it and
// decode it generically. The Validator scans it in place (scanShallow:
// linear in its size, for any shape) and hands openapi3filter a stand-in of
// a few bytes: a placeholder of the right JSON kind for each input present,
// and, if there are keys that are not inputs, one of them (the one an error
// names), under a name of the Validator's own. openapi3filter validates the
// stand-in against the structural schema, and its errors are translated back
// to the body's terms.
//
// It checks that the body is a JSON object, that every required input is
// present, that no other key is, and that each input's value has a JSON kind
// the input's schema allows (an array for a tensor input, a number, string or
// boolean for a scalar one). Nesting depth, dimension sizes and element
// values are left to the typed tensor decoder, which parses the element data
// anyway; README.md explains the split and has the numbers behind it.
//
// A Validator is safe for concurrent use.
type Validator struct {
	url     *url.URL
	route   *routers.Route
	options *openapi3filter.Options
	// inputs lists the input names in model order (for messages).
	inputs []string
	// kinds holds the JSON kinds allowed for each input, nil for any.
	kinds map[string][]string
	// images holds the image inputs (x-svc-image), whose messages name
	// pictures.
	images map[string]bool
	// props lists the schema's property names, index maps each to its
	// position there, and quoted holds each as a JSON string.
	props  []string
	index  map[string]int
	quoted [][]byte
	// stranger is the stand-in key of an unknown key: a name that is no
	// property; strangerJSON is it as a JSON string.
	stranger     string
	strangerJSON []byte
	// passed holds the stand-ins kin-openapi has accepted (see
	// ValidateBody), at most maxPassed of them.
	passed atomic.Pointer[map[string]struct{}]
	addMu  sync.Mutex
}

// maxPassed bounds the accepted stand-ins a Validator remembers: one per
// combination of inputs present and their JSON kinds, which few clients
// vary, but a model of many optional inputs has many.
const maxPassed = 256

// NewValidator derives the structural schema from doc, which must hold a
// POST /predict operation with an application/json request body, as Build
// makes it.
func NewValidator(doc *openapi3.T) (*Validator, error) {
	full, err := predictRequestSchema(doc)
	if err != nil {
		return nil, err
	}
	structural, kinds := structuralSchema(full)

	op := openapi3.NewOperation()
	op.OperationID = "predict"
	op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().
		WithRequired(true).
		WithContent(openapi3.Content{StructureMediaType: openapi3.NewMediaType().WithSchema(structural)})}
	op.Responses = openapi3.NewResponses(openapi3.WithStatus(http.StatusOK,
		&openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription("ok")}))
	item := &openapi3.PathItem{Post: op}
	sdoc := &openapi3.T{
		OpenAPI: OpenAPIVersion,
		Info:    &openapi3.Info{Title: "structure of " + doc.Info.Title, Version: doc.Info.Version},
		Paths:   openapi3.NewPaths(openapi3.WithPath(PathPredict, item)),
	}
	if err := sdoc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("structural schema derived from the document is invalid: %w", err)
	}

	options := &openapi3filter.Options{
		MultiError:                true,
		SkipSettingDefaults:       true,
		ExcludeRequestQueryParams: true,
		SchemaValidationOptions:   []openapi3.SchemaValidationOption{openapi3.DisableSchemaErrorDetails()},
	}
	// Messages are built from the errors' fields; this keeps kin-openapi's own
	// text (which may describe the value) out of any log that prints them.
	options.WithCustomSchemaErrorFunc(func(*openapi3.SchemaError) string {
		return "request body does not match the structure of the model's inputs"
	})

	registerDecoder.Do(func() {
		openapi3filter.RegisterBodyDecoder(StructureMediaType, shallowBodyDecoder)
	})

	names := stringList(full.Extensions[extInputs])
	if len(names) != len(full.Properties) {
		names = sortedKeys(full.Properties)
	}
	props := sortedKeys(full.Properties)
	index := make(map[string]int, len(props))
	quoted := make([][]byte, len(props))
	for i, p := range props {
		index[p] = i
		if quoted[i], err = json.Marshal(p); err != nil {
			return nil, fmt.Errorf("input name %q: %w", p, err)
		}
	}
	stranger := "?"
	for _, known := index[stranger]; known; _, known = index[stranger] {
		stranger += "?"
	}
	strangerJSON, err := json.Marshal(stranger)
	if err != nil {
		return nil, fmt.Errorf("stand-in key: %w", err)
	}
	return &Validator{
		props:        props,
		index:        index,
		quoted:       quoted,
		stranger:     stranger,
		strangerJSON: strangerJSON,
		url:          &url.URL{Path: PathPredict},
		route: &routers.Route{
			Spec:      sdoc,
			Path:      PathPredict,
			PathItem:  item,
			Method:    http.MethodPost,
			Operation: op,
		},
		options: options,
		inputs:  names,
		kinds:   kinds,
		images:  imageInputs(full),
	}, nil
}

// predictRequestSchema finds the request body schema of POST /predict.
func predictRequestSchema(doc *openapi3.T) (*openapi3.Schema, error) {
	if doc == nil || doc.Paths == nil {
		return nil, errors.New("document has no paths")
	}
	item := doc.Paths.Value(PathPredict)
	if item == nil || item.Post == nil {
		return nil, errors.New("document has no POST /predict operation")
	}
	rb := item.Post.RequestBody
	if rb == nil || rb.Value == nil {
		return nil, errors.New("POST /predict has no request body")
	}
	mt := rb.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return nil, errors.New("POST /predict has no resolved application/json schema")
	}
	s := mt.Schema.Value
	if s.Type == nil || !s.Type.Is(openapi3.TypeObject) {
		return nil, errors.New("POST /predict body schema is not an object")
	}
	return s, nil
}

// structuralSchema keeps, of a request schema, what the shallow decoder can
// check: the object, its required list, whether other keys are allowed, and
// for each property the JSON kinds its schema allows (the union over oneOf
// and anyOf alternatives; integer counts as number).
func structuralSchema(full *openapi3.Schema) (*openapi3.Schema, map[string][]string) {
	s := openapi3.NewObjectSchema()
	s.Required = slices.Clone(full.Required)
	s.AdditionalProperties = full.AdditionalProperties
	s.Properties = make(openapi3.Schemas, len(full.Properties))
	kinds := make(map[string][]string, len(full.Properties))
	for name, ref := range full.Properties {
		k := jsonKinds(ref.Value)
		kinds[name] = k
		s.Properties[name] = openapi3.NewSchemaRef("", kindSchema(k, ref.Value != nil && ref.Value.Nullable))
	}
	return s, kinds
}

// imageInputs lists the properties of a request schema that are image
// inputs (BuildWith marks them with x-svc-image).
func imageInputs(full *openapi3.Schema) map[string]bool {
	images := map[string]bool{}
	for name, ref := range full.Properties {
		if ref.Value != nil && ref.Value.Extensions[extImage] != nil {
			images[name] = true
		}
	}
	return images
}

// kindOrder is the order kinds are listed in (array first: it is what a
// tensor input takes).
var kindOrder = []string{
	openapi3.TypeArray, openapi3.TypeObject, openapi3.TypeNumber, openapi3.TypeString, openapi3.TypeBoolean,
}

// jsonKinds returns the JSON kinds a schema allows, or nil if any.
func jsonKinds(s *openapi3.Schema) []string {
	if s == nil {
		return nil
	}
	set := map[string]bool{}
	switch {
	case s.Type != nil && len(*s.Type) > 0:
		for _, t := range *s.Type {
			if t == openapi3.TypeInteger {
				t = openapi3.TypeNumber
			}
			set[t] = true
		}
	case len(s.OneOf) > 0 || len(s.AnyOf) > 0:
		for _, alt := range append(slices.Clone(s.OneOf), s.AnyOf...) {
			k := jsonKinds(alt.Value)
			if k == nil {
				return nil
			}
			for _, t := range k {
				set[t] = true
			}
		}
	default:
		return nil
	}
	var out []string
	for _, t := range kindOrder {
		if set[t] {
			out = append(out, t)
		}
	}
	return out
}

// kindSchema accepts any value of the given JSON kinds.
func kindSchema(kinds []string, nullable bool) *openapi3.Schema {
	one := func(kind string) *openapi3.Schema {
		s := openapi3.NewSchema()
		s.Type = &openapi3.Types{kind}
		if kind == openapi3.TypeArray {
			s.Items = openapi3.NewSchemaRef("", openapi3.NewSchema())
		}
		s.Nullable = nullable
		return s
	}
	switch len(kinds) {
	case 0:
		return openapi3.NewSchema()
	case 1:
		return one(kinds[0])
	}
	alts := make([]*openapi3.Schema, len(kinds))
	for i, k := range kinds {
		alts[i] = one(k)
	}
	return openapi3.NewOneOfSchema(alts...)
}

// shallowBodyDecoder is the openapi3filter.BodyDecoder of StructureMediaType.
// What it reads is a stand-in built by the Validator.
func shallowBodyDecoder(r io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	return decodeShallow(r)
}

// standIn scans body in place and returns the stand-in to validate instead:
// the top-level value's placeholder, or for an object the placeholders of
// the inputs present and of the least unknown key (in byte order, the one
// an error names) under v.stranger, whose name it returns. body is neither
// changed nor kept. An empty body gives an empty stand-in, which
// openapi3filter reports as missing.
func (v *Validator) standIn(body []byte) (standIn []byte, unknown string, err error) {
	if len(body) == 0 {
		return nil, "", nil
	}
	var few [8]jsonKind
	kinds := few[:0]
	if len(v.props) <= len(few) {
		kinds = few[:len(v.props)]
	} else {
		kinds = make([]jsonKind, len(v.props))
	}
	var strange []byte
	strangeKind := kindNone
	top, err := scanShallow(body, func(key []byte, k jsonKind) {
		if i, ok := v.index[string(key)]; ok {
			kinds[i] = k
			return
		}
		if strangeKind == kindNone || bytes.Compare(key, strange) < 0 {
			strange, strangeKind = key, k
		}
	})
	if err != nil {
		return nil, "", &ValidationError{Message: "Invalid JSON body: " + err.Error()}
	}
	if top != kindObject {
		return []byte(placeholders[top]), "", nil
	}
	out := make([]byte, 0, 64)
	out = append(out, '{')
	member := func(name []byte, k jsonKind) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, name...)
		out = append(out, ':')
		out = append(out, placeholders[k]...)
	}
	for i, k := range kinds {
		if k != kindNone {
			member(v.quoted[i], k)
		}
	}
	if strangeKind != kindNone {
		member(v.strangerJSON, strangeKind)
		unknown = string(strange) // a copy: strange may point into body
	}
	return append(out, '}'), unknown, nil
}

// ValidateBody checks a /predict body (already bounded in size by the
// server). It returns nil or a *ValidationError whose message is the detail
// of a 400 response.
//
// The stand-in is all kin-openapi sees, and it is a function of which
// inputs the body holds and the JSON kind of each value; kin-openapi's
// verdict on the same stand-in is the same each time. So a stand-in it
// accepted once is accepted again without asking: a server gets the same
// few stand-ins request after request, and kin-openapi's pass over even a
// stand-in of a few bytes (its request plumbing, schema walk and error
// handling) costs more than the scan that built it.
func (v *Validator) ValidateBody(ctx context.Context, body []byte) error {
	standIn, unknown, err := v.standIn(body)
	if err != nil {
		return err
	}
	if m := v.passed.Load(); m != nil {
		if _, ok := (*m)[string(standIn)]; ok {
			return nil
		}
	}
	// A request built by hand: the URL is parsed once, in NewValidator, and
	// only read by openapi3filter.
	req := (&http.Request{
		Method:        http.MethodPost,
		URL:           v.url,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {StructureMediaType}},
		Body:          io.NopCloser(bytes.NewReader(standIn)),
		ContentLength: int64(len(standIn)),
		Host:          v.url.Host,
	}).WithContext(ctx)
	err = openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{
		Request: req,
		Route:   v.route,
		Options: v.options,
	})
	if err == nil {
		v.remember(standIn)
		return nil
	}
	return v.translate(err, unknown)
}

// remember adds an accepted stand-in to v.passed (a new map each time, so
// that readers need no lock), unless maxPassed are already there.
func (v *Validator) remember(standIn []byte) {
	v.addMu.Lock()
	defer v.addMu.Unlock()
	var old map[string]struct{}
	if m := v.passed.Load(); m != nil {
		old = *m
	}
	if _, ok := old[string(standIn)]; ok || len(old) >= maxPassed {
		return
	}
	m := make(map[string]struct{}, len(old)+1)
	for k := range old {
		m[k] = struct{}{}
	}
	m[string(standIn)] = struct{}{}
	v.passed.Store(&m)
}

// translate maps openapi3filter's errors on a stand-in to one client-facing
// message; unknown is the unknown key the stand-in's stranger stands for.
// With several problems, a missing input is reported first, then an unknown
// key, then a value of the wrong kind (each in model input order), so the
// answer does not depend on map order.
func (v *Validator) translate(err error, unknown string) error {
	var syn *SyntaxError
	if errors.As(err, &syn) {
		return &ValidationError{Message: "Invalid JSON body: " + syn.Error()}
	}
	if errors.Is(err, openapi3filter.ErrInvalidRequired) {
		// openapi3filter reports an empty body as a missing one.
		return &ValidationError{Message: msgEmpty}
	}
	var schemaErrs []*openapi3.SchemaError
	collectSchemaErrors(err, &schemaErrs)
	if len(schemaErrs) == 0 {
		return &ValidationError{Message: msgInvalid}
	}

	var missing, wrongKind []string
	strange := false
	for _, se := range schemaErrs {
		path := se.JSONPointer()
		switch {
		case se.SchemaField == "required" && len(path) == 1:
			missing = append(missing, path[0])
		case se.SchemaField == "properties" && len(path) == 0:
			// The stand-in holds at most one key that is not an input.
			if obj, ok := se.Value.(map[string]any); ok {
				_, strange = obj[v.stranger]
			}
		case len(path) == 0:
			return &ValidationError{Message: msgNotObject}
		case path[0] == v.stranger:
			// Only with additionalProperties holding a schema (Build never
			// makes one): the unknown key's value does not fit it.
			wrongKind = append(wrongKind, unknown)
		default:
			wrongKind = append(wrongKind, path[0])
		}
	}
	if name, ok := v.firstInOrder(missing); ok {
		return &ValidationError{Input: name, Message: fmt.Sprintf("Missing required input: '%s'", name)}
	}
	if strange {
		return &ValidationError{Input: unknown, Message: fmt.Sprintf(
			"Unknown input '%s'; the model's inputs are: %s", clip(unknown), v.inputList())}
	}
	if name, ok := v.firstInOrder(wrongKind); ok {
		if v.images[name] {
			return &ValidationError{Input: name, Message: fmt.Sprintf(
				"Invalid input type for '%s': expected an image (a base64 string or a data: URL of %s) or a list of them", name, pictureWording)}
		}
		return &ValidationError{Input: name, Message: fmt.Sprintf(
			"Invalid input type for '%s': expected %s", name, expectedKind(v.kinds[name]))}
	}
	return &ValidationError{Message: msgInvalid}
}

// firstInOrder returns the name of names that comes first among the inputs.
func (v *Validator) firstInOrder(names []string) (string, bool) {
	if len(names) == 0 {
		return "", false
	}
	for _, in := range v.inputs {
		if slices.Contains(names, in) {
			return in, true
		}
	}
	return names[0], true
}

func (v *Validator) inputList() string {
	quoted := make([]string, len(v.inputs))
	for i, n := range v.inputs {
		quoted[i] = "'" + n + "'"
	}
	return strings.Join(quoted, ", ")
}

// expectedKind words the kinds an input accepts: "array" for any input that
// takes arrays (a tensor, even one that also takes a plain value under the
// batch rule), else the scalar kind.
func expectedKind(kinds []string) string {
	switch {
	case len(kinds) == 0:
		return "a JSON value"
	case slices.Contains(kinds, openapi3.TypeArray):
		return openapi3.TypeArray
	}
	return strings.Join(kinds, " or ")
}

// collectSchemaErrors flattens openapi3filter's nested errors.
func collectSchemaErrors(err error, out *[]*openapi3.SchemaError) {
	switch e := err.(type) {
	case nil:
	case openapi3.MultiError:
		for _, sub := range e {
			collectSchemaErrors(sub, out)
		}
	case *openapi3filter.RequestError:
		collectSchemaErrors(e.Err, out)
	case *openapi3.SchemaError:
		*out = append(*out, e)
	default:
		var se *openapi3.SchemaError
		if errors.As(err, &se) {
			*out = append(*out, se)
		}
	}
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// stringList reads an extension value that is a list of strings, as built
// ([]string) or as loaded from JSON ([]any).
func stringList(v any) []string {
	switch v := v.(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	return nil
}
