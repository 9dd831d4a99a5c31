package soak

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"mime/multipart"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svc-dev/svc/ci/hostile"
)

// The mixes of the servers that the attacks of the bounds review aim at
// (ci/hostile makes the pictures): valid requests of every protocol beside
// each attack, weighted so that every kind recurs throughout a run.

// post is a POST of body.
func post(name string, valid bool, weight int, path, ctype string, body []byte, headers ...string) *request {
	return &request{name: name, valid: valid, weight: weight, method: "POST", path: path, ctype: ctype, body: body, headers: headers}
}

// b64List is a JSON list of n base64 copies of each of ps, in turn.
func b64List(n int, ps ...[]byte) []byte {
	enc := make([]string, len(ps))
	for i, p := range ps {
		enc[i] = `"` + base64.StdEncoding.EncodeToString(p) + `"`
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(enc[i%len(enc)])
	}
	b.WriteByte(']')
	return b.Bytes()
}

// v1Pictures is {"INPUT": [n pictures]}.
func v1Pictures(input string, n int, ps ...[]byte) []byte {
	return append(append([]byte(`{"`+input+`":`), b64List(n, ps...)...), '}')
}

// v2Bytes is a v2 JSON request of one BYTES input of n base64 pictures.
func v2Bytes(input string, n int, ps ...[]byte) []byte {
	return []byte(`{"inputs":[{"name":"` + input + `","datatype":"BYTES","shape":[` + strconv.Itoa(n) + `],"data":` + string(b64List(n, ps...)) + `}]}`)
}

// v2Binary is a v2 binary request (Inference-Header-Content-Length) of one
// BYTES input of n elements, each of ps in turn, and its header.
func v2Binary(input string, n int, ps ...[]byte) ([]byte, []string) {
	elems := make([][]byte, n)
	for i := range elems {
		elems[i] = ps[i%len(ps)]
	}
	raw := lengthPrefixed(elems...)
	head := `{"inputs":[{"name":"` + input + `","datatype":"BYTES","shape":[` + strconv.Itoa(n) + `],"parameters":{"binary_data_size":` + strconv.Itoa(len(raw)) + `}}]}`
	return append([]byte(head), raw...), []string{"Inference-Header-Content-Length", strconv.Itoa(len(head))}
}

// multipartFiles is a multipart body of n files of field input, each of ps
// in turn, and its content type.
func multipartFiles(input string, n int, ps ...[]byte) ([]byte, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for i := range n {
		w, _ := mw.CreateFormFile(input, "p"+strconv.Itoa(i))
		_, _ = w.Write(ps[i%len(ps)])
	}
	_ = mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

// v1Labels checks a v1 answer of decoded classes: one output, each item's
// best label as want says.
func v1Labels(want ...string) func([]byte) error {
	return func(body []byte) error {
		var out map[string][][]struct {
			Label string `json:"label"`
		}
		if err := json.Unmarshal(body, &out); err != nil {
			return err
		}
		for _, items := range out {
			if len(items) != len(want) {
				return fmt.Errorf("%d items, want %d", len(items), len(want))
			}
			for i, it := range items {
				if len(it) == 0 || (want[i] != "" && it[0].Label != want[i]) {
					return fmt.Errorf("item %d: %v, want label %q", i, it, want[i])
				}
			}
			return nil
		}
		return fmt.Errorf("no output")
	}
}

// v2Output is the first output of a v2 JSON answer.
type v2Output struct {
	Name  string          `json:"name"`
	Shape []int64         `json:"shape"`
	Data  json.RawMessage `json:"data"`
}

func firstOutput(body []byte) (v2Output, error) {
	var r struct {
		Outputs []v2Output `json:"outputs"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return v2Output{}, err
	}
	if len(r.Outputs) == 0 {
		return v2Output{}, fmt.Errorf("no outputs")
	}
	return r.Outputs[0], nil
}

// classesEndIn checks decoded classes as strings ("score:index:label"):
// item i ends in ":"+want[i].
func classesEndIn(got []string, want ...string) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d classes, want %d", len(got), len(want))
	}
	for i, g := range got {
		if !strings.HasSuffix(g, ":"+want[i]) {
			return fmt.Errorf("class %d is %q, want label %q", i, g, want[i])
		}
	}
	return nil
}

// v2Labels checks a v2 JSON answer of decoded classes.
func v2Labels(want ...string) func([]byte) error {
	return func(body []byte) error {
		o, err := firstOutput(body)
		if err != nil {
			return err
		}
		var got []string
		if err := json.Unmarshal(o.Data, &got); err != nil {
			return err
		}
		return classesEndIn(got, want...)
	}
}

// splitPrefixed splits BYTES raw contents into their elements.
func splitPrefixed(raw []byte) ([]string, error) {
	var out []string
	for len(raw) > 0 {
		if len(raw) < 4 {
			return nil, fmt.Errorf("raw BYTES cut short")
		}
		n := int(binary.LittleEndian.Uint32(raw))
		if n > len(raw)-4 {
			return nil, fmt.Errorf("raw BYTES element of %d bytes past the end", n)
		}
		out = append(out, string(raw[4:4+n]))
		raw = raw[4+n:]
	}
	return out, nil
}

// grpcFlow is one ModelInfer call as a request of the mix; check judges
// an OK answer's message.
func grpcFlow(msg []byte, check func(resp []byte) error) func(context.Context, *process, *rand.Rand) answer {
	return func(ctx context.Context, p *process, _ *rand.Rand) answer {
		code, m, resp, err := grpcCall(ctx, p.grpc, p.grpcAddr, modelInferPath, msg)
		if err != nil {
			return noAnswer(err)
		}
		return grpcAnswer(code, m, func() error {
			if check == nil {
				return nil
			}
			return check(resp)
		})
	}
}

// together sends n copies of r at once: its answer is theirs when they
// agree, else the first that is not good.
func together(r *request, n int) func(context.Context, *process, *rand.Rand) answer {
	return func(ctx context.Context, p *process, rng *rand.Rand) answer {
		got := make([]answer, n)
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() { got[i] = p.sendHTTP(ctx, r, false) })
		}
		wg.Wait()
		for _, a := range got {
			if !r.good(a) {
				return a
			}
		}
		labels := map[string]bool{}
		for _, a := range got {
			labels[a.label] = true
		}
		if len(labels) == 1 {
			got[0].label = fmt.Sprintf("%d × %s", n, got[0].label)
		}
		return got[0]
	}
}

// pictureMix serves PaddleOCR's direction classifier (input x, pictures):
// valid pictures over v1 JSON, a picture body, multipart, v2 JSON and
// binary, gRPC; the picture attacks (findings 1, 2, 5 and 7).
func pictureMix(root, name string) (*mix, error) {
	line, err := os.ReadFile(filepath.Join(root, "examples", "ocr", "line.png"))
	if err != nil {
		return nil, err
	}
	flipped, err := os.ReadFile(filepath.Join(root, "examples", "ocr", "line-180.png"))
	if err != nil {
		return nil, err
	}
	infer := "/v2/models/" + name + "/infer"
	gif := hostile.GIF1x1()
	okBinary, okBinaryHdr := v2Binary("x", 2, line, flipped)
	okMultipart, okMultipartType := multipartFiles("x", 2, line, flipped)
	pair := []tensorIn{{name: "x", datatype: "BYTES", shape: []int64{2}, bytes: [][]byte{line, flipped}}}
	gifs := func(n int) []tensorIn {
		e := make([][]byte, n)
		for i := range e {
			e[i] = gif
		}
		return []tensorIn{{name: "x", datatype: "BYTES", shape: []int64{int64(n)}, bytes: e}}
	}
	scans := hostile.ProgressiveJPEG(6000, 6000, 1000, true)
	png16 := hostile.ZeroPNG16(6000, 6000)
	many, manyType := multipartFiles("x", 2000, gif)
	bin2k, bin2kHdr := v2Binary("x", 2000, gif)
	bin260k, bin260kHdr := v2Binary("x", 260_000, gif)
	costly := hostile.ProgressiveJPEG(2000, 2000, 99, true)
	png16Req := post("a 16-bit PNG of zeros, 6000×6000", false, 3, "/predict", "image/png", png16)
	reqs := []*request{
		// Valid, of every protocol.
		{name: "v1 JSON, two pictures", valid: true, weight: 12, method: "POST", path: "/predict", ctype: "application/json", body: v1Pictures("x", 2, line, flipped), check: v1Labels("0", "180")},
		{name: "a picture body (image/png)", valid: true, weight: 8, method: "POST", path: "/predict", ctype: "image/png", body: flipped, check: v1Labels("180")},
		{name: "multipart, two pictures", valid: true, weight: 6, method: "POST", path: "/predict", ctype: okMultipartType, body: okMultipart, check: v1Labels("0", "180")},
		{name: "v2 JSON BYTES, two pictures", valid: true, weight: 8, method: "POST", path: infer, ctype: "application/json", body: v2Bytes("x", 2, line, flipped), check: v2Labels("0", "180")},
		{name: "v2 binary BYTES, two pictures", valid: true, weight: 6, method: "POST", path: infer, ctype: "application/octet-stream", body: okBinary, headers: okBinaryHdr, check: v2Labels("0", "180")},
		{name: "gRPC, two pictures", valid: true, weight: 8, flow: grpcFlow(inferRequest(name, []param{{"binary_data_output", true}}, pair...), func(resp []byte) error {
			raw, err := rawOutputs(resp)
			if err != nil || len(raw) != 1 {
				return fmt.Errorf("raw outputs %d, %v", len(raw), err)
			}
			got, err := splitPrefixed(raw[0])
			if err != nil {
				return err
			}
			return classesEndIn(got, "0", "180")
		})},
		{name: "v1 JSON, 64 one-pixel GIFs (the most allowed)", valid: true, weight: 2, method: "POST", path: "/predict", ctype: "application/json", body: v1Pictures("x", 64, gif), check: v1Labels(make([]string, 64)...)},

		// 1. Batches of tiny pictures.
		post("2,000 one-pixel GIFs, v1 JSON", false, 3, "/predict", "application/json", v1Pictures("x", 2000, gif)),
		post("260,000 one-pixel GIFs, v1 JSON", false, 2, "/predict", "application/json", v1Pictures("x", 260_000, gif)),
		post("2,000 one-pixel GIFs, multipart", false, 3, "/predict", manyType, many),
		post("2,000 one-pixel GIFs, v2 JSON BYTES", false, 3, infer, "application/json", v2Bytes("x", 2000, gif)),
		post("2,000 one-pixel GIFs, v2 binary BYTES", false, 2, infer, "application/octet-stream", bin2k, bin2kHdr...),
		post("260,000 one-pixel GIFs, v2 binary BYTES", false, 1, infer, "application/octet-stream", bin260k, bin260kHdr...),
		{name: "2,000 one-pixel GIFs, gRPC", weight: 2, flow: grpcFlow(inferRequest(name, nil, gifs(2000)...), nil)},
		// 2. Progressive JPEGs of empty scans.
		post("1,000 empty scans behind a stray byte, 6000×6000 JPEG", false, 3, "/predict", "image/jpeg", scans),
		post("99 scans at 36 megapixels", false, 3, "/predict", "image/jpeg", hostile.ProgressiveJPEG(6000, 6000, 99, false)),
		{name: "1,000 empty scans, gRPC", weight: 2, flow: grpcFlow(inferRequest(name, nil, tensorIn{name: "x", datatype: "BYTES", shape: []int64{1}, bytes: [][]byte{scans}}), nil)},
		post("five 36-megapixel JPEGs in one request", false, 2, "/predict", "application/json", v1Pictures("x", 5, hostile.ProgressiveJPEG(6000, 6000, 1, false))),
		// 5. Truncated BMPs, 16-bit PNGs of zeros, several at once.
		post("a truncated BMP header, 6000×6000", false, 3, "/predict", "image/bmp", hostile.TruncatedBMP(6000, 6000)),
		png16Req,
		{name: "four 16-bit PNGs of zeros at once", weight: 2, flow: together(png16Req, 4)},
		post("a 16-bit PNG of zeros, v2 JSON BYTES", false, 2, infer, "application/json", v2Bytes("x", 1, png16)),
		// 7. A deadline that passes while costly pictures decode; a client
		// that leaves mid-request.
		{name: "X-Request-Timeout 2s, 40 costly JPEGs (2000×2000, 99 scans)", weight: 1, method: "POST", path: "/predict", ctype: "application/json",
			body: v1Pictures("x", 40, costly), headers: []string{"X-Request-Timeout", "2s"}, deadline: true},
		{name: "a client that leaves after 500 ms, 40 costly JPEGs", weight: 1, method: "POST", path: "/predict", ctype: "application/json",
			body: v1Pictures("x", 40, costly), leave: 500 * time.Millisecond},
	}
	return newMix(append(reqs, malformed(infer)[:4]...)), nil
}

// texts is n one-letter texts, the last one last.
func texts(n int, last string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "a"
	}
	out[n-1] = last
	return out
}

func v1Texts(ts []string) []byte {
	b, _ := json.Marshal(map[string][]string{"text": ts})
	return b
}

func v2Texts(ts []string) []byte {
	data, _ := json.Marshal(ts)
	return []byte(`{"inputs":[{"name":"text","datatype":"BYTES","shape":[` + strconv.Itoa(len(ts)) + `],"data":` + string(data) + `}]}`)
}

func grpcTexts(model string, params []param, ts []string, raw bool) []byte {
	b := make([][]byte, len(ts))
	for i, t := range ts {
		b[i] = []byte(t)
	}
	in := tensorIn{name: "text", datatype: "BYTES", shape: []int64{int64(len(ts))}}
	if raw {
		in.raw, in.hasRaw = lengthPrefixed(b...), true
	} else {
		in.bytes = b
	}
	return inferRequest(model, params, in)
}

// embeddings checks a v1 answer of n embeddings of dim numbers.
func embeddings(n, dim int) func([]byte) error {
	return func(body []byte) error {
		var out struct {
			Embedding [][]float64 `json:"embedding"`
		}
		if err := json.Unmarshal(body, &out); err != nil {
			return err
		}
		if len(out.Embedding) != n {
			return fmt.Errorf("%d embeddings, want %d", len(out.Embedding), n)
		}
		for i, e := range out.Embedding {
			if len(e) != dim {
				return fmt.Errorf("embedding %d has %d numbers, want %d", i, len(e), dim)
			}
		}
		return nil
	}
}

// v2Shape checks the shape of a v2 JSON answer's first output.
func v2Shape(name string, shape ...int64) func([]byte) error {
	return func(body []byte) error {
		o, err := firstOutput(body)
		if err != nil {
			return err
		}
		if o.Name != name || fmt.Sprint(o.Shape) != fmt.Sprint(shape) {
			return fmt.Errorf("output %s %v, want %s %v", o.Name, o.Shape, name, shape)
		}
		return nil
	}
}

// textMix serves examples/text-embed (input text): valid texts over v1,
// v2 JSON and binary, gRPC; the text attacks (finding 3).
func textMix(_, name string) (*mix, error) {
	const dim = 32
	infer := "/v2/models/" + name + "/infer"
	long := strings.Repeat("hello ", 60)
	okBinary, okBinaryHdr := v2Binary("text", 2, []byte("hello world"), []byte("grüße"))
	short := make([]string, 512)
	for i := range short {
		short[i] = "a b c"
	}
	hundredK, million, tokens := texts(100_000, long), texts(1_000_000, "a"), texts(2048, long)
	millionBin, millionBinHdr := v2Binary("text", 1_000_000, []byte("a"))
	reqs := []*request{
		{name: "v1 JSON, three texts", valid: true, weight: 15, method: "POST", path: "/predict", ctype: "application/json", body: v1Texts([]string{"hello world", "a", "b"}), check: embeddings(3, dim)},
		{name: "v2 JSON BYTES, two texts", valid: true, weight: 10, method: "POST", path: infer, ctype: "application/json", body: v2Texts([]string{"hello world", "grüße"}), check: v2Shape("embedding", 2, dim)},
		{name: "v2 binary BYTES, two texts", valid: true, weight: 8, method: "POST", path: infer, ctype: "application/octet-stream", body: okBinary, headers: okBinaryHdr, check: v2Shape("embedding", 2, dim)},
		{name: "gRPC, two texts (raw contents)", valid: true, weight: 8, flow: grpcFlow(grpcTexts(name, []param{{"binary_data_output", true}}, []string{"hello world", "grüße"}, true), func(resp []byte) error {
			raw, err := rawOutputs(resp)
			if err != nil || len(raw) != 1 || len(raw[0]) != 2*dim*4 {
				return fmt.Errorf("raw outputs %d (%v), want one of %d bytes", len(raw), err, 2*dim*4)
			}
			return nil
		})},
		{name: "v1 JSON, 512 short texts", valid: true, weight: 2, method: "POST", path: "/predict", ctype: "application/json", body: v1Texts(short), check: embeddings(512, dim)},
		// 2,048 texts, one long: once an attack (the padded batch), now
		// split into runs of text.max_batch_tokens and answered.
		{name: "v1 JSON, 2,048 texts, one long (split into runs)", valid: true, weight: 1, method: "POST", path: "/predict", ctype: "application/json", body: v1Texts(tokens), check: embeddings(2048, dim)},
		{name: "v2 JSON, 2,048 texts, one long (split into runs)", valid: true, weight: 1, method: "POST", path: infer, ctype: "application/json", body: v2Texts(tokens), check: v2Shape("embedding", 2048, dim)},

		// 3. 100,000 texts, one long; a million one-letter texts.
		post("100,000 texts, one long, v1 JSON", false, 5, "/predict", "application/json", v1Texts(hundredK)),
		post("a million one-letter texts, v1 JSON", false, 4, "/predict", "application/json", v1Texts(million)),
		post("100,000 texts, one long, v2 JSON", false, 3, infer, "application/json", v2Texts(hundredK)),
		post("a million one-letter texts, v2 binary", false, 3, infer, "application/octet-stream", millionBin, millionBinHdr...),
		{name: "100,000 texts, one long, gRPC", weight: 4, flow: grpcFlow(grpcTexts(name, nil, hundredK, false), nil)},
	}
	return newMix(append(reqs, malformed(infer)[:4]...)), nil
}

func f32bits(x float32) uint32 { return math.Float32bits(x) }

func formatF32(x float32) string { return strconv.FormatFloat(float64(x), 'g', -1, 32) }

// The steps of a valid sequence and the sums running_sum answers.
var (
	seqSteps = []float32{2, 3, 0.5}
	seqSums  = []float32{2, 5, 5.5}
)

// seqFlow sends a sequence of three steps, one request each, made by step
// (the step's index, the id, x) and judged by right (the step's index,
// the body); its answer is the first step's that is not right.
func seqFlow(step func(i int, id string, x float32) *request) func(context.Context, *process, *rand.Rand) answer {
	return func(ctx context.Context, p *process, _ *rand.Rand) answer {
		id := p.nextID()
		for i, x := range seqSteps {
			r := step(i, id, x)
			r.valid = true
			a := p.sendHTTP(ctx, r, false)
			if a.class != classOK {
				a.label = fmt.Sprintf("step %d: %s", i, a.label)
				return a
			}
		}
		return answer{label: "3 steps 200", class: classOK}
	}
}

// grpcSeqFlow is seqFlow over gRPC.
func grpcSeqFlow(model string) func(context.Context, *process, *rand.Rand) answer {
	return func(ctx context.Context, p *process, _ *rand.Rand) answer {
		id := p.nextID()
		for i, x := range seqSteps {
			params := []param{{"sequence_id", id}, {"binary_data_output", true}}
			if i == 0 {
				params = append(params, param{"sequence_start", true})
			}
			if i == len(seqSteps)-1 {
				params = append(params, param{"sequence_end", true})
			}
			msg := inferRequest(model, params, tensorIn{name: "x", datatype: "FP32", shape: []int64{1, 1}, fp32: []float32{x}})
			code, m, resp, err := grpcCall(ctx, p.grpc, p.grpcAddr, modelInferPath, msg)
			if err != nil {
				return noAnswer(err)
			}
			a := grpcAnswer(code, m, func() error {
				raw, err := rawOutputs(resp)
				if err != nil || len(raw) != 1 || len(raw[0]) != 4 {
					return fmt.Errorf("raw outputs %d (%v), want one float32", len(raw), err)
				}
				if got := math.Float32frombits(binary.LittleEndian.Uint32(raw[0])); got != seqSums[i] {
					return fmt.Errorf("sum %v, want %v", got, seqSums[i])
				}
				return nil
			})
			if a.class != classOK {
				a.label = fmt.Sprintf("step %d: %s", i, a.label)
				return a
			}
		}
		return answer{label: "3 steps OK", class: classOK}
	}
}

// longID is a v2 JSON request that starts and ends a sequence of an id of
// n bytes.
func longID(n int) []byte {
	return []byte(`{"parameters":{"sequence_id":"` + strings.Repeat("s", n) + `","sequence_start":true,"sequence_end":true},` +
		`"inputs":[{"name":"x","datatype":"FP32","shape":[1,1],"data":[1]}]}`)
}

// sequenceMix serves testdata/models/running_sum.onnx, stateful: valid
// sequences over /predict (X-Sequence-* headers), v2 JSON, gRPC and a
// WebSocket stream; long sequence ids (finding 4). The WebSocket attacks
// (finding 6) run beside the mix, in pools of their own.
func sequenceMix(_, name string) (*mix, error) {
	infer := "/v2/models/" + name + "/infer"
	stream := "/v2/models/" + name + "/stream"
	v1Step := func(i int, id string, x float32) *request {
		h := []string{"X-Sequence-Id", id}
		if i == 0 {
			h = append(h, "X-Sequence-Start", "true")
		}
		if i == len(seqSteps)-1 {
			h = append(h, "X-Sequence-End", "true")
		}
		return &request{method: "POST", path: "/predict", ctype: "application/json", headers: h,
			body: []byte(`{"x": [[` + formatF32(x) + `]]}`), want: `{"sum":[[` + formatF32(seqSums[i]) + `]]}`}
	}
	v2Step := func(i int, id string, x float32) *request {
		ps := `"sequence_id":"` + id + `"`
		if i == 0 {
			ps += `,"sequence_start":true`
		}
		if i == len(seqSteps)-1 {
			ps += `,"sequence_end":true`
		}
		return &request{method: "POST", path: infer, ctype: "application/json",
			body: []byte(`{"parameters":{` + ps + `},"inputs":[{"name":"x","datatype":"FP32","shape":[1,1],"data":[` + formatF32(x) + `]}]}`),
			want: `"name":"sum","datatype":"FP32","shape":[1,1],"data":[` + formatF32(seqSums[i]) + `]`}
	}
	grpcLongID := func(n int) []byte {
		return inferRequest(name, []param{{"sequence_id", strings.Repeat("s", n)}, {"sequence_start", true}, {"sequence_end", true}},
			tensorIn{name: "x", datatype: "FP32", shape: []int64{1, 1}, fp32: []float32{1}})
	}
	reqs := []*request{
		{name: "v1 sequence of three steps (X-Sequence-Id)", valid: true, weight: 10, flow: seqFlow(v1Step)},
		{name: "v2 JSON sequence of three steps", valid: true, weight: 10, flow: seqFlow(v2Step)},
		{name: "gRPC sequence of three steps", valid: true, weight: 8, flow: grpcSeqFlow(name)},
		{name: "WebSocket stream of three steps", valid: true, weight: 6, flow: func(ctx context.Context, p *process, _ *rand.Rand) answer {
			return p.wsFlow(ctx, stream, "sum", seqSteps, seqSums)
		}},

		// 4. Long sequence ids, on a request that starts and ends them.
		post("a sequence id of 1 MB, v2 JSON", false, 3, infer, "application/json", longID(1<<20)),
		post("a sequence id of 2 MB, v2 JSON", false, 2, infer, "application/json", longID(2<<20)),
		post("a sequence id of 4 MB, v2 JSON", false, 2, infer, "application/json", longID(4<<20)),
		post("a sequence id of 8 MB, v2 JSON", false, 1, infer, "application/json", longID(8<<20)),
		{name: "a sequence id of 1 MB, gRPC", weight: 2, flow: grpcFlow(grpcLongID(1<<20), nil)},
		{name: "a sequence id of 8 MB, gRPC", weight: 1, flow: grpcFlow(grpcLongID(8<<20), nil)},
		post("a sequence id of 1 MB, X-Sequence-Id", false, 2, "/predict", "application/json", []byte(`{"x": [[1]]}`),
			"X-Sequence-Id", strings.Repeat("s", 1<<20), "X-Sequence-Start", "true"),
		post("a step of a sequence never started", false, 2, infer, "application/json",
			[]byte(`{"parameters":{"sequence_id":"soak-never-started"},"inputs":[{"name":"x","datatype":"FP32","shape":[1,1],"data":[1]}]}`)),
		{name: "a stream of the state input", weight: 1, flow: func(ctx context.Context, p *process, _ *rand.Rand) answer {
			c, err := wsDial(ctx, p.addr, stream+"?input=state")
			if err == nil {
				c.c.Close()
				return answer{label: "upgraded", class: classServerErr, note: "a stream of the state input was upgraded"}
			}
			return wsAnswer(err, false)
		}},
	}
	return newMix(append(reqs, malformed(infer)[:4]...)), nil
}
