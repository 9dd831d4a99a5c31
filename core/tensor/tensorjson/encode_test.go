package tensorjson

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/svc-dev/svc/core/tensor"
)

func TestAppendJSON(t *testing.T) {
	nan32 := float32(math.NaN())
	inf32 := float32(math.Inf(1))
	cases := []struct {
		name string
		t    *tensor.Tensor
		want string
	}{
		{"nil", nil, `null`},
		{"float32 matrix", &tensor.Tensor{DType: tensor.Float32, Shape: []int64{2, 3}, Data: []float32{1, 2.5, -3, 0.1, 1e6, 1e-7}}, `[[1,2.5,-3],[0.1,1e+06,1e-07]]`},
		{"float32 specials", &tensor.Tensor{DType: tensor.Float32, Shape: []int64{6}, Data: []float32{nan32, inf32, -inf32, float32(math.Copysign(0, -1)), 0, 3.4028235e38}}, `[null,null,null,-0,0,3.4028235e+38]`},
		{"float32 small", &tensor.Tensor{DType: tensor.Float32, Shape: []int64{4}, Data: []float32{1e-45, 123456, 1234567, 0.0001}}, `[1e-45,123456,1.234567e+06,0.0001]`},
		{"float64", &tensor.Tensor{DType: tensor.Float64, Shape: []int64{5}, Data: []float64{0.1, math.NaN(), math.Inf(-1), 1e21, -1.5e-300}}, `[0.1,null,null,1e+21,-1.5e-300]`},
		{"float64 -0", &tensor.Tensor{DType: tensor.Float64, Shape: []int64{}, Data: []float64{math.Copysign(0, -1)}}, `-0`},
		{"float16", &tensor.Tensor{DType: tensor.Float16, Shape: []int64{5}, Data: []uint16{0x3c00, 0xc100, 0x7bff, 0x7c00, 0x7e00}}, `[1,-2.5,65504,null,null]`},
		{"float16 tiny", &tensor.Tensor{DType: tensor.Float16, Shape: []int64{2}, Data: []uint16{0x0001, 0x3555}}, `[5.9604645e-08,0.33325195]`},
		{"bfloat16", &tensor.Tensor{DType: tensor.BFloat16, Shape: []int64{3}, Data: []uint16{0x3f80, 0xc020, 0x7f80}}, `[1,-2.5,null]`},
		{"uint16", &tensor.Tensor{DType: tensor.Uint16, Shape: []int64{2}, Data: []uint16{0x3c00, 65535}}, `[15360,65535]`},
		{"int8", &tensor.Tensor{DType: tensor.Int8, Shape: []int64{3}, Data: []int8{-128, 0, 127}}, `[-128,0,127]`},
		{"int16", &tensor.Tensor{DType: tensor.Int16, Shape: []int64{2}, Data: []int16{-32768, 32767}}, `[-32768,32767]`},
		{"int32", &tensor.Tensor{DType: tensor.Int32, Shape: []int64{1, 2}, Data: []int32{math.MinInt32, math.MaxInt32}}, `[[-2147483648,2147483647]]`},
		{"int64", &tensor.Tensor{DType: tensor.Int64, Shape: []int64{3}, Data: []int64{math.MinInt64, math.MaxInt64, 9007199254740993}}, `[-9223372036854775808,9223372036854775807,9007199254740993]`},
		{"uint8", &tensor.Tensor{DType: tensor.Uint8, Shape: []int64{2}, Data: []uint8{0, 255}}, `[0,255]`},
		{"uint32", &tensor.Tensor{DType: tensor.Uint32, Shape: []int64{1}, Data: []uint32{math.MaxUint32}}, `[4294967295]`},
		{"uint64", &tensor.Tensor{DType: tensor.Uint64, Shape: []int64{1}, Data: []uint64{math.MaxUint64}}, `[18446744073709551615]`},
		{"bool", &tensor.Tensor{DType: tensor.Bool, Shape: []int64{2, 1}, Data: []bool{true, false}}, `[[true],[false]]`},
		{"string", &tensor.Tensor{DType: tensor.String, Shape: []int64{2}, Data: []string{"a", `q"b\`}}, `["a","q\"b\\"]`},
		{"rank 0", &tensor.Tensor{DType: tensor.Float32, Shape: []int64{}, Data: []float32{2.5}}, `2.5`},
		{"rank 0 nil shape", &tensor.Tensor{DType: tensor.Int64, Shape: nil, Data: []int64{7}}, `7`},
		{"rank 0 string", &tensor.Tensor{DType: tensor.String, Shape: []int64{}, Data: []string{"x"}}, `"x"`},
		{"rank 0 empty data", &tensor.Tensor{DType: tensor.Float32, Shape: []int64{}, Data: []float32{}}, `null`},
		{"empty", &tensor.Tensor{DType: tensor.Float32, Shape: []int64{0}, Data: []float32{}}, `[]`},
		{"empty inner", &tensor.Tensor{DType: tensor.Float32, Shape: []int64{2, 0}, Data: []float32{}}, `[[],[]]`},
		{"empty outer", &tensor.Tensor{DType: tensor.Float32, Shape: []int64{0, 2}, Data: []float32{}}, `[]`},
		{"empty middle", &tensor.Tensor{DType: tensor.Int64, Shape: []int64{2, 0, 3}, Data: []int64{}}, `[[],[]]`},
		{"empty deep", &tensor.Tensor{DType: tensor.Bool, Shape: []int64{1, 2, 1, 0}, Data: []bool{}}, `[[[[]],[[]]]]`},
		{"rank 3", &tensor.Tensor{DType: tensor.Int8, Shape: []int64{2, 2, 2}, Data: []int8{1, 2, 3, 4, 5, 6, 7, 8}}, `[[[1,2],[3,4]],[[5,6],[7,8]]]`},
		{"ones", &tensor.Tensor{DType: tensor.Int8, Shape: []int64{1, 1, 1}, Data: []int8{9}}, `[[[9]]]`},
		{"mismatched data is flat", &tensor.Tensor{DType: tensor.Float32, Shape: []int64{2, 2}, Data: []float32{1, 2, 3}}, `[1,2,3]`},
		{"negative dim is flat", &tensor.Tensor{DType: tensor.Float32, Shape: []int64{-1, 2}, Data: []float32{1, 2}}, `[1,2]`},
		{"huge empty shape is flat", &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1 << 40, 1 << 20, 0}, Data: []float32{}}, `[]`},
		{"nil data", &tensor.Tensor{DType: tensor.Float32, Shape: []int64{2}, Data: nil}, `[]`},
		{"wrong data type", &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1}, Data: []complex64{1}}, `[]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := string(AppendJSON(nil, c.t))
			if got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("invalid JSON: %s", got)
			}
			// Appending keeps what is already in the buffer.
			if got := string(AppendJSON([]byte("x="), c.t)); got != "x="+c.want {
				t.Errorf("append: got %s", got)
			}
		})
	}
}

func TestAppendJSONStrings(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", `""`},
		{"plain text", `"plain text"`},
		{`"quoted" \ back`, `"\"quoted\" \\ back"`},
		{"tab\tnl\ncr\r", `"tab\u0009nl\u000acr\u000d"`},
		{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001f` + "\x7f" + `"`},
		{"héllo 中文 😀", `"héllo 中文 😀"`},
		{"bad \xff utf8 \xe4\xb8", `"bad \ufffd utf8 \ufffd\ufffd"`},
		{"line\u2028para\u2029", `"line\u2028para\u2029"`},
		{"</script>&", `"</script>&"`},
	}
	for _, c := range cases {
		got := string(AppendJSON(nil, &tensor.Tensor{DType: tensor.String, Shape: []int64{}, Data: []string{c.in}}))
		if got != c.want {
			t.Errorf("%q: got %s, want %s", c.in, got, c.want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("%q: %v", c.in, err)
		}
		if utf8.ValidString(c.in) && back != c.in {
			t.Errorf("%q: read back as %q", c.in, back)
		}
	}
}

// TestAppendFloat32Shortest checks float32 output against strconv for
// values from every binade, including those the fast path declines.
func TestAppendFloat32Shortest(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	check := func(x float32) {
		want := "null"
		if !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) {
			want = strconv.FormatFloat(float64(x), 'g', -1, 32)
		}
		if got := string(appendFloat32(nil, x)); got != want {
			t.Fatalf("%08x: got %s, want %s", math.Float32bits(x), got, want)
		}
	}
	for i := 0; i < iterations(2000000); i++ {
		switch i % 4 {
		case 0:
			check(math.Float32frombits(r.Uint32()))
		case 1:
			check(r.Float32()*2 - 1)
		case 2:
			check(float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(20)-10))))
		case 3: // short decimals, and their neighbours
			x := float32(r.IntN(100000)) / float32(math.Pow(10, float64(r.IntN(8))))
			check(x)
			check(math.Nextafter32(x, 0))
			check(math.Nextafter32(x, 10))
		}
	}
	// Every power of two, and its neighbours (asymmetric intervals).
	for e := -149; e <= 127; e++ {
		x := float32(math.Ldexp(1, e))
		check(x)
		check(math.Nextafter32(x, 0))
		check(math.Nextafter32(x, float32(math.Inf(1))))
	}
	// All floats with a short mantissa pattern in every binade.
	for b := uint32(0); b < 0x7f800000; b += 0x7ffff {
		check(math.Float32frombits(b))
		check(math.Float32frombits(b + 1))
	}
}

func TestAppendFloat64Shortest(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for i := 0; i < 200000; i++ {
		x := math.Float64frombits(r.Uint64())
		want := "null"
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			want = strconv.FormatFloat(x, 'g', -1, 64)
		}
		if got := string(appendFloat64(nil, x)); got != want {
			t.Fatalf("%v: got %s, want %s", x, got, want)
		}
	}
}

func TestHalfConversions(t *testing.T) {
	type conv struct {
		name    string
		to32    func(uint16) float32
		from32  func(float32) uint16
		from64  func(float64) uint16
		maxBits uint16 // largest finite positive value
	}
	for _, c := range []conv{
		{"float16", tensor.Float16ToFloat32, tensor.Float32ToFloat16, tensor.Float64ToFloat16, 0x7bff},
		{"bfloat16", tensor.BFloat16ToFloat32, tensor.Float32ToBFloat16, tensor.Float64ToBFloat16, 0x7f7f},
	} {
		t.Run(c.name, func(t *testing.T) {
			for h := uint32(0); h <= 0xffff; h++ {
				x := c.to32(uint16(h))
				if math.IsNaN(float64(x)) {
					if y := c.from32(x); !math.IsNaN(float64(c.to32(y))) {
						t.Fatalf("%04x: NaN became %04x", h, y)
					}
					if y := c.from64(float64(x)); !math.IsNaN(float64(c.to32(y))) {
						t.Fatalf("%04x: NaN (64) became %04x", h, y)
					}
					continue
				}
				if y := c.from32(x); y != uint16(h) {
					t.Fatalf("%04x -> %v -> %04x", h, x, y)
				}
				if y := c.from64(float64(x)); y != uint16(h) {
					t.Fatalf("%04x -> %v -> (64) %04x", h, x, y)
				}
			}
			// Each boundary between neighbours: the midpoint goes to the even
			// one, anything off it to the nearer one.
			for h := uint16(0); h < c.maxBits; h++ {
				lo, hi := float64(c.to32(h)), float64(c.to32(h+1))
				mid := (lo + hi) / 2
				even := h
				if h&1 == 1 {
					even = h + 1
				}
				for _, s := range []uint16{0, 0x8000} {
					sign := 1.0
					if s != 0 {
						sign = -1
					}
					if got := c.from64(sign * mid); got != even|s {
						t.Fatalf("mid %v: got %04x want %04x", sign*mid, got, even|s)
					}
					if got := c.from64(sign * math.Nextafter(mid, 0)); got != h|s {
						t.Fatalf("below mid %v: got %04x want %04x", mid, got, h|s)
					}
					if got := c.from64(sign * math.Nextafter(mid, math.Inf(1))); got != (h+1)|s {
						t.Fatalf("above mid %v: got %04x want %04x", mid, got, (h+1)|s)
					}
					if m32 := float32(mid); float64(m32) == mid { // always true: few bits
						if got := c.from32(float32(sign) * m32); got != even|s {
							t.Fatalf("mid32 %v: got %04x want %04x", m32, got, even|s)
						}
						if got := c.from32(float32(sign) * math.Nextafter32(m32, 0)); got != h|s {
							t.Fatalf("below mid32 %v: got %04x", m32, got)
						}
						if got := c.from32(float32(sign) * math.Nextafter32(m32, float32(math.Inf(1)))); got != (h+1)|s {
							t.Fatalf("above mid32 %v: got %04x", m32, got)
						}
					} else {
						t.Fatalf("midpoint %v not a float32", mid)
					}
				}
			}
			// Overflow: past the last midpoint is infinity.
			last, prev := float64(c.to32(c.maxBits)), float64(c.to32(c.maxBits-1))
			edge := last + (last-prev)/2
			if got := c.from64(edge); got != c.maxBits+1 {
				t.Errorf("edge %v: got %04x, want inf", edge, got)
			}
			if got := c.from64(math.Nextafter(edge, 0)); got != c.maxBits {
				t.Errorf("below edge: got %04x", got)
			}
			if got := c.from64(-1e300); got != 0x8000|(c.maxBits+1) {
				t.Errorf("-1e300: got %04x", got)
			}
			if got := c.from64(1e-300); got != 0 {
				t.Errorf("1e-300: got %04x", got)
			}
			if got := c.from64(math.Copysign(0, -1)); got != 0x8000 {
				t.Errorf("-0: got %04x", got)
			}
		})
	}
	if got := tensor.Float32ToFloat16(65504); got != 0x7bff {
		t.Errorf("65504 -> %04x", got)
	}
	if got := tensor.Float16ToFloat32(0x0001); got != float32(math.Ldexp(1, -24)) {
		t.Errorf("smallest subnormal -> %v", got)
	}
	if got := tensor.Float32ToBFloat16(1.00390625); got != 0x3f80 { // tie to even
		t.Errorf("1.00390625 -> %04x", got)
	}
}

// randomTensor makes a tensor of type d with random finite values.
func randomTensor(r *rand.Rand, d tensor.DType) *tensor.Tensor {
	rank := r.IntN(4)
	shape := make([]int64, rank)
	n := 1
	for i := range shape {
		shape[i] = int64(r.IntN(4))
		n *= int(shape[i])
	}
	var data any
	switch d {
	case tensor.Float32:
		v := make([]float32, n)
		for i := range v {
			for {
				v[i] = math.Float32frombits(r.Uint32())
				if !math.IsNaN(float64(v[i])) && !math.IsInf(float64(v[i]), 0) {
					break
				}
			}
		}
		data = v
	case tensor.Float64:
		v := make([]float64, n)
		for i := range v {
			for {
				v[i] = math.Float64frombits(r.Uint64())
				if !math.IsNaN(v[i]) && !math.IsInf(v[i], 0) {
					break
				}
			}
		}
		data = v
	case tensor.Float16, tensor.BFloat16, tensor.Uint16:
		v := make([]uint16, n)
		for i := range v {
			for {
				v[i] = uint16(r.Uint32())
				if d == tensor.Uint16 || v[i]&0x7fff < map[tensor.DType]uint16{tensor.Float16: 0x7c00, tensor.BFloat16: 0x7f80}[d] {
					break
				}
			}
		}
		data = v
	case tensor.Int8:
		v := make([]int8, n)
		for i := range v {
			v[i] = int8(r.Uint32())
		}
		data = v
	case tensor.Int16:
		v := make([]int16, n)
		for i := range v {
			v[i] = int16(r.Uint32())
		}
		data = v
	case tensor.Int32:
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(r.Uint32())
		}
		data = v
	case tensor.Int64:
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(r.Uint64())
		}
		data = v
	case tensor.Uint8:
		v := make([]uint8, n)
		for i := range v {
			v[i] = uint8(r.Uint32())
		}
		data = v
	case tensor.Uint32:
		v := make([]uint32, n)
		for i := range v {
			v[i] = r.Uint32()
		}
		data = v
	case tensor.Uint64:
		v := make([]uint64, n)
		for i := range v {
			v[i] = r.Uint64()
		}
		data = v
	case tensor.Bool:
		v := make([]bool, n)
		for i := range v {
			v[i] = r.IntN(2) == 0
		}
		data = v
	case tensor.String:
		v := make([]string, n)
		for i := range v {
			b := make([]rune, r.IntN(6))
			for j := range b {
				b[j] = []rune{'a', '"', '\\', '\n', 0, 'é', '😀', '\u2028', 0x7f}[r.IntN(9)]
			}
			v[i] = string(b)
		}
		data = v
	}
	return &tensor.Tensor{DType: d, Shape: shape, Data: data}
}

// TestRoundTrip encodes random tensors and decodes them back.
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for i := 0; i < iterations(20000); i++ {
		d := tensor.DType(1 + i%int(tensor.String))
		want := randomTensor(r, d)
		body := AppendJSON([]byte(`{"t": `), want)
		body = append(body, '}')
		out, err := decodeObject(body, []tensor.Spec{{Name: "t", DType: d, Shape: want.Shape, Required: true}})
		if err != nil {
			t.Fatalf("%v %s: %v", d, body, err)
		}
		got := out[0]
		if !reflect.DeepEqual(got.Shape, want.Shape) || !sameData(got.Data, want.Data) {
			t.Fatalf("%v %s: got %v %v", d, body, got.Shape, got.Data)
		}
	}
}

// sameData compares element slices, floats by bits (so -0 differs from 0).
func sameData(a, b any) bool {
	switch a := a.(type) {
	case []float32:
		b := b.([]float32)
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				return false
			}
		}
		return true
	case []float64:
		b := b.([]float64)
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// TestEncodeNoAllocations counts with the garbage collector off: the count
// covers every goroutine, and a collection would add what the runtime's
// cleanups allocate (the tensor pools trim themselves after each one).
func TestEncodeNoAllocations(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	ts := []*tensor.Tensor{
		{DType: tensor.Float32, Shape: []int64{10, 100}, Data: make([]float32, 1000)},
		{DType: tensor.String, Shape: []int64{3}, Data: []string{"a", "b\n", "\xff"}},
		{DType: tensor.Float16, Shape: []int64{2, 2}, Data: []uint16{1, 2, 3, 4}},
	}
	buf := make([]byte, 0, 1<<16)
	for _, tt := range ts {
		if n := testing.AllocsPerRun(20, func() { buf = AppendJSON(buf[:0], tt) }); n != 0 {
			t.Errorf("%v: %v allocations", tt.DType, n)
		}
	}
}

func TestEncodeLarge(t *testing.T) {
	c := encodeCases()[0]
	out := AppendJSON(nil, c.t)
	var back [][][]float32
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	data := c.t.Data.([]float32)
	if len(back) != 1 || len(back[0]) != 1000 || back[0][999][999] != data[len(data)-1] {
		t.Fatal("bad nesting")
	}
	if !strings.HasPrefix(string(out), "[[[") {
		t.Fatalf("prefix %s", out[:10])
	}
}

// TestShortFloat32Coverage checks that the fast float32 formatter handles
// almost all typical values itself (a performance property: the fallback,
// strconv, gives the same output but is slower).
func TestShortFloat32Coverage(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	fallbacks := 0
	const n = 200000
	for i := 0; i < n; i++ {
		x := r.Float32()
		if i%2 == 1 {
			x = float32(math.Abs(r.NormFloat64()) * 100)
		}
		if x == 0 {
			continue
		}
		if _, ok := shortFloat32(nil, x); !ok {
			fallbacks++
		}
	}
	if fallbacks > n/1000 {
		t.Errorf("%d of %d values fell back to strconv", fallbacks, n)
	}
}

// TestAppendArrays: the exported writers that the text routes use write
// valid JSON for every float, NaN and ±Inf as null.
func TestAppendArrays(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"floats", AppendFloat32Array(nil, []float32{0.5, -2, 1e-7}), "[0.5,-2,1e-07]"},
		{"empty", AppendFloat32Array(nil, nil), "[]"},
		{"not numbers", AppendFloat32Array([]byte("x"), []float32{nan, inf, -inf}), "x[null,null,null]"},
		{"float64", AppendFloat64(nil, 0.1), "0.1"},
		{"float64 NaN", AppendFloat64(nil, math.NaN()), "null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if string(tt.got) != tt.want {
				t.Errorf("got %s, want %s", tt.got, tt.want)
			}
		})
	}
}
