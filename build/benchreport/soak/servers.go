package soak

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// server is one kind of server the soak runs: how svc serves it and the
// traffic it gets.
type server struct {
	// args follow "svc serve"; paths in them are relative to the
	// repository.
	args []string
	// model is the name the Open Inference Protocol serves it under.
	model string
	// limits: the servers' limits.max_body_size is the soak's -max-body
	// (a small one: the gzip bomb is refused early); the others take
	// svc's defaults, which the attacks are aimed at.
	limits bool
	// grpc: the server serves gRPC too (--grpc-port), which the mix uses.
	grpc bool
	// stream: the stateful model's WebSocket stream, which pools of idle
	// and half-sent connections attack beside the mix.
	stream bool
	mix    func(root, model string) (*mix, error)
}

// servers are the servers the soak knows, by the name -servers takes.
var servers = map[string]server{
	"classifier":  {args: []string{"testdata/models/classifier.onnx"}, model: "classifier", limits: true, mix: basicMix},
	"multi_input": {args: []string{"testdata/models/multi_input.onnx"}, model: "multi_input", limits: true, mix: basicMix},
	// PaddleOCR's direction classifier with its image input, as
	// examples/ocr/svc.yml declares it: the picture attacks.
	"cls": {args: []string{"cls", "--config", "examples/ocr/svc.yml"}, model: "cls", grpc: true, mix: pictureMix},
	// A sentence-embedding model that takes texts: the text attacks.
	"text-embed": {args: []string{"examples/text-embed"}, model: "text-embed", grpc: true, mix: textMix},
	// A stateful model: sequences over every protocol, long sequence
	// ids, idle and half-sent WebSocket streams.
	"running_sum": {args: []string{"testdata/models/running_sum.onnx"}, model: "running_sum", grpc: true, stream: true, mix: sequenceMix},
}

func serverNames() string {
	var out []string
	for k := range servers {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// serveArgs are the arguments after "svc serve" for a server, with its
// paths resolved against the repository.
func (s server) serveArgs(root string) []string {
	out := make([]string, len(s.args))
	for i, a := range s.args {
		if strings.Contains(a, "/") && !filepath.IsAbs(a) {
			a = filepath.Join(root, a)
		}
		out[i] = a
	}
	return out
}

// basicMix is the mix of the tiny models: valid v1 and v2 requests (JSON,
// gzip) and a spread of malformed ones.
func basicMix(_, name string) (*mix, error) {
	infer := "/v2/models/" + name + "/infer"
	var valid []*request
	var v1Bad []string
	switch name {
	case "classifier":
		body := `{"input": [[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3]]}`
		v2 := `{"inputs":[{"name":"input","datatype":"FP32","shape":[2,4],"data":[5.1,3.5,1.4,0.2,6.7,3.0,5.2,2.3]}]}`
		valid = []*request{
			{name: "v1", weight: 30, path: "/predict", body: []byte(body), want: `"label":[0,2]`},
			{name: "v1 gzip", weight: 5, path: "/predict", body: gzipped(body), headers: []string{"Content-Encoding", "gzip"}, want: `"label":[0,2]`},
			{name: "v2", weight: 15, path: infer, body: []byte(v2), want: `"data":[0,2]`},
			{name: "v2 gzip", weight: 5, path: infer, body: gzipped(v2), headers: []string{"Content-Encoding", "gzip"}, want: `"data":[0,2]`},
		}
		v1Bad = []string{
			`{"input": [[1, 2, 3]]}`, `{"input": "x"}`, `{"wrong": [[1,2,3,4]]}`, `{"input": []}`,
			`{"input": [[1e400, 1, 2, 3]]}`, `{"input": [[1,2,3,4],[1,2]]}`,
		}
	case "multi_input":
		body := `{"features": [[1, 2, 3]], "ids": [[1, 2]], "mask": [[true, false]], "text": ["grüße"]}`
		v2 := `{"inputs":[{"name":"features","datatype":"FP32","shape":[1,3],"data":[1,2,3]},{"name":"ids","datatype":"INT64","shape":[1,2],"data":[1,2]},{"name":"mask","datatype":"BOOL","shape":[1,2],"data":[true,false]},{"name":"text","datatype":"BYTES","shape":[1],"data":["grüße"]}]}`
		valid = []*request{
			{name: "v1", weight: 30, path: "/predict", body: []byte(body), want: `"text_upper":["GRÜßE"]`},
			{name: "v1 gzip", weight: 5, path: "/predict", body: gzipped(body), headers: []string{"Content-Encoding", "gzip"}, want: `"id_sum":[3]`},
			{name: "v2", weight: 15, path: infer, body: []byte(v2), want: `"GRÜßE"`},
			{name: "v2 gzip", weight: 5, path: infer, body: gzipped(v2), headers: []string{"Content-Encoding", "gzip"}, want: `"GRÜßE"`},
		}
		v1Bad = []string{
			`{"features": [], "ids": [], "mask": [], "text": []}`,
			`{"features": [[1, 2, 3]], "ids": [[1, 2.5]], "mask": [[true, false]], "text": ["a"]}`,
			`{"features": [[1, 2, 3]], "ids": [[1, 2]], "mask": [[1, 0]], "text": ["a"]}`,
			"{\"features\": [[1, 2, 3]], \"ids\": [[1, 2]], \"mask\": [[true, false]], \"text\": [\"\xff\"]}",
			`{"features": [[1, 2, 3]], "ids": [[1, 2], [3, 4]], "mask": [[true, false]], "text": ["a"]}`,
			`{"features": [[1, 2, 3]], "ids": [[1, 9223372036854775808]], "mask": [[true, false]], "text": ["a"]}`,
		}
	default:
		return nil, fmt.Errorf("no basic traffic mix for model %q", name)
	}
	for _, r := range valid {
		r.valid, r.method, r.ctype = true, "POST", "application/json"
	}
	reqs := valid
	for i, b := range v1Bad {
		reqs = append(reqs, bad(fmt.Sprintf("v1 bad input %d", i), "/predict", "application/json", []byte(b), 3))
	}
	reqs = append(reqs, malformed(infer)...)
	return newMix(reqs), nil
}

// bad is a POST that must be refused.
func bad(name, path, ctype string, body []byte, weight int, headers ...string) *request {
	return &request{name: name, weight: weight, method: "POST", path: path, ctype: ctype, body: body, headers: headers}
}

// malformed are requests that no model takes: broken JSON, the wrong
// method, path, type or encoding, a gzip bomb.
func malformed(infer string) []*request {
	reqs := []*request{
		bad("malformed JSON", "/predict", "application/json", []byte(`{"input": [[1, 2`), 3),
		bad("trailing garbage", "/predict", "application/json", []byte(`{} x`), 2),
		bad("not an object", "/predict", "application/json", []byte(`[1, 2, 3]`), 2),
		bad("deep nesting", "/predict", "application/json", []byte(`{"input": `+strings.Repeat("[", 20000)+`}`), 1),
		bad("wrong content type", "/predict", "text/plain", []byte(`{}`), 2),
		bad("unknown encoding", "/predict", "application/json", []byte(`{}`), 1, "Content-Encoding", "br"),
		bad("gzip bomb", "/predict", "application/json", gzipped(strings.Repeat(" ", 20<<20)), 1, "Content-Encoding", "gzip"),
		{name: "wrong method", weight: 2, method: "GET", path: "/predict"},
		bad("unknown path", "/nope", "application/json", []byte(`{}`), 2),
		bad("v2 malformed", infer, "application/json", []byte(`{"inputs": [`), 2),
		bad("v2 unknown input", infer, "application/json", []byte(`{"inputs":[{"name":"zz","datatype":"FP32","shape":[1],"data":[1]}]}`), 2),
		bad("v2 wrong model", "/v2/models/nope/infer", "application/json", []byte(`{"inputs":[]}`), 1),
	}
	return reqs
}
