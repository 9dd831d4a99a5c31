package bench

import (
	"bytes"
	"slices"
	"testing"

	"github.com/svc-dev/svc/core/tensor"

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
		{"grpc", ProtocolGRPC, false},
		{"grpc-web", "", true},
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

// TestEncodeGRPC: the gRPC requests carry the generated tensors as raw
// little-endian contents, one per input, named and shaped by the plan.
func TestEncodeGRPC(t *testing.T) {
	plan, err := PlanInputs([]Input{{Name: "x", Type: "float32", Shape: []int64{-1, 3}, Required: true}, {Name: "ids", Type: "int64", Shape: []int64{2}, Required: true}}, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	tensors := GenerateTensors(plan, 3, 7)
	reqs := encodeGRPC("m", plan, tensors)
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, req := range reqs {
		if req.GetModelName() != "m" || len(req.GetInputs()) != 2 || len(req.GetRawInputContents()) != 2 {
			t.Fatalf("request %d = %v", i, req)
		}
		for j, in := range req.GetInputs() {
			want := tensors[i][j]
			if in.GetName() != plan[j].Name || !slices.Equal(in.GetShape(), want.Shape) {
				t.Errorf("request %d input %d: %s %v, want %s %v", i, j, in.GetName(), in.GetShape(), plan[j].Name, want.Shape)
			}
			if got := req.GetRawInputContents()[j]; !bytes.Equal(got, tensor.AppendRaw(nil, want)) {
				t.Errorf("request %d input %d: raw contents differ from the tensor's", i, j)
			}
		}
	}
	if in := reqs[0].GetInputs(); in[0].GetDatatype() != "FP32" || in[1].GetDatatype() != "INT64" {
		t.Errorf("datatypes %s %s, want FP32 INT64", in[0].GetDatatype(), in[1].GetDatatype())
	}
}
