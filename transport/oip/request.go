package oip

import (
	"errors"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport"
)

// inferRequest is a parsed inference request.
type inferRequest struct {
	// id is the request's "id" as sent (a JSON string, quotes included);
	// nil when absent.
	id []byte
	// params is the request's "parameters" object as sent; nil when absent.
	params []byte
	// binaryOutput is parameters.binary_data_output.
	binaryOutput bool
	// inputs has one tensor per model input, nil for one not sent.
	inputs []*tensor.Tensor
	// outputs are the requested outputs, in the request's order; nil when
	// the request names none.
	outputs []requestedOutput
}

type requestedOutput struct {
	index int // in the model's outputs
	// binary is parameters.binary_data, when set.
	binary, binarySet bool
}

// requestInput collects one member of "inputs" while it is parsed.
type requestInput struct {
	pos                  int // in "inputs"
	name, datatype       string
	hasName, hasDatatype bool
	shape                []int64
	hasShape             bool
	binarySize           int64 // -1: none
	dataStart, dataEnd   int   // the "data" value, when it came before the fields it needs
	hasData              bool
	spec                 int // in the model's inputs; -1 until checked
	checked              bool
	tensor               *tensor.Tensor
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
	m       *view
	req     *inferRequest
	binary  bool // the request has the binary data extension's header
	seen    []bool
	pending []pendingBinary
}

var (
	specString = tensor.Spec{DType: tensor.String, Shape: []int64{}}
	specShape  = tensor.Spec{DType: tensor.Int64, Shape: []int64{-1}}
)

// parseRequest parses the JSON header of an inference request, and the
// binary part after it when binaryMode (the request carried
// Inference-Header-Content-Length).
func parseRequest(header, bin []byte, binaryMode bool, m *view) (*inferRequest, error) {
	p := &parser{
		d:      tensorjson.NewDecoder(header, len(m.specs)+2),
		header: header,
		m:      m,
		req:    &inferRequest{inputs: make([]*tensor.Tensor, len(m.specs))},
		binary: binaryMode,
		seen:   make([]bool, len(m.specs)),
	}
	p.d.LimitStrings(m.maxString)
	defer p.d.Release()
	if err := p.document(); err != nil {
		return nil, err
	}
	if err := p.readBinary(bin); err != nil {
		return nil, err
	}
	for i := range m.specs {
		if m.specs[i].Required && p.req.inputs[i] == nil {
			return nil, badRequest("Missing required input: '%s'", m.specs[i].Name)
		}
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
		return badRequest("The inference request must be a JSON object with an \"inputs\" array")
	}
	d.Advance(1)
	err := p.d.Members(func(key []byte) error {
		switch string(key) {
		case "id":
			if c, _ := d.Peek(); c != '"' {
				return badRequest("Invalid \"id\": expected a string")
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
			p.req.outputs = []requestedOutput{}
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
		return badRequest("Invalid %s: expected an object", what)
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
		return badRequest("Invalid \"%s\": expected an array", what)
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
		return "", badRequest("Invalid %s: expected a string", what)
	}
	t, err := p.d.Value(&specString)
	if err != nil {
		// The codec names the value after the spec, which has no name
		// here: say what the string is instead.
		var e *tensorjson.Error
		if errors.As(err, &e) && e.Input == "" {
			if reason, ok := strings.CutPrefix(e.Message, "Invalid value for '': "); ok {
				return "", badRequest("Invalid %s: %s", what, reason)
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
	return false, badRequest("Invalid %s: expected true or false", what)
}

// size reads a non-negative integer at Pos.
func (p *parser) size(what string) (int64, error) {
	raw, err := p.raw()
	if err != nil {
		return 0, err
	}
	n, perr := strconv.ParseInt(string(raw), 10, 64)
	if perr != nil || n < 0 {
		return 0, badRequest("Invalid %s: expected a non-negative integer, got %s", what, transport.Quote(string(raw)))
	}
	return n, nil
}

// shape reads an array of non-negative integers at Pos.
func (p *parser) shape(what string) ([]int64, error) {
	bad := badRequest("Invalid %s: expected an array of non-negative integers", what)
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
	err := p.d.Members(func(key []byte) error {
		if string(key) == "binary_data_output" {
			b, err := p.boolean("parameters.binary_data_output")
			p.req.binaryOutput = b
			return err
		}
		return skip(p.d)
	})
	p.req.params = append([]byte(nil), p.header[start:p.d.Pos()]...)
	return err
}

// inputName names inputs[i] in messages.
func inputName(in *requestInput) string {
	if in.hasName {
		return "input '" + transport.Quote(in.name) + "'"
	}
	return "inputs[" + strconv.Itoa(in.pos) + "]"
}

func (p *parser) input(i int) error {
	in := &requestInput{pos: i, binarySize: -1, spec: -1}
	if err := p.openObject("inputs[" + strconv.Itoa(i) + "]"); err != nil {
		return err
	}
	err := p.d.Members(func(key []byte) error {
		var err error
		switch string(key) {
		case "name":
			in.name, err = p.str("\"name\" of " + inputName(in))
			in.hasName = true
		case "datatype":
			in.datatype, err = p.str("\"datatype\" of " + inputName(in))
			in.hasDatatype = true
		case "shape":
			in.shape, err = p.shape("\"shape\" of " + inputName(in))
			in.hasShape = true
		case "parameters":
			err = p.inputParameters(in)
		case "data":
			in.hasData = true
			if in.hasName && in.hasDatatype && in.hasShape {
				// The usual order: decode in place.
				if err := p.check(in); err != nil {
					return err
				}
				in.tensor, err = p.d.Flat(&p.m.specs[in.spec], in.shape)
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
	spec := &p.m.specs[in.spec]
	switch {
	case in.hasData && in.binarySize >= 0:
		return badRequest("Input '%s' has both \"data\" and parameters.binary_data_size: send one", spec.Name)
	case in.binarySize >= 0:
		if !p.binary {
			return badRequest("Input '%s' has parameters.binary_data_size, but the request has no %s header to say where its JSON ends", spec.Name, HeaderInferenceHeaderLength)
		}
		p.pending = append(p.pending, pendingBinary{in: in, size: in.binarySize})
	case in.hasData:
		if in.tensor == nil {
			sub := tensorjson.NewDecoder(p.header[in.dataStart:in.dataEnd], 1)
			sub.LimitStrings(p.m.maxString)
			t, err := sub.Flat(spec, in.shape)
			sub.Release()
			if err != nil {
				return err
			}
			in.tensor = t
		}
		p.req.inputs[in.spec] = in.tensor
	default:
		return badRequest("Input '%s' has no \"data\" (or parameters.binary_data_size with binary data after the JSON)", spec.Name)
	}
	return nil
}

func (p *parser) inputParameters(in *requestInput) error {
	if err := p.openObject("\"parameters\" of " + inputName(in)); err != nil {
		return err
	}
	return p.d.Members(func(key []byte) error {
		switch string(key) {
		case "binary_data_size":
			n, err := p.size("parameters.binary_data_size of " + inputName(in))
			in.binarySize = n
			return err
		case "shared_memory_region":
			return badRequest("Input parameters.shared_memory_region: the shared-memory extension is not supported; send the data in the body")
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
	if !in.hasName {
		return badRequest("Invalid inputs[%d]: \"name\" is missing", in.pos)
	}
	k := p.m.inputIndex(in.name)
	if k < 0 {
		return badRequest("Unknown input '%s'; the model's inputs are: %s", transport.Quote(in.name), p.m.inputList)
	}
	spec := &p.m.specs[k]
	if !spec.DType.Valid() {
		return badRequest("Input '%s' is not a tensor; the Open Inference Protocol carries tensors only", spec.Name)
	}
	if p.seen[k] {
		return badRequest("Duplicate input '%s'", spec.Name)
	}
	if !in.hasDatatype {
		return badRequest("Input '%s': \"datatype\" is missing (the model takes %s)", spec.Name, Datatype(spec.DType))
	}
	dt, ok := ParseDatatype(in.datatype)
	if !ok {
		return badRequest("Invalid datatype '%s' for input '%s': expected one of %s", transport.Quote(in.datatype), spec.Name, datatypeList)
	}
	if dt != spec.DType {
		return badRequest("Invalid datatype for input '%s': the model takes %s, got %s", spec.Name, Datatype(spec.DType), in.datatype)
	}
	if !in.hasShape {
		return badRequest("Input '%s': \"shape\" is missing", spec.Name)
	}
	if err := checkShape(spec, in.shape); err != nil {
		return err
	}
	if _, err := elementCount(spec.Name, in.shape); err != nil {
		return err
	}
	p.seen[k] = true
	in.spec, in.checked = k, true
	return nil
}

// checkShape checks a request's shape against the rank and fixed
// dimensions of the model's input (any shape for an input of unknown
// rank).
func checkShape(s *tensor.Spec, got []int64) error {
	if s.Shape == nil {
		return nil
	}
	if len(got) != len(s.Shape) {
		return badRequest("Invalid shape for '%s': expected rank %d %s, got rank %d %s",
			s.Name, len(s.Shape), transport.FormatShape(s.Shape), len(got), transport.FormatShape(got))
	}
	for i, want := range s.Shape {
		if want >= 0 && got[i] != want {
			return badRequest("Invalid shape for '%s': expected %s, got %s", s.Name, transport.FormatShape(s.Shape), transport.FormatShape(got))
		}
	}
	return nil
}

func (p *parser) output(i int) error {
	var (
		name           string
		hasName        bool
		binary, binSet bool
	)
	what := "outputs[" + strconv.Itoa(i) + "]"
	if err := p.openObject(what); err != nil {
		return err
	}
	err := p.d.Members(func(key []byte) error {
		var err error
		switch string(key) {
		case "name":
			name, err = p.str("\"name\" of " + what)
			hasName = true
		case "parameters":
			if err := p.openObject("\"parameters\" of " + what); err != nil {
				return err
			}
			err = p.d.Members(func(key []byte) error {
				switch string(key) {
				case "binary_data":
					var err error
					binary, err = p.boolean("parameters.binary_data of " + what)
					binSet = true
					return err
				case "classification":
					return badRequest("Output parameters.classification: the classification extension is not supported")
				case "shared_memory_region":
					return badRequest("Output parameters.shared_memory_region: the shared-memory extension is not supported")
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
	if !hasName {
		return badRequest("Invalid %s: \"name\" is missing", what)
	}
	k := p.m.outputIndex(name)
	if k < 0 {
		return badRequest("Unknown output '%s'; the model's outputs are: %s", transport.Quote(name), p.m.outputList)
	}
	if !p.m.outputs[k].isTensor {
		return badRequest("Output '%s' is a %s, not a tensor; the Open Inference Protocol carries tensors only", name, p.m.outputs[k].kind)
	}
	for _, o := range p.req.outputs {
		if o.index == k {
			return badRequest("Duplicate output '%s'", name)
		}
	}
	p.req.outputs = append(p.req.outputs, requestedOutput{index: k, binary: binary, binarySet: binSet})
	return nil
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
		return badRequest("The body has %d bytes of binary data after the %d-byte JSON header, but %s", len(bin), len(p.header), declared)
	}
	off := int64(0)
	for _, pb := range p.pending {
		spec := &p.m.specs[pb.in.spec]
		t, err := DecodeBinary(spec.Name, spec.DType, pb.in.shape, bin[off:off+pb.size])
		if err != nil {
			return err
		}
		off += pb.size
		p.req.inputs[pb.in.spec] = t
	}
	return nil
}
