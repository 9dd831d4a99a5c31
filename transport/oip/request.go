package oip

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport"
)

// inferRequest is a parsed inference request: the protocol's request and
// what the response echoes of it.
type inferRequest struct {
	Request
	// id is the request's "id" as sent (a JSON string, quotes included);
	// nil when absent.
	id []byte
	// params is the request's "parameters" object as sent; nil when absent.
	params []byte
}

// requestInput collects one member of "inputs" while it is parsed.
type requestInput struct {
	InputHeader
	binarySize         int64 // -1: none
	dataStart, dataEnd int   // the "data" value, when it came before the fields it needs
	hasData            bool
	spec               int // in the model's inputs; -1 until checked
	checked            bool
	tensor             *tensor.Tensor
}

// pendingBinary is an input whose data is in the binary part.
type pendingBinary struct {
	in   *requestInput
	size int64
}

// parser reads an inference request's JSON header with the shared codec.
type parser struct {
	d       tensorjson.Decoder
	header  []byte
	m       *restView
	req     *inferRequest
	binary  bool // the request has the binary data extension's header
	pending []pendingBinary
}

var (
	specString = tensor.Spec{DType: tensor.String, Shape: []int64{}}
	specShape  = tensor.Spec{DType: tensor.Int64, Shape: []int64{-1}}
)

// parseRequest parses the JSON header of an inference request, and the
// binary part after it when binaryMode (the request carried
// Inference-Header-Content-Length).
func parseRequest(header, bin []byte, binaryMode bool, m *restView) (*inferRequest, error) {
	p := &parser{
		d:      tensorjson.NewDecoder(header, len(m.specs)+2),
		header: header,
		m:      m,
		req:    &inferRequest{Request: m.NewRequest()},
		binary: binaryMode,
	}
	p.d.LimitStrings(m.maxString)
	defer p.d.Release()
	if err := p.document(); err != nil {
		return nil, err
	}
	if err := p.readBinary(bin); err != nil {
		return nil, err
	}
	if err := p.req.CheckRequired(); err != nil {
		return nil, err
	}
	return p.req, nil
}

func (p *parser) document() error {
	d := p.d
	d.SkipSpace()
	c, ok := d.Peek()
	if !ok {
		return d.Unexpected("looking for beginning of value")
	}
	if c != '{' {
		if err := d.SkipValue(); err != nil {
			return err
		}
		if err := p.end(); err != nil {
			return err
		}
		return invalid("The inference request must be a JSON object with an \"inputs\" array")
	}
	d.Advance(1)
	err := p.members(func() string { return "the request" }, requestKeys, func(key []byte) error {
		switch string(key) {
		case "id":
			if c, _ := d.Peek(); c != '"' {
				return invalid("Invalid \"id\": expected a string")
			}
			raw, err := p.raw()
			// A copy: the response may be written over the body.
			p.req.id = append([]byte(nil), raw...)
			return err
		case "parameters":
			return p.requestParameters()
		case "inputs":
			return p.array("inputs", func(i int) error { return p.input(i) })
		case "outputs":
			p.req.SelectOutputs(0)
			return p.array("outputs", func(i int) error { return p.output(i) })
		}
		return skip(d)
	})
	if err != nil {
		return err
	}
	return p.end()
}

// end checks that nothing but space follows the JSON object.
func (p *parser) end() error {
	p.d.SkipSpace()
	if _, more := p.d.Peek(); more {
		return p.d.Unexpected("after top-level value")
	}
	return nil
}

func skip(d tensorjson.Decoder) error {
	if err := d.SkipValue(); err != nil {
		return err
	}
	return nil
}

// raw moves past the value at Pos and returns its text.
func (p *parser) raw() ([]byte, error) {
	start := p.d.Pos()
	if err := skip(p.d); err != nil {
		return nil, err
	}
	return p.header[start:p.d.Pos()], nil
}

// openObject consumes the '{' of an object named what.
func (p *parser) openObject(what string) error {
	if c, _ := p.d.Peek(); c != '{' {
		if _, err := p.raw(); err != nil {
			return err
		}
		return invalid("Invalid %s: expected an object", what)
	}
	p.d.Advance(1)
	return nil
}

// array walks the array at Pos named what, calling elem at each element.
func (p *parser) array(what string, elem func(i int) error) error {
	d := p.d
	if c, _ := d.Peek(); c != '[' {
		if _, err := p.raw(); err != nil {
			return err
		}
		return invalid("Invalid \"%s\": expected an array", what)
	}
	d.Advance(1)
	d.SkipSpace()
	if c, _ := d.Peek(); c == ']' {
		d.Advance(1)
		return nil
	}
	for i := 0; ; i++ {
		if err := elem(i); err != nil {
			return err
		}
		d.SkipSpace()
		c, _ := d.Peek()
		if c == ',' {
			d.Advance(1)
			d.SkipSpace()
			continue
		}
		if c == ']' {
			d.Advance(1)
			return nil
		}
		return d.Unexpected("after array element")
	}
}

// str decodes the string at Pos; what names it in messages.
func (p *parser) str(what string) (string, error) {
	if c, _ := p.d.Peek(); c != '"' {
		if _, err := p.raw(); err != nil {
			return "", err
		}
		return "", invalid("Invalid %s: expected a string", what)
	}
	t, err := p.d.Value(&specString)
	if err != nil {
		// The codec names the value after the spec, which has no name
		// here: say what the string is instead.
		var e *tensorjson.Error
		if errors.As(err, &e) && e.Input == "" {
			if reason, ok := strings.CutPrefix(e.Message, "Invalid value for '': "); ok {
				return "", invalid("Invalid %s: %s", what, reason)
			}
		}
		return "", err
	}
	return t.Data.([]string)[0], nil
}

// boolean reads true or false at Pos.
func (p *parser) boolean(what string) (bool, error) {
	raw, err := p.raw()
	if err != nil {
		return false, err
	}
	switch string(raw) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, InvalidBool(JSON, what)
}

// size reads a non-negative integer at Pos.
func (p *parser) size(what string) (int64, error) {
	raw, err := p.raw()
	if err != nil {
		return 0, err
	}
	n, perr := strconv.ParseInt(string(raw), 10, 64)
	if perr != nil || n < 0 {
		return 0, invalid("Invalid %s: expected a non-negative integer, got %s", what, transport.Quote(string(raw)))
	}
	return n, nil
}

// shape reads an array of non-negative integers at Pos.
func (p *parser) shape(what string) ([]int64, error) {
	bad := invalid("Invalid %s: expected an array of non-negative integers", what)
	if c, _ := p.d.Peek(); c != '[' {
		if _, err := p.raw(); err != nil {
			return nil, err
		}
		return nil, bad
	}
	t, err := p.d.Value(&specShape)
	if err != nil {
		var je *tensorjson.Error
		if errors.As(err, &je) && je.Input != "" {
			return nil, bad
		}
		return nil, err
	}
	shape := t.Data.([]int64)
	for _, d := range shape {
		if d < 0 {
			return nil, bad
		}
	}
	return shape, nil
}

func (p *parser) requestParameters() error {
	start := p.d.Pos()
	if err := p.openObject("\"parameters\""); err != nil {
		return err
	}
	err := p.members(func() string { return `"parameters"` }, nil, func(key []byte) error {
		switch string(key) {
		case ParamBinaryDataOutput:
			b, err := p.boolean("parameters." + ParamBinaryDataOutput)
			p.req.SetBinaryOutput(b)
			return err
		case ParamRaw:
			b, err := p.boolean("parameters." + ParamRaw)
			p.req.SetRaw(b)
			return err
		case ParamCache:
			b, err := p.boolean("parameters." + ParamCache)
			p.req.BypassCache(!b)
			return err
		case ParamTimeout:
			n, err := p.size("parameters." + ParamTimeout)
			if err != nil {
				return err
			}
			return p.req.SetTimeoutMicros(n, "parameters."+ParamTimeout)
		case ParamPriority:
			n, err := p.size("parameters." + ParamPriority)
			p.req.SetPriority(uint64(n))
			return err
		case ParamSequenceID:
			raw, err := p.raw()
			if err != nil {
				return err
			}
			id, err := SequenceIDJSON(raw)
			p.req.SetSequenceID(id)
			return err
		case ParamSequenceStart, ParamSequenceEnd, ParamSequenceState:
			b, err := p.boolean("parameters." + string(key))
			p.req.SetSequenceFlag(string(key), b)
			return err
		case codec.ParamConfidence, codec.ParamIoU, codec.ParamMaxDet, codec.ParamClasses, codec.ParamRLE:
			raw, err := p.raw()
			if err != nil {
				return err
			}
			return p.req.SetDecodingParam(string(key), paramText(raw))
		}
		raw, err := p.raw()
		if err != nil {
			return err
		}
		p.req.SetParam(string(key), paramText(raw))
		return nil
	})
	p.req.params = append([]byte(nil), p.header[start:p.d.Pos()]...)
	return err
}

// paramText is a parameter's JSON value as text: a string's contents,
// the literal of any other value.
// A list (of classes) is its items separated by commas.
func paramText(raw []byte) string {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) > 1 && raw[0] == '[' && raw[len(raw)-1] == ']' {
		return string(raw[1 : len(raw)-1])
	}
	return string(raw)
}

// inputName names inputs[i] in messages.
func inputName(in *requestInput) string {
	if in.HasName {
		return "input '" + transport.Quote(in.Name) + "'"
	}
	return "inputs[" + strconv.Itoa(in.Pos) + "]"
}

func (p *parser) input(i int) error {
	in := &requestInput{InputHeader: InputHeader{Pos: i}, binarySize: -1, spec: -1}
	if err := p.openObject("inputs[" + strconv.Itoa(i) + "]"); err != nil {
		return err
	}
	err := p.members(func() string { return inputName(in) }, inputKeys, func(key []byte) error {
		var err error
		switch string(key) {
		case "name":
			in.Name, err = p.str("\"name\" of " + inputName(in))
			in.HasName = true
		case "datatype":
			in.Datatype, err = p.str("\"datatype\" of " + inputName(in))
			in.HasDatatype = true
		case "shape":
			in.Shape, err = p.shape("\"shape\" of " + inputName(in))
			in.HasShape = true
		case "parameters":
			err = p.inputParameters(in)
		case "data":
			in.hasData = true
			if in.HasName && in.HasDatatype && in.HasShape {
				// The usual order: decode in place.
				if err := p.check(in); err != nil {
					return err
				}
				in.tensor, err = p.d.Flat(p.m.Spec(in.spec), in.Shape)
				return err
			}
			in.dataStart = p.d.Pos()
			err = skip(p.d)
			in.dataEnd = p.d.Pos()
		default:
			err = skip(p.d)
		}
		return err
	})
	if err != nil {
		return err
	}
	if err := p.check(in); err != nil {
		return err
	}
	spec := p.m.Spec(in.spec)
	switch {
	case in.hasData && in.binarySize >= 0:
		return invalid("Input '%s' has both \"data\" and parameters.binary_data_size: send one", spec.Name)
	case in.binarySize >= 0:
		if !p.binary {
			return invalid("Input '%s' has parameters.binary_data_size, but the request has no %s header to say where its JSON ends", spec.Name, HeaderInferenceHeaderLength)
		}
		p.pending = append(p.pending, pendingBinary{in: in, size: in.binarySize})
	case in.hasData:
		if in.tensor == nil {
			sub := tensorjson.NewDecoder(p.header[in.dataStart:in.dataEnd], 1)
			sub.LimitStrings(p.m.maxString)
			t, err := sub.Flat(spec, in.Shape)
			sub.Release()
			if err != nil {
				return err
			}
			in.tensor = t
		}
		p.req.SetInput(in.spec, in.tensor)
	default:
		return invalid("Input '%s' has no \"data\" (or parameters.binary_data_size with binary data after the JSON)", spec.Name)
	}
	return nil
}

func (p *parser) inputParameters(in *requestInput) error {
	if err := p.openObject("\"parameters\" of " + inputName(in)); err != nil {
		return err
	}
	return p.members(func() string { return `"parameters" of ` + inputName(in) }, nil, func(key []byte) error {
		switch string(key) {
		case "binary_data_size":
			n, err := p.size("parameters.binary_data_size of " + inputName(in))
			in.binarySize = n
			return err
		}
		if err := InputParameter(JSON, string(key)); err != nil {
			return err
		}
		return skip(p.d)
	})
}

// check resolves the input against the model: its name, datatype and
// shape. It runs once.
func (p *parser) check(in *requestInput) error {
	if in.checked {
		return nil
	}
	k, _, err := p.req.CheckInput(JSON, &in.InputHeader)
	if err != nil {
		return err
	}
	in.spec, in.checked = k, true
	return nil
}

func (p *parser) output(i int) error {
	o := OutputHeader{Pos: i}
	what := "outputs[" + strconv.Itoa(i) + "]"
	if err := p.openObject(what); err != nil {
		return err
	}
	err := p.members(func() string { return what }, outputKeys, func(key []byte) error {
		var err error
		switch string(key) {
		case "name":
			o.Name, err = p.str("\"name\" of " + what)
			o.HasName = true
		case "parameters":
			if err := p.openObject("\"parameters\" of " + what); err != nil {
				return err
			}
			err = p.members(func() string { return `"parameters" of ` + what }, nil, func(key []byte) error {
				if string(key) == "binary_data" {
					var err error
					o.Binary, err = p.boolean("parameters.binary_data of " + what)
					o.BinarySet = true
					return err
				}
				if err := OutputParameter(string(key)); err != nil {
					return err
				}
				return skip(p.d)
			})
		default:
			err = skip(p.d)
		}
		return err
	})
	if err != nil {
		return err
	}
	return p.req.AddOutput(JSON, &o)
}

// readBinary hands each input with binary data its part of bin, in the
// order of "inputs".
func (p *parser) readBinary(bin []byte) error {
	var total int64
	over := false
	for _, pb := range p.pending {
		if pb.size > int64(len(bin))-total {
			over = true
			break
		}
		total += pb.size
	}
	if over || total != int64(len(bin)) {
		var sizes []string
		for _, pb := range p.pending {
			sizes = append(sizes, strconv.FormatInt(pb.size, 10))
		}
		declared := "no input has parameters.binary_data_size"
		if len(sizes) > 0 {
			declared = "the inputs' binary_data_size are " + strings.Join(sizes, " + ")
		}
		return invalid("The body has %d bytes of binary data after the %d-byte JSON header, but %s", len(bin), len(p.header), declared)
	}
	off := int64(0)
	for _, pb := range p.pending {
		spec := p.m.Spec(pb.in.spec)
		t, err := DecodeBinary(spec.Name, spec.DType, pb.in.Shape, bin[off:off+pb.size])
		if err != nil {
			return err
		}
		off += pb.size
		p.req.SetInput(pb.in.spec, t)
	}
	return nil
}
