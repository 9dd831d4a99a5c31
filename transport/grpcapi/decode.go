package grpcapi

import (
	"math"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/transport/grpcapi/inference"
	"github.com/svc-dev/svc/transport/oip"
)

// ParamBinaryDataOutput is the request parameter that asks for every
// output in raw_output_contents.
const ParamBinaryDataOutput = oip.ParamBinaryDataOutput

// decodeRequest checks r against the model and decodes its tensors.
// Outputs go in raw_output_contents when the inputs came in
// raw_input_contents or binary_data_output asks for it.
func decodeRequest(r *inference.ModelInferRequest, v *view, maxElements int64, maxString int) (oip.Request, error) {
	var none oip.Request
	req := v.NewRequest()
	raw := r.GetRawInputContents()
	if len(raw) > 0 && len(raw) != len(r.GetInputs()) {
		return none, invalid("raw_input_contents has %d entries and the request has %d inputs: send one entry per input, in the order of inputs", len(raw), len(r.GetInputs()))
	}
	req.SetBinaryOutput(len(raw) > 0)
	if p, ok := r.GetParameters()[ParamBinaryDataOutput]; ok {
		b, isBool := p.GetParameterChoice().(*inference.InferParameter_BoolParam)
		if !isBool {
			return none, oip.InvalidBool(oip.Protobuf, "parameters."+ParamBinaryDataOutput)
		}
		req.SetBinaryOutput(req.BinaryOutput() || b.BoolParam)
	}
	if p, ok := r.GetParameters()[oip.ParamRaw]; ok {
		b, isBool := p.GetParameterChoice().(*inference.InferParameter_BoolParam)
		if !isBool {
			return none, oip.InvalidBool(oip.Protobuf, "parameters."+oip.ParamRaw)
		}
		req.SetRaw(b.BoolParam)
	}
	if p, ok := r.GetParameters()[oip.ParamCache]; ok {
		b, isBool := p.GetParameterChoice().(*inference.InferParameter_BoolParam)
		if !isBool {
			return none, oip.InvalidBool(oip.Protobuf, "parameters."+oip.ParamCache)
		}
		req.BypassCache(!b.BoolParam)
	}
	if err := scheduling(r.GetParameters(), &req); err != nil {
		return none, err
	}
	for _, name := range codec.DetectionParams() {
		if p, ok := r.GetParameters()[name]; ok {
			if err := req.SetDecodingParam(name, paramText(p)); err != nil {
				return none, err
			}
		}
	}
	if err := decodeSequence(r.GetParameters(), &req); err != nil {
		return none, err
	}
	for name, p := range r.GetParameters() {
		req.SetParam(name, paramText(p))
	}
	// The typed contents' elements, against limits.max_elements.
	if maxElements > 0 {
		var total int64
		for _, in := range r.GetInputs() {
			total += contentsLen(in.GetContents())
		}
		if total > maxElements {
			return none, oip.Errorf(oip.KindTooLarge, "Too many elements: the request's typed contents hold %d values, over the limit of %d (send large tensors in raw_input_contents)", total, maxElements)
		}
	}
	for i, in := range r.GetInputs() {
		h := oip.InputHeader{Pos: i, Name: in.GetName(), Datatype: in.GetDatatype(), Shape: in.GetShape(),
			HasName: in.GetName() != "", HasDatatype: in.GetDatatype() != "", HasShape: true}
		for key := range in.GetParameters() {
			if err := oip.InputParameter(oip.Protobuf, key); err != nil {
				h.Refused = err
			}
		}
		k, count, err := req.CheckInput(oip.Protobuf, &h)
		if err != nil {
			return none, err
		}
		spec := v.Spec(k)
		t := &tensor.Tensor{DType: spec.DType, Shape: in.GetShape()}
		if len(raw) > 0 {
			if contentsLen(in.GetContents()) > 0 {
				return none, invalid("Input '%s' has contents, but the request sends raw_input_contents: send every input one way", spec.Name)
			}
			data, err := tensor.DecodeRaw(spec.DType, count, raw[i], v.StringLimit(k, maxString))
			if err != nil {
				return none, invalid("Invalid raw_input_contents[%d] for input '%s' (shape %s of %s): %v", i, spec.Name, tensor.FormatShape(in.GetShape()), oip.Datatype(spec.DType), err)
			}
			t.Data = data
		} else {
			data, err := typedContents(spec, in.GetShape(), in.GetContents(), count, v.StringLimit(k, maxString))
			if err != nil {
				return none, err
			}
			t.Data = data
		}
		req.SetInput(k, t)
	}
	if err := req.CheckRequired(); err != nil {
		return none, err
	}
	if err := requestedOutputs(r, &req); err != nil {
		return none, err
	}
	return req, nil
}

// contentsField is one field of InferTensorContents and its length.
type contentsField struct {
	name string
	n    int
}

func contentsFields(c *inference.InferTensorContents) []contentsField {
	return []contentsField{
		{"bool_contents", len(c.GetBoolContents())},
		{"int_contents", len(c.GetIntContents())},
		{"int64_contents", len(c.GetInt64Contents())},
		{"uint_contents", len(c.GetUintContents())},
		{"uint64_contents", len(c.GetUint64Contents())},
		{"fp32_contents", len(c.GetFp32Contents())},
		{"fp64_contents", len(c.GetFp64Contents())},
		{"bytes_contents", len(c.GetBytesContents())},
	}
}

func contentsLen(c *inference.InferTensorContents) int64 {
	var n int64
	for _, f := range contentsFields(c) {
		n += int64(f.n)
	}
	return n
}

// contentsFieldOf names the field of InferTensorContents that holds
// elements of type dt; "" for FP16 and BF16, which have none.
func contentsFieldOf(dt tensor.DType) string {
	switch dt {
	case tensor.Bool:
		return "bool_contents"
	case tensor.Int8, tensor.Int16, tensor.Int32:
		return "int_contents"
	case tensor.Int64:
		return "int64_contents"
	case tensor.Uint8, tensor.Uint16, tensor.Uint32:
		return "uint_contents"
	case tensor.Uint64:
		return "uint64_contents"
	case tensor.Float32:
		return "fp32_contents"
	case tensor.Float64:
		return "fp64_contents"
	case tensor.String:
		return "bytes_contents"
	}
	return ""
}

// typedContents decodes an input's typed contents: exactly count elements
// in the field of its datatype, and nothing in the others.
func typedContents(spec *tensor.Spec, shape []int64, c *inference.InferTensorContents, count int64, maxString int) (any, error) {
	dtName := oip.Datatype(spec.DType)
	field := contentsFieldOf(spec.DType)
	var used []string
	got := 0
	for _, f := range contentsFields(c) {
		if f.n == 0 {
			continue
		}
		if f.name == field {
			got = f.n
			continue
		}
		used = append(used, f.name)
	}
	switch {
	case field == "" && (len(used) > 0 || count > 0):
		return nil, invalid("Input '%s' is %s, which has no typed contents field: send it in raw_input_contents", spec.Name, dtName)
	case len(used) > 0:
		return nil, invalid("Input '%s' is %s: its elements go in contents.%s, got %s", spec.Name, dtName, field, strings.Join(used, ", "))
	case int64(got) != count:
		if got == 0 {
			return nil, invalid("Input '%s' has no data: send its %d elements in contents.%s or raw_input_contents", spec.Name, count, field)
		}
		return nil, invalid("Input '%s': shape %s takes %d elements, contents.%s has %d", spec.Name, tensor.FormatShape(shape), count, field, got)
	}
	n := int(count)
	switch spec.DType {
	case tensor.Bool:
		return append([]bool{}, c.GetBoolContents()...), nil
	case tensor.Int8:
		return narrow[int32, int8](spec, c.GetIntContents(), math.MinInt8, math.MaxInt8)
	case tensor.Int16:
		return narrow[int32, int16](spec, c.GetIntContents(), math.MinInt16, math.MaxInt16)
	case tensor.Int32:
		return append([]int32{}, c.GetIntContents()...), nil
	case tensor.Int64:
		return append([]int64{}, c.GetInt64Contents()...), nil
	case tensor.Uint8:
		return narrow[uint32, uint8](spec, c.GetUintContents(), 0, math.MaxUint8)
	case tensor.Uint16:
		return narrow[uint32, uint16](spec, c.GetUintContents(), 0, math.MaxUint16)
	case tensor.Uint32:
		return append([]uint32{}, c.GetUintContents()...), nil
	case tensor.Uint64:
		return append([]uint64{}, c.GetUint64Contents()...), nil
	case tensor.Float32:
		return append([]float32{}, c.GetFp32Contents()...), nil
	case tensor.Float64:
		return append([]float64{}, c.GetFp64Contents()...), nil
	case tensor.Float16, tensor.BFloat16: // only empty ones get here
		return []uint16{}, nil
	case tensor.String:
		out := make([]string, n)
		for i, b := range c.GetBytesContents() {
			if maxString > 0 && len(b) > maxString {
				return nil, invalid("Input '%s': BYTES element %d is %d bytes long, over the limit of %d", spec.Name, i, len(b), maxString)
			}
			out[i] = string(b)
		}
		return out, nil
	}
	return nil, invalid("Input '%s' has unsupported datatype %s", spec.Name, dtName)
}

// narrow converts the wider wire integers to the input's type, refusing
// values out of its range.
func narrow[W int32 | uint32, N int8 | int16 | uint8 | uint16](spec *tensor.Spec, in []W, lo, hi int64) (any, error) {
	out := make([]N, len(in))
	for i, v := range in {
		if int64(v) < lo || int64(v) > hi {
			return nil, invalid("Input '%s': element %d is %d, out of the range of %s (%d to %d)", spec.Name, i, v, oip.Datatype(spec.DType), lo, hi)
		}
		out[i] = N(v)
	}
	return out, nil
}

// requestedOutputs resolves the request's outputs.
func requestedOutputs(r *inference.ModelInferRequest, req *oip.Request) error {
	if len(r.GetOutputs()) == 0 {
		return nil
	}
	req.SelectOutputs(len(r.GetOutputs()))
	for i, o := range r.GetOutputs() {
		h := oip.OutputHeader{Pos: i, Name: o.GetName(), HasName: o.GetName() != ""}
		for key := range o.GetParameters() {
			if err := oip.OutputParameter(key); err != nil {
				h.Refused = err
			}
		}
		if err := req.AddOutput(oip.Protobuf, &h); err != nil {
			return err
		}
	}
	return nil
}

// scheduling reads the request's timeout (microseconds) and priority
// parameters, each an int64_param or a uint64_param.
func scheduling(params map[string]*inference.InferParameter, req *oip.Request) error {
	if p, ok := params[oip.ParamTimeout]; ok {
		n, ok := unsigned(p)
		if !ok || n > math.MaxInt64 {
			return invalid("Invalid parameters.%s: expected a non-negative int64_param or uint64_param of microseconds", oip.ParamTimeout)
		}
		if err := req.SetTimeoutMicros(int64(n), "parameters."+oip.ParamTimeout); err != nil {
			return err
		}
	}
	if p, ok := params[oip.ParamPriority]; ok {
		n, ok := unsigned(p)
		if !ok {
			return invalid("Invalid parameters.%s: expected a non-negative int64_param or uint64_param", oip.ParamPriority)
		}
		req.SetPriority(n)
	}
	return nil
}

// unsigned is a parameter's non-negative integer.
func unsigned(p *inference.InferParameter) (uint64, bool) {
	switch v := p.GetParameterChoice().(type) {
	case *inference.InferParameter_Uint64Param:
		return v.Uint64Param, true
	case *inference.InferParameter_Int64Param:
		return uint64(v.Int64Param), v.Int64Param >= 0
	}
	return 0, false
}

// paramText is a parameter's value as text, whatever its kind.
func paramText(p *inference.InferParameter) string {
	switch v := p.GetParameterChoice().(type) {
	case *inference.InferParameter_BoolParam:
		return strconv.FormatBool(v.BoolParam)
	case *inference.InferParameter_Int64Param:
		return strconv.FormatInt(v.Int64Param, 10)
	case *inference.InferParameter_Uint64Param:
		return strconv.FormatUint(v.Uint64Param, 10)
	case *inference.InferParameter_DoubleParam:
		return strconv.FormatFloat(v.DoubleParam, 'g', -1, 64)
	case *inference.InferParameter_StringParam:
		return v.StringParam
	}
	return ""
}
