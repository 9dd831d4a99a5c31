package main_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// adversarialCase is one hostile (or borderline valid) request and the
// answer it must get.
type adversarialCase struct {
	name    string
	srv     *server
	method  string // POST when empty
	path    string // /predict when empty
	ctype   string // application/json when empty; "-" for none
	body    []byte
	headers []string
	status  int
	// want are substrings the error message must hold: the input at fault,
	// quoted, wherever one is.
	want []string
	// form is the error body's one key: "detail" (v1 paths) or "error"
	// (/v2 paths, the router's 404 and 405 there included).
	form string
}

func gz(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write([]byte(s))
	_ = zw.Close()
	return b.Bytes()
}

// v2in writes one v2 JSON input.
func v2in(name, datatype, shape, data string) string {
	return `{"name":"` + name + `","datatype":"` + datatype + `","shape":` + shape + `,"data":` + data + `}`
}

func v2body(inputs ...string) string { return `{"inputs":[` + strings.Join(inputs, ",") + `]}` }

// v2bin builds a binary-extension body: the JSON header, then raw bytes.
func v2bin(header string, raw []byte) ([]byte, string) {
	return append([]byte(header), raw...), strconv.Itoa(len(header))
}

func f32bytes(vs ...float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// TestAdversarialRequests sends hostile requests through the real binary,
// on v1 /predict and on the v2 inference endpoint (JSON and binary
// extension), to models of every input kind: each must get the right
// status and a JSON error that names the input at fault, and the servers
// must keep answering valid requests correctly afterwards.
func TestAdversarialRequests(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(cfg, []byte("limits:\n  max_body_size: 1MiB\n  max_string_length: 64KiB\n  read_timeout: 3s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := func(m string) *server { return startServer(t, model(m), "-c", cfg) }
	classifier := start("classifier.onnx")
	multi := start("multi_input.onnx")
	alltypes := start("alltypes.onnx")
	scalars := start("scalars.onnx")
	special := start("scalars_special.onnx")
	fixed := start("fixed_shape.onnx")
	zero := start("zero_dims.onnx")

	const row = `[5.1, 3.5, 1.4, 0.2]`
	cls := func(v string) string { return `{"input": ` + v + `}` }
	validCls := cls(`[` + row + `]`)
	multiWith := func(field, value string) string {
		vals := map[string]string{"features": `[[1,2,3],[4,5,6]]`, "ids": `[[1,2],[3,4]]`, "mask": `[[true,false],[false,true]]`, "text": `["a","b"]`}
		if field != "" {
			vals[field] = value
		}
		var parts []string
		for _, k := range []string{"features", "ids", "mask", "text"} {
			if vals[k] != "-" {
				parts = append(parts, `"`+k+`": `+vals[k])
			}
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	validMulti := multiWith("", "")
	allWith := func(field, value string) string {
		vals := map[string]string{"f64": "[1]", "i8": "[1]", "i16": "[1]", "i32": "[1]", "u8": "[1]", "u16": "[1]", "u32": "[1]", "u64": "[1]"}
		vals[field] = value
		var parts []string
		for _, k := range []string{"f64", "i8", "i16", "i32", "u8", "u16", "u32", "u64"} {
			parts = append(parts, `"`+k+`": `+vals[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	scalarNames := []string{"f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool"}
	scalarWith := func(field, value string) string {
		var parts []string
		for _, k := range scalarNames {
			v := "1"
			if k == "bool" {
				v = "true"
			}
			if k == field {
				v = value
			}
			parts = append(parts, `"`+k+`": `+v)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	specialWith := func(field, value string) string {
		vals := map[string]string{"f16": "1.5", "bf16": "2.5", "str": `"hi"`}
		vals[field] = value
		return `{"f16": ` + vals["f16"] + `, "bf16": ` + vals["bf16"] + `, "str": ` + vals["str"] + `}`
	}
	image := func(n, c, h, w int) string {
		px := "[" + strings.TrimSuffix(strings.Repeat("1,", w), ",") + "]"
		rows := "[" + strings.TrimSuffix(strings.Repeat(px+",", h), ",") + "]"
		chans := "[" + strings.TrimSuffix(strings.Repeat(rows+",", c), ",") + "]"
		return `{"image": [` + strings.TrimSuffix(strings.Repeat(chans+",", n), ",") + `]}`
	}

	var cases []adversarialCase
	add := func(c adversarialCase) { cases = append(cases, c) }
	// v1 adds a /predict case.
	v1 := func(name string, s *server, body string, status int, want ...string) {
		add(adversarialCase{name: "v1/" + name, srv: s, body: []byte(body), status: status, want: want, form: "detail"})
	}
	v1h := func(name string, s *server, ctype string, body []byte, headers []string, status int, want ...string) {
		add(adversarialCase{name: "v1/" + name, srv: s, ctype: ctype, body: body, headers: headers, status: status, want: want, form: "detail"})
	}
	// v2 adds a JSON /v2/models/{name}/infer case.
	v2 := func(name string, s *server, model, body string, status int, want ...string) {
		add(adversarialCase{name: "v2/" + name, srv: s, path: "/v2/models/" + model + "/infer", body: []byte(body), status: status, want: want, form: "error"})
	}
	v2h := func(name string, s *server, model, ctype string, body []byte, headers []string, status int, want ...string) {
		add(adversarialCase{name: "v2/" + name, srv: s, path: "/v2/models/" + model + "/infer", ctype: ctype, body: body, headers: headers, status: status, want: want, form: "error"})
	}
	// route adds a case for the router: {"detail"} on v1 paths, {"error"}
	// under /v2.
	route := func(name string, s *server, method, path string, status int, want string) {
		form := "detail"
		if path == "/v2" || strings.HasPrefix(path, "/v2/") {
			form = "error"
		}
		add(adversarialCase{name: "route/" + name, srv: s, method: method, path: path, ctype: "application/json", body: []byte(validCls), status: status, want: []string{want}, form: form})
	}

	// --- v1: the body as a whole -------------------------------------
	v1("valid", classifier, validCls, 200)
	v1("1e-400 underflows to zero", classifier, cls(`[[1e-400, 0, 0, 0]]`), 200)
	v1("BOM", classifier, "\xef\xbb\xbf"+validCls, 200)
	for _, ct := range []string{"application/json; charset=utf-8", "application/json;charset=UTF-8", `application/json; charset="utf-8"`, "Application/JSON", "application/vnd.svc+json"} {
		v1h("content type "+ct, classifier, ct, []byte(validCls), nil, 200)
	}
	v1h("gzip", classifier, "", gz(validCls), []string{"Content-Encoding", "gzip"}, 200)
	v1h("x-gzip", classifier, "", gz(validCls), []string{"Content-Encoding", "x-gzip"}, 200)
	v1h("identity", classifier, "", []byte(validCls), []string{"Content-Encoding", "identity"}, 200)
	v1h("gzip of a bad body", classifier, "", gz(cls(`"x"`)), []string{"Content-Encoding", "gzip"}, 400, "Invalid input type for 'input': expected array")
	v1h("gzip header on plain JSON", classifier, "", []byte(validCls), []string{"Content-Encoding", "gzip"}, 400, "Could not read request body: gzip body:")
	v1h("truncated gzip", classifier, "", gz(validCls)[:15], []string{"Content-Encoding", "gzip"}, 400, "gzip body")
	v1h("gzip bomb", classifier, "", gz(strings.Repeat(" ", 8<<20)), []string{"Content-Encoding", "gzip"}, 413, "Request body too large: the limit is 1 MiB")
	v1h("br", classifier, "", []byte(validCls), []string{"Content-Encoding", "br"}, 415, "Unsupported Content-Encoding 'br'")
	v1h("deflate", classifier, "", []byte(validCls), []string{"Content-Encoding", "deflate"}, 415, "Unsupported Content-Encoding 'deflate'")
	v1h("no content type", classifier, "-", []byte(validCls), nil, 415, "Missing Content-Type")
	v1h("text/plain", classifier, "text/plain", []byte(validCls), nil, 415, "Unsupported Content-Type 'text/plain'")
	v1h("form", classifier, "application/x-www-form-urlencoded", []byte(validCls), nil, 415, "Unsupported Content-Type")
	v1h("multipart", classifier, "multipart/form-data; boundary=x", []byte(validCls), nil, 415, "Unsupported Content-Type")
	v1h("malformed content type", classifier, "application/", []byte(validCls), nil, 415, "Unsupported Content-Type")
	v1h("octet-stream", classifier, "application/octet-stream", []byte(validCls), nil, 415, "Unsupported Content-Type")
	for _, tt := range []struct{ name, body string }{
		{"empty body", ""}, {"whitespace", " \n\t "}, {"open brace", "{"}, {"truncated key", `{"inp`},
		{"truncated after key", `{"input"`}, {"truncated after colon", `{"input":`}, {"truncated number", `{"input": [[1, 2`},
		{"truncated literal", `{"input": [[tru`}, {"truncated after value", `{"input": [[1,2,3,4]]`},
		{"trailing garbage", validCls + " x"}, {"two objects", validCls + validCls}, {"trailing comma in array", cls(`[[1,2,3,4,]]`)},
		{"trailing comma in object", `{"input": [[1,2,3,4]],}`}, {"single quotes", `{'input': [[1,2,3,4]]}`}, {"unquoted key", `{input: [[1,2,3,4]]}`},
		{"missing colon", `{"input" [[1,2,3,4]]}`}, {"NaN literal", cls(`[[NaN, 1, 2, 3]]`)}, {"Infinity literal", cls(`[[Infinity, 1, 2, 3]]`)},
		{"-Infinity literal", cls(`[[-Infinity, 1, 2, 3]]`)}, {"hex number", cls(`[[0x10, 1, 2, 3]]`)}, {"leading zero", cls(`[[01, 1, 2, 3]]`)},
		{"leading plus", cls(`[[+1, 1, 2, 3]]`)}, {"leading dot", cls(`[[.5, 1, 2, 3]]`)}, {"bare exponent", cls(`[[1e, 1, 2, 3]]`)},
		{"comment", `{"input": [[1,2,3,4]] /* c */}`}, {"control character in key", "{\"in\x01put\": [[1,2,3,4]]}"},
		{"bad escape in key", `{"in\qput": [[1,2,3,4]]}`},
		{"100000 brackets", cls(strings.Repeat("[", 100000))}, {"100000 balanced brackets", cls(strings.Repeat("[", 100000) + strings.Repeat("]", 100000))},
		{"100000 nested objects", strings.Repeat(`{"a":`, 100000)}, {"deep top-level array", strings.Repeat("[", 100000)},
		{"duplicate key", `{"input": [[1,2,3,4]], "input": [[1,2,3,4]]}`},
	} {
		v1(tt.name, classifier, tt.body, 400, "Invalid JSON body")
	}
	for _, top := range []string{`[]`, `[{"input": [[1,2,3,4]]}]`, `"input"`, `42`, `null`, `true`} {
		v1("top-level "+top, classifier, top, 400, "Request body must be a JSON object mapping input names to values")
	}
	v1("huge string key", classifier, `{"input": [`+row+`], "`+strings.Repeat("k", 500000)+`": 1}`, 400, "Unknown input 'kkkk")
	v1("invalid UTF-8 in a key", classifier, "{\"input\": [[1,2,3,4]], \"k\xff\": 1}", 400, "Unknown input 'k")
	v1("body over the limit", classifier, cls(`[[`+strings.Repeat("1,", 600000)+`1]]`), 413, "Request body too large: the limit is 1 MiB")

	// --- v1: a float input ([batch, 4]) -------------------------------
	v1("unknown input", classifier, `{"input": [`+row+`], "wrong": 1}`, 400, "Unknown input 'wrong'; the model's inputs are: 'input'")
	v1("missing input", classifier, `{}`, 400, "Missing required input: 'input'")
	for _, k := range []struct{ name, v string }{{"string", `"x"`}, {"number", `1`}, {"object", `{"a": 1}`}, {"null", `null`}, {"bool", `true`}} {
		v1("float input given a "+k.name, classifier, cls(k.v), 400, "Invalid input type for 'input': expected array")
	}
	for _, k := range []struct{ name, v string }{{"string", `"1"`}, {"null", `null`}, {"bool", `true`}, {"object", `{}`}, {"NaN string", `"NaN"`}} {
		v1("float element "+k.name, classifier, cls(`[[`+k.v+`, 1, 2, 3]]`), 400, "'input'")
	}
	v1("ragged rows", classifier, cls(`[[1,2,3,4],[1,2,3]]`), 400, "Invalid input for 'input': ragged array")
	v1("ragged depth", classifier, cls(`[[1,2,3,4],1]`), 400, "'input'")
	v1("ragged deeper", classifier, cls(`[[1,2,3,4],[[1,2,3,4]]]`), 400, "'input'")
	v1("one item without the batch dimension", classifier, cls(row), 200)
	v1("one item of the wrong length", classifier, cls(`[1,2,3]`), 400, "Invalid shape for 'input'")
	v1("rank 3", classifier, cls(`[[`+row+`]]`), 400, "Invalid shape for 'input': expected rank 2")
	v1("fixed dimension 3", classifier, cls(`[[1,2,3]]`), 400, "Invalid shape for 'input': expected [-1, 4], got [1, 3]")
	v1("fixed dimension 5", classifier, cls(`[[1,2,3,4,5]]`), 400, "Invalid shape for 'input': expected [-1, 4], got [1, 5]")
	v1("empty inner array", classifier, cls(`[[]]`), 400, "Invalid shape for 'input': expected [-1, 4], got [1, 0]")
	v1("empty batch", classifier, cls(`[]`), 400, "Empty batch for 'input': send at least one item")
	v1("1e400", classifier, cls(`[[1e400, 1, 2, 3]]`), 400, "Invalid value for 'input' at [0, 0]: 1e400 is out of range for float32")
	v1("-1e400", classifier, cls(`[[-1e400, 1, 2, 3]]`), 400, "'input'", "out of range")
	v1("3.5e38 over float32", classifier, cls(`[[3.5e38, 1, 2, 3]]`), 400, "'input'", "out of range for float32")
	v1("huge string element", classifier, cls(`[["`+strings.Repeat("x", 300000)+`", 1, 2, 3]]`), 400, "'input'")

	// --- v1: int64, bool and string inputs (multi_input) ------------------
	v1("multi valid", multi, validMulti, 200)
	v1("multi escaped unicode", multi, multiWith("text", `["\u00e9\ud83d\ude00", "ok"]`), 200)
	for _, in := range []string{"features", "ids", "mask", "text"} {
		v1("missing "+in, multi, multiWith(in, "-"), 400, "Missing required input: '"+in+"'")
		v1(in+" given a string", multi, multiWith(in, `"x"`), 400, "'"+in+"'")
		v1(in+" given an object", multi, multiWith(in, `{}`), 400, "'"+in+"'")
		v1(in+" given null", multi, multiWith(in, `null`), 400, "'"+in+"'")
	}
	v1("empty batch on every input", multi, multiWith("", "")[:0]+`{"features": [], "ids": [], "mask": [], "text": []}`, 400, "Empty batch for 'features': send at least one item")
	v1("batch sizes disagree", multi, multiWith("ids", `[[1,2]]`), 400, "Invalid shape for 'ids': dimension 'batch' is 1 here but 2 in 'features'")
	v1("batch sizes disagree on text", multi, multiWith("text", `["a","b","c"]`), 400, "Invalid shape for 'text'")
	v1("int64 fraction", multi, multiWith("ids", `[[1,2.5],[3,4]]`), 400, "Invalid value for 'ids' at [0, 1]: 2.5 is not an integer (int64)")
	v1("int64 max+1", multi, multiWith("ids", `[[1,9223372036854775808],[3,4]]`), 400, "'ids'", "out of range for int64")
	v1("int64 min-1", multi, multiWith("ids", `[[1,-9223372036854775809],[3,4]]`), 400, "'ids'", "out of range for int64")
	v1("int64 1e19", multi, multiWith("ids", `[[1,1e19],[3,4]]`), 400, "'ids'", "out of range for int64")
	v1("int64 1e400", multi, multiWith("ids", `[[1,1e400],[3,4]]`), 400, "'ids'")
	v1("int64 string", multi, multiWith("ids", `[[1,"2"],[3,4]]`), 400, "'ids'")
	v1("int64 bool", multi, multiWith("ids", `[[1,true],[3,4]]`), 400, "'ids'")
	v1("int64 extremes", multi, multiWith("ids", `[[9223372036854775807,-9223372036854775808],[3,4]]`), 200)
	v1("int64 2e3 is an integer", multi, multiWith("ids", `[[2e3,2.0],[3,4]]`), 200)
	v1("bool given 1", multi, multiWith("mask", `[[1,0],[0,1]]`), 400, "'mask'")
	v1("bool given a string", multi, multiWith("mask", `[["true",false],[false,true]]`), 400, "'mask'")
	v1("bool given null", multi, multiWith("mask", `[[null,false],[false,true]]`), 400, "'mask'")
	v1("bool ragged", multi, multiWith("mask", `[[true],[false,true]]`), 400, "'mask'")
	v1("string given a number", multi, multiWith("text", `[1, "b"]`), 400, "'text'")
	v1("string given null", multi, multiWith("text", `[null, "b"]`), 400, "'text'")
	v1("string rank 2", multi, multiWith("text", `[["a"],["b"]]`), 400, "Invalid shape for 'text'")
	v1("string bare", multi, multiWith("text", `"ab"`), 400, "'text'")
	v1("invalid UTF-8", multi, multiWith("text", "[\"a\", \"b\xff\"]"), 400, "Invalid value for 'text' at [1]: invalid UTF-8 in string")
	v1("truncated UTF-8", multi, multiWith("text", "[\"a\xe4\xb8\", \"b\"]"), 400, "Invalid value for 'text' at [0]: invalid UTF-8 in string")
	v1("lone surrogate", multi, multiWith("text", `["a\ud800", "b"]`), 400, "Invalid value for 'text' at [0]: lone surrogate")
	v1("control character in string", multi, multiWith("text", "[\"a\x01\", \"b\"]"), 400, "Invalid JSON body")
	v1("string over max_string_length", multi, multiWith("text", `["`+strings.Repeat("x", 65537)+`", "b"]`), 400,
		"Invalid value for 'text' at [0]: string of 65537 bytes is longer than the limit of 65536 bytes")
	v1("string at max_string_length", multi, multiWith("text", `["`+strings.Repeat("x", 65536)+`", "b"]`), 200)
	v1("features 1e400", multi, multiWith("features", `[[1,2,1e400],[4,5,6]]`), 400, "'features'")

	// --- v1: every integer type (alltypes) ------------------------------
	for _, it := range []struct{ name, min, max string }{
		{"i8", "-128", "127"}, {"i16", "-32768", "32767"}, {"i32", "-2147483648", "2147483647"},
		{"u8", "0", "255"}, {"u16", "0", "65535"}, {"u32", "0", "4294967295"}, {"u64", "0", "18446744073709551615"},
	} {
		v1(it.name+" extremes", alltypes, allWith(it.name, "["+it.min+","+it.max+"]"), 200)
		v1(it.name+" max+1", alltypes, allWith(it.name, "["+incr(it.max, 1)+"]"), 400, "Invalid value for '"+it.name+"' at [0]", "out of range")
		v1(it.name+" min-1", alltypes, allWith(it.name, "["+incr(it.min, -1)+"]"), 400, "Invalid value for '"+it.name+"' at [0]", "out of range")
		v1(it.name+" fraction", alltypes, allWith(it.name, "[0.5]"), 400, "Invalid value for '"+it.name+"' at [0]: 0.5 is not an integer")
		v1(it.name+" 1e400", alltypes, allWith(it.name, "[1e400]"), 400, "'"+it.name+"'")
	}
	v1("f64 1e400", alltypes, allWith("f64", "[1e400]"), 400, "Invalid value for 'f64' at [0]: 1e400 is out of range for float64")
	v1("f64 rank 2", alltypes, allWith("f64", "[[1]]"), 400, "Invalid shape for 'f64'")
	v1("all empty (no batch dimension)", alltypes, `{"f64":[],"i8":[],"i16":[],"i32":[],"u8":[],"u16":[],"u32":[],"u64":[]}`, 200)

	// --- v1: rank-0 inputs (scalars, scalars_special) ---------------------
	v1("scalars valid", scalars, scalarWith("", ""), 200)
	for _, n := range scalarNames {
		v1("scalar "+n+" given an array", scalars, scalarWith(n, "[1]"), 400, "Invalid input type for '"+n+"'")
		v1("scalar "+n+" given a string", scalars, scalarWith(n, `"1"`), 400, "'"+n+"'")
	}
	for _, o := range []struct{ name, v string }{
		{"f32", "1e39"}, {"f64", "1e400"}, {"i8", "128"}, {"i16", "-32769"}, {"i32", "2147483648"}, {"i64", "-9223372036854775809"},
		{"u8", "256"}, {"u16", "-1"}, {"u32", "4294967296"}, {"u64", "18446744073709551616"},
	} {
		v1("scalar "+o.name+" "+o.v, scalars, scalarWith(o.name, o.v), 400, "Invalid value for '"+o.name+"'", "out of range")
	}
	v1("scalar bool given 1", scalars, scalarWith("bool", "1"), 400, "'bool'")
	v1("special valid", special, specialWith("", ""), 200)
	v1("float16 out of range", special, specialWith("f16", "70000"), 400, "Invalid value for 'f16'", "out of range")
	v1("bfloat16 out of range", special, specialWith("bf16", "1e39"), 400, "Invalid value for 'bf16'", "out of range")
	v1("bfloat16 NaN literal", special, specialWith("bf16", "NaN"), 400, "Invalid JSON body")
	v1("rank-0 string given a number", special, specialWith("str", "1"), 400, "'str'")
	v1("rank-0 string given an array", special, specialWith("str", `["hi"]`), 400, "'str'")
	v1("rank-0 string invalid UTF-8", special, specialWith("str", "\"h\xffi\""), 400, "Invalid value for 'str': invalid UTF-8 in string")

	// --- v1: fixed and zero-sized dimensions ------------------------------
	v1("fixed shape valid", fixed, image(1, 3, 4, 4), 200)
	v1("fixed shape batch 2", fixed, image(2, 3, 4, 4), 400, "Invalid shape for 'image': expected [1, 3, 4, 4], got [2, 3, 4, 4]")
	v1("fixed shape width 5", fixed, image(1, 3, 4, 5), 400, "Invalid shape for 'image'")
	v1("fixed shape empty", fixed, `{"image": []}`, 400, "Invalid shape for 'image'")
	v1("zero dims all empty", zero, `{"fixed": [], "dyn": [], "half": [], "text": []}`, 200)
	v1("zero dims fixed 0 given 1", zero, `{"fixed": [[1,2,3]], "dyn": [], "half": [], "text": []}`, 400, "Invalid shape for 'fixed'")

	// --- v2 JSON ----------------------------------------------------------
	clsIn := v2in("input", "FP32", "[1,4]", "[5.1,3.5,1.4,0.2]")
	validV2 := v2body(clsIn)
	multiV2 := func(override map[string]string) string {
		ins := map[string]string{
			"features": v2in("features", "FP32", "[2,3]", "[1,2,3,4,5,6]"),
			"ids":      v2in("ids", "INT64", "[2,2]", "[1,2,3,4]"),
			"mask":     v2in("mask", "BOOL", "[2,2]", "[true,false,false,true]"),
			"text":     v2in("text", "BYTES", "[2]", `["a","b"]`),
		}
		var parts []string
		for _, k := range []string{"features", "ids", "mask", "text"} {
			if v, ok := override[k]; ok {
				if v == "" {
					continue
				}
				parts = append(parts, v)
				continue
			}
			parts = append(parts, ins[k])
		}
		return v2body(parts...)
	}
	v2("valid", classifier, "classifier", validV2, 200)
	v2("versioned path", classifier, "classifier/versions/3", validV2, 200)
	v2("BOM", classifier, "classifier", "\xef\xbb\xbf"+validV2, 200)
	v2("nested data", classifier, "classifier", v2body(v2in("input", "FP32", "[1,4]", "[[5.1,3.5,1.4,0.2]]")), 200)
	v2h("charset", classifier, "classifier", "application/json; charset=utf-8", []byte(validV2), nil, 200)
	v2h("gzip", classifier, "classifier", "", gz(validV2), []string{"Content-Encoding", "gzip"}, 200)
	v2h("gzip bomb", classifier, "classifier", "", gz(strings.Repeat(" ", 8<<20)), []string{"Content-Encoding", "gzip"}, 413, "Request body too large")
	v2h("gzip header on plain JSON", classifier, "classifier", "", []byte(validV2), []string{"Content-Encoding", "gzip"}, 400, "gzip body")
	v2h("br", classifier, "classifier", "", []byte(validV2), []string{"Content-Encoding", "br"}, 415, "Unsupported Content-Encoding 'br'")
	v2h("no content type is JSON", classifier, "classifier", "-", []byte(validV2), nil, 200)
	v2h("text/plain", classifier, "classifier", "text/plain", []byte(validV2), nil, 415, "Unsupported Content-Type 'text/plain'")
	for _, tt := range []struct{ name, body string }{
		{"empty body", ""}, {"truncated", validV2[:len(validV2)/2]}, {"trailing garbage", validV2 + " x"},
		{"two objects", validV2 + validV2}, {"NaN literal", v2body(v2in("input", "FP32", "[1,4]", "[NaN,1,2,3]"))},
		{"Infinity literal", v2body(v2in("input", "FP32", "[1,4]", "[Infinity,1,2,3]"))},
		{"100000 brackets in data", v2body(v2in("input", "FP32", "[1,4]", strings.Repeat("[", 100000)))},
		{"100000 brackets in parameters", `{"parameters":` + strings.Repeat("[", 100000) + `,` + validV2[1:]},
	} {
		v2(tt.name, classifier, "classifier", tt.body, 400, "Invalid JSON body")
	}
	for _, top := range []string{`[]`, `"x"`, `1`, `null`, `{}`, `{"inputs": {}}`, `{"inputs": "x"}`, `{"inputs": null}`} {
		v2("top level "+top, classifier, "classifier", top, 400, "")
	}
	v2("duplicate inputs key", classifier, "classifier", `{"inputs":[`+clsIn+`],"inputs":[`+clsIn+`]}`, 400, "")
	v2("unknown input", classifier, "classifier", v2body(clsIn, v2in("wrong", "FP32", "[1]", "[1]")), 400, "'wrong'")
	v2("input twice", classifier, "classifier", v2body(clsIn, clsIn), 400, "'input'")
	v2("missing input", classifier, "classifier", v2body(), 400, "'input'")
	v2("input without a name", classifier, "classifier", v2body(`{"datatype":"FP32","shape":[1,4],"data":[1,2,3,4]}`), 400, "")
	v2("input that is not an object", classifier, "classifier", v2body(`[1,2,3,4]`), 400, "")
	v2("wrong datatype", classifier, "classifier", v2body(v2in("input", "FP64", "[1,4]", "[1,2,3,4]")), 400, "Invalid datatype for input 'input'")
	v2("unknown datatype", classifier, "classifier", v2body(v2in("input", "FP128", "[1,4]", "[1,2,3,4]")), 400, "'input'")
	v2("datatype a number", classifier, "classifier", `{"inputs":[{"name":"input","datatype":1,"shape":[1,4],"data":[1,2,3,4]}]}`, 400, "")
	v2("element count", classifier, "classifier", v2body(v2in("input", "FP32", "[2,4]", "[1,2,3,4]")), 400, "Invalid input for 'input': shape [2, 4] needs 8 elements, got 4")
	v2("wrong rank", classifier, "classifier", v2body(v2in("input", "FP32", "[4]", "[1,2,3,4]")), 400, "Invalid shape for 'input'")
	v2("wrong fixed dimension", classifier, "classifier", v2body(v2in("input", "FP32", "[1,3]", "[1,2,3]")), 400, "Invalid shape for 'input': expected [-1, 4], got [1, 3]")
	v2("negative dimension", classifier, "classifier", v2body(v2in("input", "FP32", "[-1,4]", "[1,2,3,4]")), 400, "'input'")
	v2("overflowing shape", classifier, "classifier", v2body(v2in("input", "FP32", "[9223372036854775807,4]", "[1,2,3,4]")), 400, "'input'")
	v2("fractional dimension", classifier, "classifier", v2body(v2in("input", "FP32", "[1.5,4]", "[1,2,3,4]")), 400, "")
	v2("shape a string", classifier, "classifier", v2body(v2in("input", "FP32", `"1,4"`, "[1,2,3,4]")), 400, "")
	v2("ragged data", classifier, "classifier", v2body(v2in("input", "FP32", "[2,4]", "[[1,2,3,4],[1,2,3]]")), 400, "'input'")
	v2("data a string", classifier, "classifier", v2body(v2in("input", "FP32", "[1,4]", `"1,2,3,4"`)), 400, "'input'")
	v2("element a string", classifier, "classifier", v2body(v2in("input", "FP32", "[1,4]", `["1",2,3,4]`)), 400, "'input'")
	v2("element 1e400", classifier, "classifier", v2body(v2in("input", "FP32", "[1,4]", "[1e400,2,3,4]")), 400, "'input'", "out of range")
	v2("empty batch", classifier, "classifier", v2body(v2in("input", "FP32", "[0,4]", "[]")), 400, "Empty batch for 'input'")
	v2("unknown output", classifier, "classifier", `{"inputs":[`+clsIn+`],"outputs":[{"name":"nope"}]}`, 400, "'nope'")
	v2("body over the limit", classifier, "classifier", v2body(v2in("input", "FP32", "[1,4]", "["+strings.Repeat("1,", 600000)+"1]")), 413, "Request body too large")
	v2("multi valid", multi, "multi_input", multiV2(nil), 200)
	v2("multi empty batch", multi, "multi_input", multiV2(map[string]string{
		"features": v2in("features", "FP32", "[0,3]", "[]"), "ids": v2in("ids", "INT64", "[0,2]", "[]"),
		"mask": v2in("mask", "BOOL", "[0,2]", "[]"), "text": v2in("text", "BYTES", "[0]", "[]")}), 400, "Empty batch for 'features'")
	v2("multi batch sizes disagree", multi, "multi_input", multiV2(map[string]string{"ids": v2in("ids", "INT64", "[1,2]", "[1,2]")}), 400, "Invalid shape for 'ids'")
	v2("multi missing text", multi, "multi_input", multiV2(map[string]string{"text": ""}), 400, "'text'")
	v2("int64 max+1", multi, "multi_input", multiV2(map[string]string{"ids": v2in("ids", "INT64", "[2,2]", "[1,2,3,9223372036854775808]")}), 400, "'ids'", "out of range")
	v2("int64 fraction", multi, "multi_input", multiV2(map[string]string{"ids": v2in("ids", "INT64", "[2,2]", "[1,2,3,4.5]")}), 400, "'ids'", "not an integer")
	v2("bool given 1", multi, "multi_input", multiV2(map[string]string{"mask": v2in("mask", "BOOL", "[2,2]", "[1,0,0,1]")}), 400, "'mask'")
	v2("BYTES given a number", multi, "multi_input", multiV2(map[string]string{"text": v2in("text", "BYTES", "[2]", `[1,"b"]`)}), 400, "'text'")
	v2("BYTES invalid UTF-8", multi, "multi_input", multiV2(map[string]string{"text": v2in("text", "BYTES", "[2]", "[\"a\xff\",\"b\"]")}), 400, "'text'", "invalid UTF-8")
	v2("BYTES over max_string_length", multi, "multi_input", multiV2(map[string]string{"text": v2in("text", "BYTES", "[2]", `["`+strings.Repeat("x", 65537)+`","b"]`)}), 400, "'text'")
	for _, it := range []struct{ name, dt, bad string }{
		{"i8", "INT8", "128"}, {"i16", "INT16", "-32769"}, {"i32", "INT32", "2147483648"}, {"u8", "UINT8", "-1"},
		{"u16", "UINT16", "65536"}, {"u32", "UINT32", "4294967296"}, {"u64", "UINT64", "18446744073709551616"},
	} {
		var ins []string
		for _, o := range []struct{ name, dt string }{{"f64", "FP64"}, {"i8", "INT8"}, {"i16", "INT16"}, {"i32", "INT32"}, {"u8", "UINT8"}, {"u16", "UINT16"}, {"u32", "UINT32"}, {"u64", "UINT64"}} {
			data := "[1]"
			if o.name == it.name {
				data = "[" + it.bad + "]"
			}
			ins = append(ins, v2in(o.name, o.dt, "[1]", data))
		}
		v2(it.name+" out of range", alltypes, "alltypes", v2body(ins...), 400, "'"+it.name+"'", "out of range")
	}
	v2("scalar given shape [1]", scalars, "scalars", v2body(v2in("f32", "FP32", "[1]", "[1]")), 400, "'f32'")
	v2("invalid UTF-8 in a name", classifier, "classifier", "{\"inputs\":[{\"name\":\"in\xffput\",\"datatype\":\"FP32\",\"shape\":[1,4],\"data\":[1,2,3,4]}]}", 400, "Invalid \"name\" of inputs[0]: invalid UTF-8 in string")
	v2("wrong model", classifier, "resnet", validV2, 404, "Unknown model 'resnet'")
	v2("wrong version", classifier, "classifier/versions/9", validV2, 404, "")

	// --- v2 binary extension ------------------------------------------------
	binHeader := `{"inputs":[{"name":"input","datatype":"FP32","shape":[1,4],"parameters":{"binary_data_size":16}}]}`
	b, hl := v2bin(binHeader, f32bytes(5.1, 3.5, 1.4, 0.2))
	v2h("binary valid", classifier, "classifier", "application/octet-stream", b, []string{"Inference-Header-Content-Length", hl}, 200)
	v2h("binary gzip", classifier, "classifier", "application/octet-stream", gz(string(b)), []string{"Inference-Header-Content-Length", hl, "Content-Encoding", "gzip"}, 200)
	b2, hl2 := v2bin(binHeader, f32bytes(5.1, 3.5))
	v2h("binary short data", classifier, "classifier", "application/octet-stream", b2, []string{"Inference-Header-Content-Length", hl2}, 400, "binary_data_size")
	v2h("binary header past the body", classifier, "classifier", "application/octet-stream", b, []string{"Inference-Header-Content-Length", "9999"}, 400, "past the end")
	v2h("binary header length negative", classifier, "classifier", "application/octet-stream", b, []string{"Inference-Header-Content-Length", "-1"}, 400, "Inference-Header-Content-Length")
	v2h("binary header length garbage", classifier, "classifier", "application/octet-stream", b, []string{"Inference-Header-Content-Length", "x"}, 400, "Inference-Header-Content-Length")
	v2h("binary header cut short", classifier, "classifier", "application/octet-stream", b, []string{"Inference-Header-Content-Length", "20"}, 400, "Invalid JSON body")
	b3, hl3 := v2bin(`{"inputs":[{"name":"input","datatype":"FP32","shape":[1,4],"parameters":{"binary_data_size":12}}]}`, f32bytes(5.1, 3.5, 1.4))
	v2h("binary size short of the shape", classifier, "classifier", "application/octet-stream", b3, []string{"Inference-Header-Content-Length", hl3}, 400, "'input'")
	b4, hl4 := v2bin(`{"inputs":[{"name":"input","datatype":"FP32","shape":[1,4],"parameters":{"binary_data_size":-16}}]}`, f32bytes(5.1, 3.5, 1.4, 0.2))
	v2h("binary size negative", classifier, "classifier", "application/octet-stream", b4, []string{"Inference-Header-Content-Length", hl4}, 400, "")
	textHeader := func(size int) string {
		return `{"inputs":[` + v2in("features", "FP32", "[1,3]", "[1,2,3]") + "," + v2in("ids", "INT64", "[1,2]", "[1,2]") + "," +
			v2in("mask", "BOOL", "[1,2]", "[true,false]") + `,{"name":"text","datatype":"BYTES","shape":[1],"parameters":{"binary_data_size":` + strconv.Itoa(size) + `}}]}`
	}
	b5, hl5 := v2bin(textHeader(6), []byte{200, 0, 0, 0, 'a', 'b'})
	v2h("binary BYTES length past its data", multi, "multi_input", "application/octet-stream", b5, []string{"Inference-Header-Content-Length", hl5}, 400, "'text'")
	b6, hl6 := v2bin(textHeader(3), []byte{1, 0, 0})
	v2h("binary BYTES no room for the length", multi, "multi_input", "application/octet-stream", b6, []string{"Inference-Header-Content-Length", hl6}, 400, "'text'")

	// --- routes: methods and paths --------------------------------------------
	for _, m := range []string{"GET", "PUT", "DELETE", "PATCH"} {
		route(m+" /predict", classifier, m, "/predict", 405, "Method Not Allowed")
		route(m+" v2 infer", classifier, m, "/v2/models/classifier/infer", 405, "Method Not Allowed")
	}
	route("POST /v2/health/live", classifier, "POST", "/v2/health/live", 405, "Method Not Allowed")
	route("POST /v2/models/classifier", classifier, "POST", "/v2/models/classifier", 405, "Method Not Allowed")
	route("POST /health", classifier, "POST", "/health", 405, "Method Not Allowed")
	route("POST /info", classifier, "POST", "/info", 405, "Method Not Allowed")
	for _, p := range []string{"/predictt", "/predict/", "//predict", "/v1/predict", "/PREDICT", "/predict/../predict", "/v2/models/classifier/infer/x", "/v2/modelz/classifier/infer", "/%00", "/" + strings.Repeat("a", 4000)} {
		route("unknown path "+p[:min(len(p), 40)], classifier, "POST", p, 404, "Not Found")
	}

	names := map[string]bool{}
	for _, c := range cases {
		if names[c.name] {
			t.Fatalf("two cases named %q", c.name)
		}
		names[c.name] = true
	}
	t.Logf("%d distinct adversarial request cases (+ %d on raw connections)", len(cases), len(rawCases))
	if len(cases)+len(rawCases) < 150 {
		t.Fatalf("only %d cases", len(cases)+len(rawCases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runAdversarial(t, c) })
	}
	for _, rc := range rawCases {
		t.Run("raw/"+rc.name, func(t *testing.T) { runRaw(t, classifier, rc) })
	}

	// The servers still answer right, and none of them logged a panic.
	if r := classifier.predict(validCls); r.Status != 200 || string(r.Body) != `{"probabilities":[[0.8856464,0.09813241,0.01622118]],"label":[0]}` {
		t.Errorf("valid request after the suite: %d %s", r.Status, r.Body)
	}
	if r := multi.predict(validMulti); r.Status != 200 || !strings.Contains(string(r.Body), `"text_upper":["A","B"]`) {
		t.Errorf("valid request after the suite: %d %s", r.Status, r.Body)
	}
	for _, s := range []*server{classifier, multi, alltypes, scalars, special, fixed, zero} {
		s.stopNoPanic()
	}
}

// incr adds d to a decimal integer of any size.
func incr(s string, d int64) string {
	n, _ := new(big.Int).SetString(s, 10)
	return n.Add(n, big.NewInt(d)).String()
}

func runAdversarial(t *testing.T, c adversarialCase) {
	method, path, ctype := c.method, c.path, c.ctype
	if method == "" {
		method = "POST"
	}
	if path == "" {
		path = "/predict"
	}
	switch ctype {
	case "":
		ctype = "application/json"
	case "-":
		ctype = ""
	}
	r := c.srv.do(method, path, ctype, bytes.NewReader(c.body), c.headers...)
	if r.Status != c.status {
		t.Fatalf("status = %d, want %d; body %.300s", r.Status, c.status, r.Body)
	}
	if c.status == 200 {
		var m map[string]any
		if err := json.Unmarshal(r.Body, &m); err != nil {
			t.Fatalf("200 body is not a JSON object: %v %.300s", err, r.Body)
		}
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error Content-Type = %q, want application/json; body %.300s", ct, r.Body)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("error body is not JSON: %v %.300s", err, r.Body)
	}
	msg, ok := m[c.form].(string)
	if !ok || len(m) != 1 || msg == "" {
		t.Fatalf("error body is not {%q: string}: %.300s", c.form, r.Body)
	}
	for _, w := range c.want {
		if !strings.Contains(msg, w) {
			t.Fatalf("message %q does not hold %q", msg, w)
		}
	}
}

// rawCase is a request written on a bare connection: what net/http's
// client will not send.
type rawCase struct {
	name string
	// request is written at once; closeWrite then half-closes the
	// connection (the client sends nothing more).
	request    string
	closeWrite bool
	status     int
	// json is true when the answer must be a JSON {"detail"} body (net/http
	// answers some malformed requests itself, in plain text).
	json bool
	want string
}

var rawCases = []rawCase{
	{"Content-Length larger than the body, then EOF", "POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"input\": [[1,2,3,4]]}", true, 400, true, "Could not read request body: unexpected EOF"},
	{"Content-Length larger than the body, then silence", "POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"input\": [[1,2,3,4]]}", false, 408, true, "Request timeout: the body did not arrive in time"},
	{"v2 Content-Length larger than the body, then silence", "POST /v2/models/classifier/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"inputs\": []}", false, 408, true, "Request timeout"},
	{"Content-Length over the limit, no body", "POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n", false, 413, true, "Request body too large: the limit is 1 MiB"},
	{"header flood: one 2 MiB header", "POST /predict HTTP/1.1\r\nHost: x\r\nX-Flood: " + strings.Repeat("a", 2<<20) + "\r\n\r\n", false, 431, false, ""},
	{"header flood: 40000 headers", "POST /predict HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-Flood: aaaaaaaaaaaaaaaaaaaa\r\n", 40000) + "\r\n", false, 431, false, ""},
	{"chunked body", "POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n16\r\n{\"input\": [[1,2,3,4]]}\r\n0\r\n\r\n", false, 200, true, ""},
	{"bad chunk size", "POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", false, 400, true, "Could not read request body"},
	{"negative Content-Length", "POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: -5\r\n\r\n{}", false, 400, false, ""},
	{"HTTP/1.1 without Host", "POST /predict HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", false, 400, false, ""},
	{"garbage request line", "HELLO\r\n\r\n", false, 400, false, ""},
}

// runRaw writes rc's request on a new connection to s and checks the
// status line (and the JSON body where the answer is svc's).
func runRaw(t *testing.T, s *server, rc rawCase) {
	conn := s.dial(t)
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	// Write in the background: the server may answer (and close) before it
	// has read a flood.
	go func() {
		_, _ = io.WriteString(conn, rc.request)
		if rc.closeWrite {
			_ = conn.(*net.TCPConn).CloseWrite()
		}
	}()
	br := bufio.NewReader(conn)
	resp, err := readResponse(br)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	if resp.status != rc.status {
		t.Fatalf("status %d, want %d: %.300s", resp.status, rc.status, resp.body)
	}
	if !rc.json {
		return
	}
	var m map[string]any
	if err := json.Unmarshal(resp.body, &m); err != nil || resp.ctype != "application/json" {
		t.Fatalf("not a JSON answer (%s): %.300s", resp.ctype, resp.body)
	}
	msg, _ := m["detail"].(string)
	if e, ok := m["error"].(string); ok {
		msg = e
	}
	if rc.status != 200 && (len(m) != 1 || !strings.Contains(msg, rc.want)) {
		t.Fatalf("body %s does not hold %q", resp.body, rc.want)
	}
}

type rawResponse struct {
	status int
	ctype  string
	body   []byte
}

func readResponse(br *bufio.Reader) (rawResponse, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return rawResponse{}, err
	}
	var r rawResponse
	if _, err := fmt.Sscanf(line, "HTTP/1.1 %d", &r.status); err != nil {
		return r, fmt.Errorf("status line %q: %w", line, err)
	}
	length := -1
	for {
		h, err := br.ReadString('\n')
		if err != nil {
			return r, err
		}
		h = strings.TrimRight(h, "\r\n")
		if h == "" {
			break
		}
		k, v, _ := strings.Cut(h, ":")
		switch strings.ToLower(k) {
		case "content-type":
			r.ctype = strings.TrimSpace(v)
		case "content-length":
			length, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if length >= 0 {
		r.body = make([]byte, length)
		_, err = io.ReadFull(br, r.body)
	} else {
		r.body, err = io.ReadAll(br)
	}
	return r, err
}
