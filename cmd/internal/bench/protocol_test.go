package bench

import (
	"bytes"
	"testing"

	"github.com/svc-dev/svc/transport/oip"
)

func TestParseProtocol(t *testing.T) {
	tests := []struct {
		give    string
		want    Protocol
		wantErr bool
	}{
		{"", ProtocolV1, false},
		{"v1", ProtocolV1, false},
		{"V2-Binary", ProtocolV2Binary, false},
		{" v2-json ", ProtocolV2JSON, false},
		{"grpc", "", true},
		{"v2", "", true},
	}
	for _, tt := range tests {
		got, err := ParseProtocol(tt.give)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseProtocol(%q) = %q, %v; want %q, error %v", tt.give, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestEncodeV2: the v2 bodies carry the generated tensors, as JSON or as
// little-endian binary data after the JSON header, and ask for binary
// outputs only in binary mode.
func TestEncodeV2(t *testing.T) {
	plan, err := PlanInputs([]Input{{Name: "x", Type: "float32", Shape: []int64{-1, 3}, Required: true}, {Name: "ids", Type: "int64", Shape: []int64{2}, Required: true}}, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	tensors := GenerateTensors(plan, 3, 7)
	for _, binary := range []bool{false, true} {
		bodies, err := encodeV2(plan, tensors, binary)
		if err != nil {
			t.Fatal(err)
		}
		if len(bodies) != 3 {
			t.Fatalf("%d bodies", len(bodies))
		}
		for i, b := range bodies {
			header := b.body
			if binary {
				// 2×3 float32 and 2 int64 after the header.
				if b.headerLen < 0 || len(b.body)-b.headerLen != 6*4+2*8 {
					t.Fatalf("binary body %d: header %d of %d bytes", i, b.headerLen, len(b.body))
				}
				header = b.body[:b.headerLen]
				want := oip.AppendBinary(oip.AppendBinary(nil, tensors[i][0]), tensors[i][1])
				if !bytes.Equal(b.body[b.headerLen:], want) {
					t.Errorf("binary body %d: data differs from the tensors", i)
				}
			} else if b.headerLen != -1 {
				t.Fatalf("JSON body %d: header length %d", i, b.headerLen)
			}
			for _, want := range []string{`"name":"x","shape":[2,3],"datatype":"FP32"`, `"name":"ids","shape":[2],"datatype":"INT64"`} {
				if !bytes.Contains(header, []byte(want)) {
					t.Errorf("body %d lacks %s: %s", i, want, header)
				}
			}
			if got := bytes.Contains(header, []byte(`"binary_data_output":true`)); got != binary {
				t.Errorf("body %d: binary_data_output %v, want %v: %s", i, got, binary, header)
			}
		}
	}
	// The same values as the /predict bodies of the same seed.
	if !bytes.Equal(EncodeBodies(plan, tensors)[0], Generate(plan, 3, 7)[0]) {
		t.Error("GenerateTensors and Generate disagree")
	}
}
