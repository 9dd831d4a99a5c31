package main_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/svc-dev/svc/core/tensor"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	grpcapi "github.com/svc-dev/svc/transport/grpcapi"
	"github.com/svc-dev/svc/transport/oip"
	"github.com/svc-dev/svc/transport/rest"
)

// vectorTypes are vectors.onnx's inputs, in its order.
var vectorTypes = []struct {
	name string
	dt   tensor.DType
}{
	{"f32", tensor.Float32}, {"f64", tensor.Float64}, {"i8", tensor.Int8}, {"i16", tensor.Int16},
	{"i32", tensor.Int32}, {"i64", tensor.Int64}, {"u8", tensor.Uint8}, {"u16", tensor.Uint16},
	{"u32", tensor.Uint32}, {"u64", tensor.Uint64}, {"bool", tensor.Bool}, {"f16", tensor.Float16},
	{"bf16", tensor.BFloat16}, {"str", tensor.String},
}

// vectorValues is n elements of dt that depend on seed: requests that get
// one another's storage would answer with one another's values.
func vectorValues(dt tensor.DType, n, seed int) *tensor.Tensor {
	v := func(i int) int { return (i*7 + seed*13) % 101 }
	var data any
	switch dt {
	case tensor.Float32:
		data = fill(n, func(i int) float32 { return float32(v(i)) / 4 })
	case tensor.Float64:
		data = fill(n, func(i int) float64 { return float64(v(i)) / 8 })
	case tensor.Int8:
		data = fill(n, func(i int) int8 { return int8(v(i) - 50) })
	case tensor.Int16:
		data = fill(n, func(i int) int16 { return int16(v(i) * -300) })
	case tensor.Int32:
		data = fill(n, func(i int) int32 { return int32(v(i) * 100000) })
	case tensor.Int64:
		data = fill(n, func(i int) int64 { return int64(v(i)) << 40 })
	case tensor.Uint8:
		data = fill(n, func(i int) uint8 { return uint8(v(i) + 100) })
	case tensor.Uint16, tensor.Float16, tensor.BFloat16:
		// 0x3c00 + k: finite halves and bfloat16s.
		data = fill(n, func(i int) uint16 { return uint16(0x3c00 + v(i)) })
	case tensor.Uint32:
		data = fill(n, func(i int) uint32 { return uint32(v(i)) << 24 })
	case tensor.Uint64:
		data = fill(n, func(i int) uint64 { return uint64(v(i)) << 56 })
	case tensor.Bool:
		data = fill(n, func(i int) bool { return v(i)%3 == 0 })
	case tensor.String:
		data = fill(n, func(i int) string { return fmt.Sprint("s", v(i)) })
	}
	return &tensor.Tensor{DType: dt, Shape: []int64{int64(n)}, Data: data}
}

func fill[T any](n int, f func(int) T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = f(i)
	}
	return s
}

// vectorRequest is large (n elements) in input big and one element long
// in the others.
func vectorRequest(big, n, seed int) []*tensor.Tensor {
	in := make([]*tensor.Tensor, len(vectorTypes))
	for i, vt := range vectorTypes {
		k := 1
		if i == big {
			k = n
		}
		in[i] = vectorValues(vt.dt, k, seed+i)
	}
	return in
}

// TestLargeTensorsKeepTheirValues sends vectors.onnx requests large enough
// that their input and output storage comes from svc's tensor pools and
// goes back to them after each answer, from several clients at once over
// each protocol, and checks that every answer holds exactly its own
// request's values: a buffer reused while still in use would mix them.
func TestLargeTensorsKeepTheirValues(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	s := startServer(t, model("vectors.onnx"), "--grpc-port", port)
	gc := grpcClient(t, "127.0.0.1:"+port)
	oc := s.oipClient()
	rc := rest.NewClient(s.URL, client)
	outSpecs := make([]tensor.Spec, len(vectorTypes))
	for i, vt := range vectorTypes {
		outSpecs[i] = tensor.Spec{Name: vt.name + "_out", DType: vt.dt, Shape: []int64{-1}, Required: true}
	}
	// Large: at least 64 KiB in every numeric type (the pools' threshold).
	const n = 70000
	big := []int{0, 1, 2, 4, 5, 6, 8, 9, 10} // f32 f64 i8 i32 i64 u8 u32 u64 bool

	protocols := map[string]func(ctx context.Context, in []*tensor.Tensor) ([]*tensor.Tensor, error){
		"v1 JSON": func(ctx context.Context, in []*tensor.Tensor) ([]*tensor.Tensor, error) {
			body := []byte{'{'}
			for i, vt := range vectorTypes {
				if i > 0 {
					body = append(body, ',')
				}
				body = append(append(append(body, '"'), vt.name...), `":`...)
				body = tensorjson.AppendJSON(body, in[i])
			}
			body = append(body, '}')
			var out bytes.Buffer
			if _, err := rc.Predict(ctx, body, &out); err != nil {
				return nil, err
			}
			return rest.DecodeRequest(out.Bytes(), outSpecs)
		},
		"v2 binary": func(ctx context.Context, in []*tensor.Tensor) ([]*tensor.Tensor, error) {
			req := &oip.InferRequest{BinaryOutput: true}
			for i, vt := range vectorTypes {
				req.Inputs = append(req.Inputs, oip.InferInput{Name: vt.name, Tensor: in[i], Binary: vt.dt != tensor.String})
			}
			res, err := oc.Infer(ctx, "vectors", req)
			if err != nil {
				return nil, err
			}
			out := make([]*tensor.Tensor, len(vectorTypes))
			for i, vt := range vectorTypes {
				o := res.Output(vt.name + "_out")
				if o == nil {
					return nil, fmt.Errorf("no output %s_out", vt.name)
				}
				out[i] = &tensor.Tensor{DType: o.DType, Shape: o.Shape, Data: o.Data}
			}
			return out, nil
		},
		"gRPC raw": func(ctx context.Context, in []*tensor.Tensor) ([]*tensor.Tensor, error) {
			inputs := make([]grpcapi.Input, len(vectorTypes))
			for i, vt := range vectorTypes {
				inputs[i] = grpcapi.Input{Name: vt.name, Tensor: in[i]}
			}
			resp, err := gc.Infer(ctx, grpcapi.RawRequest("vectors", inputs...))
			if err != nil {
				return nil, err
			}
			return grpcapi.Outputs(resp)
		},
	}
	for name, infer := range protocols {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for c := 0; c < 4; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := 0; r < 5; r++ {
						seed := c*100 + r
						b := big[(c+r)%len(big)]
						in := vectorRequest(b, n, seed)
						got, err := infer(context.Background(), in)
						if err != nil {
							errs <- fmt.Errorf("client %d request %d: %w", c, r, err)
							return
						}
						for i, vt := range vectorTypes {
							if !reflect.DeepEqual(got[i].Data, in[i].Data) || !reflect.DeepEqual(got[i].Shape, in[i].Shape) {
								errs <- fmt.Errorf("client %d request %d (large %s): %s_out is not the request's own %s", c, r, vectorTypes[b].name, vt.name, vt.name)
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

// TestStringsKeepNULBytes sends strings with NUL bytes, empty strings and
// multi-byte characters through vectors.onnx: they come back as sent.
func TestStringsKeepNULBytes(t *testing.T) {
	t.Parallel()
	s := startServer(t, model("vectors.onnx"))
	body := `{"f32":[1.5],"f64":[2],"i8":[1],"i16":[1],"i32":[1],"i64":[1],"u8":[1],"u16":[1],"u32":[1],"u64":[1],"bool":[true],"f16":[0.5],"bf16":[2.5],` +
		`"str":["a\u0000b","","\u0000","ünï","tail\u0000"]}`
	r := s.predict(body)
	if r.Status != 200 {
		t.Fatalf("/predict: %d %s", r.Status, r.Body)
	}
	want := `"str_out":["a\u0000b","","\u0000","ünï","tail\u0000"]`
	if !bytes.Contains(r.Body, []byte(want)) {
		t.Fatalf("answer %s lacks %s", r.Body, want)
	}
}
