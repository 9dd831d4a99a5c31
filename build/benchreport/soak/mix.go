package soak

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
)

// request is one kind of request in a traffic mix.
type request struct {
	name    string
	valid   bool
	weight  int
	method  string
	path    string
	ctype   string
	headers []string
	body    []byte
	// want is a substring of a valid request's 200 body.
	want string
}

// mix is a weighted list of requests.
type mix struct {
	reqs  []*request
	total int
}

func (m *mix) pick(rng *rand.Rand) *request {
	n := rng.IntN(m.total)
	for _, r := range m.reqs {
		if n < r.weight {
			return r
		}
		n -= r.weight
	}
	return m.reqs[len(m.reqs)-1]
}

// mixFor returns the traffic mix for a model file: valid v1 and v2 requests
// (JSON, gzip, binary where it is simple) and a spread of bad ones.
func mixFor(model string) (*mix, error) {
	name := strings.TrimSuffix(filepath.Base(model), ".onnx")
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
		return nil, fmt.Errorf("no traffic mix for model %q (the soak knows classifier and multi_input)", name)
	}
	for _, r := range valid {
		r.valid, r.method, r.ctype = true, "POST", "application/json"
	}
	m := &mix{reqs: valid}
	bad := func(name, method, path, ctype string, body []byte, weight int, headers ...string) {
		m.reqs = append(m.reqs, &request{name: name, weight: weight, method: method, path: path, ctype: ctype, body: body, headers: headers})
	}
	for i, b := range v1Bad {
		bad(fmt.Sprintf("v1 bad input %d", i), "POST", "/predict", "application/json", []byte(b), 3)
	}
	bad("malformed JSON", "POST", "/predict", "application/json", []byte(`{"input": [[1, 2`), 3)
	bad("trailing garbage", "POST", "/predict", "application/json", []byte(`{} x`), 2)
	bad("not an object", "POST", "/predict", "application/json", []byte(`[1, 2, 3]`), 2)
	bad("deep nesting", "POST", "/predict", "application/json", []byte(`{"input": `+strings.Repeat("[", 20000)+`}`), 1)
	bad("wrong content type", "POST", "/predict", "text/plain", []byte(`{}`), 2)
	bad("unknown encoding", "POST", "/predict", "application/json", []byte(`{}`), 1, "Content-Encoding", "br")
	bad("gzip bomb", "POST", "/predict", "application/json", gzipped(strings.Repeat(" ", 20<<20)), 1, "Content-Encoding", "gzip")
	bad("wrong method", "GET", "/predict", "", nil, 2)
	bad("unknown path", "POST", "/nope", "application/json", []byte(`{}`), 2)
	bad("v2 malformed", "POST", infer, "application/json", []byte(`{"inputs": [`), 2)
	bad("v2 unknown input", "POST", infer, "application/json", []byte(`{"inputs":[{"name":"zz","datatype":"FP32","shape":[1],"data":[1]}]}`), 2)
	bad("v2 wrong model", "POST", "/v2/models/nope/infer", "application/json", []byte(`{"inputs":[]}`), 1)
	for _, r := range m.reqs {
		m.total += r.weight
	}
	return m, nil
}
