// Command otlpsink is the OTLP/HTTP trace receiver of build/bench-tracing.sh:
// as cheap as a receiver can be, so that little of the cores it shares with
// the server goes to it. It answers every POST /v1/traces with an empty
// ExportTraceServiceResponse after reading the body and counting the spans
// in it (walking the protobuf's fields, decoding nothing else), and GET
// /count with the spans received so far, so that the benchmark can tell
// that none were dropped. It prints its address on its first line.
//
// It is a module of its own, with nothing but the standard library.
package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var spans, bad atomic.Int64
	bufs := sync.Pool{New: func() any { return new([]byte) }}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		bp := bufs.Get().(*[]byte)
		defer bufs.Put(bp)
		b := (*bp)[:0]
		for {
			if len(b) == cap(b) {
				b = append(b, 0)[:len(b)]
			}
			n, err := r.Body.Read(b[len(b):cap(b)])
			b = b[:len(b)+n]
			if err == io.EOF {
				break
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		*bp = b
		n, ok := countSpans(b)
		if !ok {
			bad.Add(1)
		}
		spans.Add(int64(n))
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("GET /count", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%d %d\n", spans.Load(), bad.Load())
	})
	fmt.Println(ln.Addr().String())
	if err := http.Serve(ln, mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// countSpans counts the spans of an ExportTraceServiceRequest: field 1
// (ResourceSpans), its field 2 (ScopeSpans), and that one's field 2 (Span).
// ok is false when the message is not well formed.
func countSpans(b []byte) (n int, ok bool) {
	ok = true
	each(b, 1, func(rs []byte) {
		each(rs, 2, func(ss []byte) {
			each(ss, 2, func([]byte) { n++ }, &ok)
		}, &ok)
	}, &ok)
	return n, ok
}

// each calls f with the bytes of every length-delimited field number num
// of message b, and clears ok on a malformed message.
func each(b []byte, num uint64, f func([]byte), ok *bool) {
	for len(b) > 0 {
		key, k := binary.Uvarint(b)
		if k <= 0 {
			*ok = false
			return
		}
		b = b[k:]
		switch key & 7 {
		case 0: // varint
			_, k = binary.Uvarint(b)
			if k <= 0 {
				*ok = false
				return
			}
			b = b[k:]
		case 1: // fixed64
			if len(b) < 8 {
				*ok = false
				return
			}
			b = b[8:]
		case 5: // fixed32
			if len(b) < 4 {
				*ok = false
				return
			}
			b = b[4:]
		case 2: // length-delimited
			l, k := binary.Uvarint(b)
			if k <= 0 || uint64(len(b)-k) < l {
				*ok = false
				return
			}
			if key>>3 == num {
				f(b[k : k+int(l)])
			}
			b = b[k+int(l):]
		default:
			*ok = false
			return
		}
	}
}
