package oip

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

// Client calls the v2 API of an svc (or any Open Inference Protocol)
// server: the tests and benchmarks use it.
type Client struct {
	base string
	hc   *http.Client
}

// NewClient returns a client of the server at baseURL (http://host:port).
// A nil hc means http.DefaultClient.
func NewClient(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: strings.TrimSuffix(baseURL, "/"), hc: hc}
}

// StatusError is a non-200 answer: its status and the {"error"} message
// (or the start of the body when it has none).
type StatusError struct {
	Method, Path string
	Status       int
	Message      string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s answered %d: %s", e.Method, e.Path, e.Status, e.Message)
}

// InferInput is one input tensor of a request.
type InferInput struct {
	Name   string
	Tensor *tensor.Tensor
	// Binary sends the tensor as binary data after the JSON.
	Binary bool
}

// InferOutput asks for one output.
type InferOutput struct {
	Name string
	// Binary asks for the output as binary data.
	Binary bool
}

// InferRequest is an inference request.
type InferRequest struct {
	ID string
	// Parameters is sent as the request's "parameters" (nil: none).
	Parameters map[string]any
	Inputs     []InferInput
	// Outputs names the outputs wanted (nil: all, as JSON unless
	// BinaryOutput).
	Outputs []InferOutput
	// BinaryOutput sets parameters.binary_data_output.
	BinaryOutput bool
}

// OutputTensor is one output of a response.
type OutputTensor struct {
	Name string
	*tensor.Tensor
	// Binary is whether it came as binary data.
	Binary bool
}

// InferResponse is a decoded inference response.
type InferResponse struct {
	ModelName    string
	ModelVersion string
	ID           string
	Parameters   json.RawMessage
	Outputs      []OutputTensor
}

// Output returns the output called name, or nil.
func (r *InferResponse) Output(name string) *OutputTensor {
	for i := range r.Outputs {
		if r.Outputs[i].Name == name {
			return &r.Outputs[i]
		}
	}
	return nil
}

// EncodeInfer encodes req as a request body; headerLen is the length of
// its JSON part when binary data follows (-1 when the body is all JSON).
func EncodeInfer(req *InferRequest) (body []byte, headerLen int, err error) {
	var bin []byte
	b := []byte{'{'}
	if req.ID != "" {
		b = append(jsonString(append(b, `"id":`...), req.ID), ',')
	}
	params := req.Parameters
	if req.BinaryOutput {
		params = make(map[string]any, len(req.Parameters)+1)
		for k, v := range req.Parameters {
			params[k] = v
		}
		params["binary_data_output"] = true
	}
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return nil, 0, fmt.Errorf("encode parameters: %w", err)
		}
		b = append(append(append(b, `"parameters":`...), p...), ',')
	}
	b = append(b, `"inputs":[`...)
	for i, in := range req.Inputs {
		t := in.Tensor
		dt := Datatype(t.DType)
		if dt == "" {
			return nil, 0, fmt.Errorf("input %q: unsupported dtype %v", in.Name, t.DType)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonString(append(b, `{"name":`...), in.Name)
		b = append(b, `,"shape":[`...)
		for k, d := range t.Shape {
			if k > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, d, 10)
		}
		b = append(append(append(b, `],"datatype":"`...), dt...), '"')
		if in.Binary {
			n := len(bin)
			bin = AppendBinary(bin, t)
			b = append(b, `,"parameters":{"binary_data_size":`...)
			b = strconv.AppendInt(b, int64(len(bin)-n), 10)
			b = append(b, "}}"...)
			continue
		}
		b = append(b, `,"data":`...)
		b = tensorjson.AppendJSON(b, &tensor.Tensor{DType: t.DType, Shape: []int64{int64(t.Len())}, Data: t.Data})
		b = append(b, '}')
	}
	b = append(b, ']')
	if req.Outputs != nil {
		b = append(b, `,"outputs":[`...)
		for i, o := range req.Outputs {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonString(append(b, `{"name":`...), o.Name)
			if o.Binary {
				b = append(b, `,"parameters":{"binary_data":true}`...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, '}')
	if bin == nil {
		return b, -1, nil
	}
	return append(b, bin...), len(b), nil
}

// InferPath is the inference path of model (and version, if not "").
func InferPath(model, version string) string {
	p := "/v2/models/" + url.PathEscape(model)
	if version != "" {
		p += "/versions/" + url.PathEscape(version)
	}
	return p + "/infer"
}

// Infer runs req on model.
func (c *Client) Infer(ctx context.Context, model string, req *InferRequest) (*InferResponse, error) {
	body, hl, err := EncodeInfer(req)
	if err != nil {
		return nil, err
	}
	return c.InferBody(ctx, InferPath(model, ""), body, hl)
}

// InferBody posts an encoded request body to path (see EncodeInfer and
// InferPath) and decodes the answer.
func (c *Client) InferBody(ctx context.Context, path string, body []byte, headerLen int) (*InferResponse, error) {
	resp, err := c.Post(ctx, path, body, headerLen)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read the answer of %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, statusError(http.MethodPost, path, resp.StatusCode, data)
	}
	return DecodeResponse(data, resp.Header.Get(HeaderInferenceHeaderLength))
}

// Post sends an inference body as it is (headerLen < 0: all JSON) and
// returns the raw answer; the caller closes its body.
func (c *Client) Post(ctx context.Context, path string, body []byte, headerLen int) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = RequestHeader(headerLen)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", path, err)
	}
	return resp, nil
}

// RequestHeader is the header of an inference request whose body has a
// JSON part of headerLen bytes followed by binary data, or is all JSON
// when headerLen < 0.
func RequestHeader(headerLen int) http.Header {
	if headerLen >= 0 {
		return http.Header{
			"Content-Type":              {"application/octet-stream"},
			HeaderInferenceHeaderLength: {strconv.Itoa(headerLen)},
		}
	}
	return http.Header{"Content-Type": {"application/json"}}
}

// DecodeResponse decodes an inference response body; headerLen is its
// Inference-Header-Content-Length header ("" when the body is all JSON).
func DecodeResponse(body []byte, headerLen string) (*InferResponse, error) {
	header, bin := body, []byte(nil)
	if headerLen != "" {
		n, err := strconv.Atoi(headerLen)
		if err != nil || n < 0 || n > len(body) {
			return nil, fmt.Errorf("bad %s %q for a %d-byte body", HeaderInferenceHeaderLength, headerLen, len(body))
		}
		header, bin = body[:n], body[n:]
	}
	var wire struct {
		ModelName    string          `json:"model_name"`
		ModelVersion string          `json:"model_version"`
		ID           string          `json:"id"`
		Parameters   json.RawMessage `json:"parameters"`
		Outputs      []struct {
			Name       string          `json:"name"`
			Datatype   string          `json:"datatype"`
			Shape      []int64         `json:"shape"`
			Data       json.RawMessage `json:"data"`
			Parameters struct {
				BinaryDataSize *int64 `json:"binary_data_size"`
			} `json:"parameters"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(header, &wire); err != nil {
		return nil, fmt.Errorf("decode the response: %w", err)
	}
	out := &InferResponse{ModelName: wire.ModelName, ModelVersion: wire.ModelVersion, ID: wire.ID, Parameters: wire.Parameters}
	for _, o := range wire.Outputs {
		dt, ok := ParseDatatype(o.Datatype)
		if !ok {
			return nil, fmt.Errorf("output %q: unknown datatype %q", o.Name, o.Datatype)
		}
		var t *tensor.Tensor
		if size := o.Parameters.BinaryDataSize; size != nil {
			if *size < 0 || *size > int64(len(bin)) {
				return nil, fmt.Errorf("output %q: binary_data_size %d, %d bytes left", o.Name, *size, len(bin))
			}
			var err error
			if t, err = DecodeBinary(o.Name, dt, o.Shape, bin[:*size]); err != nil {
				return nil, fmt.Errorf("output %q: %w", o.Name, err)
			}
			bin = bin[*size:]
		} else {
			d := tensorjson.NewDecoder(o.Data, 1)
			var err error
			t, err = d.Flat(&tensor.Spec{Name: o.Name, DType: dt}, o.Shape)
			d.Release()
			if err != nil {
				return nil, fmt.Errorf("output %q: %w", o.Name, err)
			}
		}
		out.Outputs = append(out.Outputs, OutputTensor{Name: o.Name, Tensor: t, Binary: o.Parameters.BinaryDataSize != nil})
	}
	if len(bin) != 0 {
		return nil, fmt.Errorf("%d bytes of binary data left after the outputs", len(bin))
	}
	return out, nil
}

// ServerMetadata reads GET /v2.
func (c *Client) ServerMetadata(ctx context.Context) (ServerMetadata, error) {
	var m ServerMetadata
	return m, c.get(ctx, PathServer, &m)
}

// ModelMetadata reads GET /v2/models/{model}.
func (c *Client) ModelMetadata(ctx context.Context, model string) (ModelMetadata, error) {
	var m ModelMetadata
	return m, c.get(ctx, "/v2/models/"+url.PathEscape(model), &m)
}

// Live asks GET /v2/health/live.
func (c *Client) Live(ctx context.Context) error { return c.get(ctx, PathLive, nil) }

// Ready asks GET /v2/health/ready: nil when ready, else a *StatusError.
func (c *Client) Ready(ctx context.Context) error { return c.get(ctx, PathReady, nil) }

// ModelReady asks GET /v2/models/{model}/ready.
func (c *Client) ModelReady(ctx context.Context, model string) error {
	return c.get(ctx, "/v2/models/"+url.PathEscape(model)+"/ready", nil)
}

func (c *Client) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return statusError(http.MethodGet, path, resp.StatusCode, body)
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: not the JSON expected: %w", path, err)
	}
	return nil
}

func statusError(method, path string, status int, body []byte) error {
	var e struct {
		Error string `json:"error"`
	}
	msg := strings.TrimSpace(string(body[:min(len(body), 4096)]))
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		msg = e.Error
	}
	return &StatusError{Method: method, Path: path, Status: status, Message: msg}
}
