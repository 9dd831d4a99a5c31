package payload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/svc-dev/svc/core/config"
)

// fileEvents reads a file sink's events back: "TYPE ID" and the data's
// bytes.
func fileEvents(t *testing.T, path string) map[string][]byte {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	out := map[string][]byte{}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		var e struct{ ID, Type, DataBase64 string }
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal(raw["id"], &e.ID)
		_ = json.Unmarshal(raw["type"], &e.Type)
		data := []byte(raw["data"])
		if b64, ok := raw["data_base64"]; ok {
			_ = json.Unmarshal(b64, &e.DataBase64)
			data, _ = base64.StdEncoding.DecodeString(e.DataBase64)
		}
		key := e.Type + " " + e.ID
		if _, dup := out[key]; dup {
			t.Errorf("%s logged twice", key)
		}
		out[key] = data
	}
	return out
}

// TestStreams: a gRPC stream's requests, taken and then changed by the
// handler, and its responses, sent in order, and a WebSocket's messages
// are logged as ID/N pairs, as they were taken and sent, by mode; a
// sample of 0 logs none.
func TestStreams(t *testing.T) {
	for _, tt := range []struct {
		mode   string
		sample float64
		types  []string
	}{
		{"all", 1, []string{TypeRequest, TypeResponse}},
		{"request", 1, []string{TypeRequest}},
		{"response", 1, []string{TypeResponse}},
		{"all", 0, nil},
	} {
		t.Run(fmt.Sprintf("%s sample %v", tt.mode, tt.sample), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "payloads.jsonl")
			l := newLogger(t, settings(t, (&url.URL{Scheme: "file", Path: path}).String(), func(s *config.LoggerSettings) {
				s.Mode, s.Sample = tt.mode, tt.sample
			}))
			ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(RequestIDMetadata, "grpc"))
			g := l.GRPCStream(ctx, modelStreamInfer)
			if l.GRPCStream(context.Background(), modelInfer) != nil {
				t.Fatal("a unary method held as a stream")
			}
			want := map[string][]byte{}
			var sent [3]*wrapperspb.StringValue
			for i := range sent {
				sent[i] = wrapperspb.String("request " + string(rune('a'+i)))
				g.Received(sent[i])
				b, _ := proto.Marshal(sent[i])
				want[TypeRequest+" grpc/"+string(rune('0'+i))] = b
				sent[i].Value += " changed by the handler"
			}
			for i := range sent {
				resp := wrapperspb.String("answer " + string(rune('a'+i)))
				g.Sent(resp)
				b, _ := proto.Marshal(resp)
				want[TypeResponse+" grpc/"+string(rune('0'+i))] = b
			}
			ws := &streamLog{l: l, id: "ws", header: http.Header{}}
			for i, msg := range []string{`{"a":1}`, "\x01\x02"} {
				answer := ws.Request(i, "application/json", []byte(msg))
				want[TypeRequest+" ws/"+strconv.Itoa(i)] = []byte(msg)
				answer("application/json", []byte(`{"step":0}`))
				want[TypeResponse+" ws/"+strconv.Itoa(i)] = []byte(`{"step":0}`)
			}
			if err := l.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := fileEvents(t, path)
			var gotKeys, wantKeys []string
			for k := range got {
				gotKeys = append(gotKeys, k)
			}
			for k, v := range want {
				typ, _, _ := strings.Cut(k, " ")
				if !slices.Contains(tt.types, typ) {
					continue
				}
				wantKeys = append(wantKeys, k)
				if d, ok := got[k]; ok && !bytes.Equal(d, v) {
					t.Errorf("%s: %q, want %q", k, d, v)
				}
			}
			sort.Strings(gotKeys)
			sort.Strings(wantKeys)
			if !slices.Equal(gotKeys, wantKeys) {
				t.Errorf("events %v, want %v", gotKeys, wantKeys)
			}
		})
	}
}
