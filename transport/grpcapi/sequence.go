package grpcapi

import (
	"strconv"

	"github.com/svc-dev/svc/transport/grpcapi/inference"
	"github.com/svc-dev/svc/transport/oip"
)

// decodeSequence reads the request's sequence parameters, Triton's:
// sequence_id (string_param, uint64_param or a non-negative int64_param),
// sequence_start, sequence_end, and svc's sequence_state (bool_param).
func decodeSequence(params map[string]*inference.InferParameter, req *oip.Request) error {
	if p, ok := params[oip.ParamSequenceID]; ok {
		switch c := p.GetParameterChoice().(type) {
		case *inference.InferParameter_StringParam:
			req.SetSequenceID(c.StringParam)
		case *inference.InferParameter_Uint64Param:
			req.SetSequenceID(strconv.FormatUint(c.Uint64Param, 10))
		case *inference.InferParameter_Int64Param:
			if c.Int64Param < 0 {
				return invalid("Invalid parameters.%s: %d is negative; expected a string_param or an uint64_param", oip.ParamSequenceID, c.Int64Param)
			}
			req.SetSequenceID(strconv.FormatInt(c.Int64Param, 10))
		default:
			return invalid("Invalid parameters.%s: expected a string_param or an uint64_param", oip.ParamSequenceID)
		}
	}
	for _, name := range []string{oip.ParamSequenceStart, oip.ParamSequenceEnd, oip.ParamSequenceState} {
		p, ok := params[name]
		if !ok {
			continue
		}
		b, isBool := p.GetParameterChoice().(*inference.InferParameter_BoolParam)
		if !isBool {
			return oip.InvalidBool(oip.Protobuf, "parameters."+name)
		}
		req.SetSequenceFlag(name, b.BoolParam)
	}
	return nil
}
