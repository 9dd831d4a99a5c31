package soak

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
)

// The soak speaks the Open Inference Protocol's gRPC (ModelInfer) with the
// standard library alone: HTTP/2 without TLS, gRPC's length-prefixed
// messages and a few protobuf messages encoded by hand, so that its module
// needs neither grpc-go nor the product's generated code.

const modelInferPath = "/inference.GRPCInferenceService/ModelInfer"

// gRPC status codes, by number, as the soak names them.
var grpcCodes = []string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
	"OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

func grpcCodeName(c int) string {
	if c >= 0 && c < len(grpcCodes) {
		return grpcCodes[c]
	}
	return "code " + strconv.Itoa(c)
}

// newGRPCClient is an HTTP/2 client without TLS (prior knowledge), as gRPC
// servers without TLS take.
func newGRPCClient() *http.Client {
	tr := &http.Transport{Protocols: new(http.Protocols), DisableCompression: true}
	tr.Protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: tr}
}

// grpcCall sends one unary call: msg, framed, to path; it answers the
// status code, its message and the response message.
func grpcCall(ctx context.Context, c *http.Client, addr, path string, msg []byte) (code int, message string, resp []byte, err error) {
	body := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(body[1:], uint32(len(msg)))
	body = append(body, msg...)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+path, bytes.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	r, err := c.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer r.Body.Close()
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return 0, "", nil, err
	}
	if r.StatusCode != http.StatusOK {
		return 0, "", nil, fmt.Errorf("gRPC over HTTP %d", r.StatusCode)
	}
	status := r.Trailer.Get("Grpc-Status")
	message = r.Trailer.Get("Grpc-Message")
	if status == "" { // a trailers-only answer: the status in the headers
		status, message = r.Header.Get("Grpc-Status"), r.Header.Get("Grpc-Message")
	}
	code, err = strconv.Atoi(status)
	if err != nil {
		return 0, "", nil, fmt.Errorf("no grpc-status (%q)", status)
	}
	if m, err := url.PathUnescape(message); err == nil {
		message = m
	}
	if len(data) >= 5 {
		n := int(binary.BigEndian.Uint32(data[1:5]))
		if n > len(data)-5 {
			return 0, "", nil, errors.New("a gRPC message cut short")
		}
		resp = data[5 : 5+n]
	}
	return code, message, resp, nil
}

// Protobuf encoding, the little that ModelInferRequest needs.

func pbTag(b []byte, field, wire int) []byte { return binary.AppendUvarint(b, uint64(field<<3|wire)) }

func pbVarint(b []byte, field int, v uint64) []byte {
	return binary.AppendUvarint(pbTag(b, field, 0), v)
}

func pbBytes(b []byte, field int, v []byte) []byte {
	b = binary.AppendUvarint(pbTag(b, field, 2), uint64(len(v)))
	return append(b, v...)
}

// param is one entry of a map<string, InferParameter>: a bool, a string
// or an unsigned integer.
type param struct {
	key string
	val any
}

func pbParams(b []byte, field int, ps []param) []byte {
	for _, p := range ps {
		var v []byte
		switch x := p.val.(type) {
		case bool:
			n := uint64(0)
			if x {
				n = 1
			}
			v = pbVarint(nil, 1, n)
		case string:
			v = pbBytes(nil, 3, []byte(x))
		case uint64:
			v = pbVarint(nil, 5, x)
		default:
			panic(fmt.Sprintf("parameter %s: %T", p.key, p.val))
		}
		entry := pbBytes(nil, 1, []byte(p.key))
		entry = pbBytes(entry, 2, v)
		b = pbBytes(b, field, entry)
	}
	return b
}

// tensorIn is one input of a ModelInferRequest: BYTES elements or FP32
// values in the typed contents, or raw bytes (raw_input_contents).
type tensorIn struct {
	name, datatype string
	shape          []int64
	bytes          [][]byte
	fp32           []float32
	raw            []byte
	hasRaw         bool
}

// inferRequest encodes a ModelInferRequest.
func inferRequest(model string, params []param, inputs ...tensorIn) []byte {
	b := pbBytes(nil, 1, []byte(model))
	b = pbParams(b, 4, params)
	for _, in := range inputs {
		t := pbBytes(nil, 1, []byte(in.name))
		t = pbBytes(t, 2, []byte(in.datatype))
		var shape []byte
		for _, d := range in.shape {
			shape = binary.AppendUvarint(shape, uint64(d))
		}
		t = pbBytes(t, 3, shape)
		var contents []byte
		for _, e := range in.bytes {
			contents = pbBytes(contents, 8, e)
		}
		if len(in.fp32) > 0 {
			var packed []byte
			for _, f := range in.fp32 {
				packed = binary.LittleEndian.AppendUint32(packed, math.Float32bits(f))
			}
			contents = pbBytes(contents, 6, packed)
		}
		if contents != nil {
			t = pbBytes(t, 5, contents)
		}
		b = pbBytes(b, 5, t)
	}
	for _, in := range inputs {
		if in.hasRaw {
			b = pbBytes(b, 7, in.raw)
		}
	}
	return b
}

// pbField lists the values of the length-delimited field of a message
// (its top level only); other fields are skipped.
func pbField(msg []byte, field int) ([][]byte, error) {
	var out [][]byte
	for len(msg) > 0 {
		tag, n := binary.Uvarint(msg)
		if n <= 0 {
			return nil, errors.New("protobuf: a bad tag")
		}
		msg = msg[n:]
		switch tag & 7 {
		case 0:
			_, n = binary.Uvarint(msg)
			if n <= 0 {
				return nil, errors.New("protobuf: a bad varint")
			}
			msg = msg[n:]
		case 1, 5:
			w := 8
			if tag&7 == 5 {
				w = 4
			}
			if len(msg) < w {
				return nil, errors.New("protobuf: cut short")
			}
			msg = msg[w:]
		case 2:
			l, n := binary.Uvarint(msg)
			if n <= 0 || l > uint64(len(msg)-n) {
				return nil, errors.New("protobuf: a bad length")
			}
			if int(tag>>3) == field {
				out = append(out, msg[n:n+int(l)])
			}
			msg = msg[n+int(l):]
		default:
			return nil, fmt.Errorf("protobuf: wire type %d", tag&7)
		}
	}
	return out, nil
}

// rawOutputs are a ModelInferResponse's raw_output_contents.
func rawOutputs(resp []byte) ([][]byte, error) { return pbField(resp, 6) }

// lengthPrefixed is BYTES elements as raw contents: each a 4-byte
// little-endian length and its bytes.
func lengthPrefixed(elems ...[]byte) []byte {
	var b []byte
	for _, e := range elems {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(e)))
		b = append(b, e...)
	}
	return b
}
