package soak

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"mime/multipart"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// root is the repository: this package is build/benchreport/soak.
var root = filepath.Join("..", "..", "..")

// testMixes are the servers' mixes, built once for the tests.
var testMixes = sync.OnceValues(func() (map[string]*mix, error) {
	out := map[string]*mix{}
	for name, spec := range servers {
		m, err := spec.mix(root, spec.model)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = m
	}
	return out, nil
})

// checkBody checks that an HTTP request of a mix is well formed: JSON that
// parses, multipart of the parts it names, a binary v2 request whose sizes
// add up; so that what the server refuses is the limit, not the form.
func checkBody(t *testing.T, r *request) {
	t.Helper()
	mt, params, _ := mime.ParseMediaType(r.ctype)
	switch {
	case r.method == "GET":
	case r.ctype == "application/json" && !strings.Contains(r.name, "malformed") && !strings.Contains(r.name, "garbage") &&
		!strings.Contains(r.name, "deep nesting") && !strings.Contains(r.name, "encoding") && !strings.Contains(r.name, "gzip"):
		if !json.Valid(r.body) {
			t.Errorf("%s: the body is not JSON: %.200s", r.name, r.body)
		}
	case mt == "multipart/form-data":
		mr := multipart.NewReader(bytes.NewReader(r.body), params["boundary"])
		n := 0
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", r.name, err)
			}
			if part.FormName() != "x" {
				t.Errorf("%s: part %q", r.name, part.FormName())
			}
			n++
		}
		if want := 2; strings.Contains(r.name, "2,000") {
			if n != 2000 {
				t.Errorf("%s: %d parts", r.name, n)
			}
		} else if n != want {
			t.Errorf("%s: %d parts, want %d", r.name, n, want)
		}
	case r.ctype == "application/octet-stream":
		var hl int
		for i := 0; i+1 < len(r.headers); i += 2 {
			if r.headers[i] == "Inference-Header-Content-Length" {
				hl, _ = strconv.Atoi(r.headers[i+1])
			}
		}
		if hl <= 0 || hl > len(r.body) {
			t.Fatalf("%s: header length %d of a body of %d", r.name, hl, len(r.body))
		}
		var head struct {
			Inputs []struct {
				Shape      []int `json:"shape"`
				Parameters struct {
					Size int `json:"binary_data_size"`
				} `json:"parameters"`
			} `json:"inputs"`
		}
		if err := json.Unmarshal(r.body[:hl], &head); err != nil || len(head.Inputs) != 1 {
			t.Fatalf("%s: header %v %.200s", r.name, err, r.body[:hl])
		}
		raw := r.body[hl:]
		if head.Inputs[0].Parameters.Size != len(raw) {
			t.Errorf("%s: binary_data_size %d, %d bytes after the header", r.name, head.Inputs[0].Parameters.Size, len(raw))
		}
		elems, err := splitPrefixed(raw)
		if err != nil || len(elems) != head.Inputs[0].Shape[0] {
			t.Errorf("%s: %d elements (%v), shape %v", r.name, len(elems), err, head.Inputs[0].Shape)
		}
	}
}

// TestMixes builds every server's mix: each kind gets picked, about half
// of the requests are valid, and every HTTP request is well formed.
func TestMixes(t *testing.T) {
	mixes, err := testMixes()
	if err != nil {
		t.Fatal(err)
	}
	for name, mx := range mixes {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			seen := map[string]bool{}
			valid := 0
			for range 20000 {
				r := mx.pick(rng)
				seen[r.name] = true
				if r.valid {
					valid++
				}
			}
			if len(seen) != len(mx.reqs) {
				t.Errorf("%d of %d kinds picked", len(seen), len(mx.reqs))
			}
			if valid < 8000 || valid > 14000 {
				t.Errorf("%d of 20000 valid, want about half", valid)
			}
			for _, r := range mx.reqs {
				if r.weight <= 0 || (r.flow == nil && r.path == "" && r.method != "GET") {
					t.Errorf("%s: weight %d, path %q", r.name, r.weight, r.path)
				}
				if r.flow == nil {
					checkBody(t, r)
				}
			}
		})
	}
	if _, err := basicMix(root, "other"); err == nil {
		t.Error("a mix for an unknown model")
	}
}

// TestAttackSizes: the attacks are as large as the findings.
func TestAttackSizes(t *testing.T) {
	count := func(body []byte, input string) int {
		var m map[string][]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		return len(m[input])
	}
	mixes, err := testMixes()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*request{}
	for _, name := range []string{"cls", "text-embed", "running_sum"} {
		for _, r := range mixes[name].reqs {
			byName[r.name] = r
		}
	}
	for name, want := range map[string]int{
		"260,000 one-pixel GIFs, v1 JSON":               260_000,
		"2,000 one-pixel GIFs, v1 JSON":                 2000,
		"100,000 texts, one long, v1 JSON":              100_000,
		"a million one-letter texts, v1 JSON":           1_000_000,
		"v1 JSON, 64 one-pixel GIFs (the most allowed)": 64,
	} {
		r := byName[name]
		if r == nil {
			t.Fatalf("no %q", name)
		}
		input := "x"
		if strings.Contains(name, "texts") {
			input = "text"
		}
		if got := count(r.body, input); got != want {
			t.Errorf("%s: %d, want %d", name, got, want)
		}
	}
	var body struct {
		Parameters struct {
			ID    string `json:"sequence_id"`
			Start bool   `json:"sequence_start"`
			End   bool   `json:"sequence_end"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(byName["a sequence id of 8 MB, v2 JSON"].body, &body); err != nil || len(body.Parameters.ID) != 8<<20 || !body.Parameters.Start || !body.Parameters.End {
		t.Errorf("the 8 MB id: %d bytes, %v", len(body.Parameters.ID), err)
	}
}

// decodeInfer reads back what inferRequest encodes.
func decodeInfer(t *testing.T, msg []byte) (model string, params map[string][]byte, inputs [][]byte, raw [][]byte) {
	t.Helper()
	one := func(b []byte, f int) []byte {
		v, err := pbField(b, f)
		if err != nil || len(v) != 1 {
			t.Fatalf("field %d: %d values, %v", f, len(v), err)
		}
		return v[0]
	}
	model = string(one(msg, 1))
	entries, err := pbField(msg, 4)
	if err != nil {
		t.Fatal(err)
	}
	params = map[string][]byte{}
	for _, e := range entries {
		params[string(one(e, 1))] = one(e, 2)
	}
	if inputs, err = pbField(msg, 5); err != nil {
		t.Fatal(err)
	}
	if raw, err = pbField(msg, 7); err != nil {
		t.Fatal(err)
	}
	return model, params, inputs, raw
}

func TestInferRequest(t *testing.T) {
	msg := inferRequest("running_sum", []param{{"sequence_id", "soak-1"}, {"sequence_start", true}, {"n", uint64(300)}},
		tensorIn{name: "x", datatype: "FP32", shape: []int64{1, 1}, fp32: []float32{2.5}},
		tensorIn{name: "text", datatype: "BYTES", shape: []int64{2}, raw: lengthPrefixed([]byte("a"), []byte("bc")), hasRaw: true})
	model, params, inputs, raw := decodeInfer(t, msg)
	if model != "running_sum" || len(inputs) != 2 || len(raw) != 1 {
		t.Fatalf("model %q, %d inputs, %d raw", model, len(inputs), len(raw))
	}
	if p := params["sequence_id"]; !bytes.Equal(p, []byte("\x1a\x06soak-1")) {
		t.Errorf("sequence_id %q", p)
	}
	if p := params["sequence_start"]; !bytes.Equal(p, []byte{0x08, 1}) {
		t.Errorf("sequence_start %q", p)
	}
	if p := params["n"]; !bytes.Equal(p, []byte{0x28, 0xac, 0x02}) {
		t.Errorf("n %x", p)
	}
	x := inputs[0]
	name, _ := pbField(x, 1)
	dt, _ := pbField(x, 2)
	shape, _ := pbField(x, 3)
	contents, _ := pbField(x, 5)
	if string(name[0]) != "x" || string(dt[0]) != "FP32" || !bytes.Equal(shape[0], []byte{1, 1}) || len(contents) != 1 {
		t.Fatalf("input x: %q %q %v %d", name, dt, shape, len(contents))
	}
	fp32, _ := pbField(contents[0], 6)
	if len(fp32) != 1 || binary.LittleEndian.Uint32(fp32[0]) != f32bits(2.5) {
		t.Errorf("fp32_contents %x", fp32)
	}
	if got, err := splitPrefixed(raw[0]); err != nil || strings.Join(got, ",") != "a,bc" {
		t.Errorf("raw BYTES %q, %v", got, err)
	}
	if _, err := pbField([]byte{0x0a, 0x05, 'a'}, 1); err == nil {
		t.Error("a length past the end: no error")
	}
}

// TestChecksOfAnswers runs the valid requests' checks on real answers
// (as svc writes them) and on wrong ones.
func TestChecksOfAnswers(t *testing.T) {
	tests := []struct {
		name  string
		check func([]byte) error
		body  string
		ok    bool
	}{
		{"v1 labels", v1Labels("0", "180"), `{"softmax_0.tmp_0":[[{"label":"0","index":0,"score":1}],[{"label":"180","index":1,"score":1}]]}`, true},
		{"v1 labels swapped", v1Labels("0", "180"), `{"softmax_0.tmp_0":[[{"label":"180","index":1,"score":1}],[{"label":"0","index":0,"score":1}]]}`, false},
		{"v1 labels, one missing", v1Labels("0", "180"), `{"softmax_0.tmp_0":[[{"label":"0","index":0,"score":1}]]}`, false},
		{"v2 labels", v2Labels("180"), `{"model_name":"cls","model_version":"1","outputs":[{"name":"softmax_0.tmp_0","datatype":"BYTES","shape":[1,1],"data":["1.000000:1:180"]}]}`, true},
		{"v2 labels wrong", v2Labels("0"), `{"outputs":[{"name":"softmax_0.tmp_0","datatype":"BYTES","shape":[1,1],"data":["1.000000:1:180"]}]}`, false},
		{"embeddings", embeddings(2, 3), `{"embedding":[[1,2,3],[4,5,6]]}`, true},
		{"embeddings short", embeddings(2, 3), `{"embedding":[[1,2,3],[4,5]]}`, false},
		{"v2 shape", v2Shape("embedding", 2, 32), `{"outputs":[{"name":"embedding","datatype":"FP32","shape":[2,32],"data":[]}]}`, true},
		{"v2 shape wrong", v2Shape("embedding", 2, 32), `{"outputs":[{"name":"embedding","datatype":"FP32","shape":[1,32],"data":[]}]}`, false},
		{"an error", v2Shape("embedding", 2, 32), `{"error":"no"}`, false},
	}
	for _, tt := range tests {
		if err := tt.check([]byte(tt.body)); (err == nil) != tt.ok {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}
