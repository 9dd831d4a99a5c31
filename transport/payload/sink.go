package payload

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// httpSink posts each event to a CloudEvents receiver in binary mode: the
// attributes as ce- headers, the payload as the body with its content type,
// the request's headers (redacted) beside them.
type httpSink struct {
	url     string
	client  *http.Client
	timeout time.Duration
}

func (s *httpSink) send(ctx context.Context, e *Event) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(e.Data))
	if err != nil {
		return fmt.Errorf("payload logger request: %w", err)
	}
	for k, v := range e.Header {
		req.Header[k] = v
	}
	req.Header.Set("Ce-Specversion", "1.0")
	req.Header.Set("Ce-Id", e.ID)
	req.Header.Set("Ce-Type", e.Type)
	req.Header.Set("Ce-Source", e.Source)
	req.Header.Set("Ce-Time", e.Time.UTC().Format(time.RFC3339Nano))
	if e.ContentType != "" {
		req.Header.Set("Content-Type", e.ContentType)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("payload logger delivery: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	switch {
	case resp.StatusCode < 300:
		return nil
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests &&
		resp.StatusCode != http.StatusRequestTimeout:
		return fmt.Errorf("payload logger delivery: %s: %w", resp.Status, errRefused)
	}
	return fmt.Errorf("payload logger delivery: %s", resp.Status)
}

func (s *httpSink) close() error {
	s.client.CloseIdleConnections()
	return nil
}

// fileSink writes each event as a line of JSON, the CloudEvents structured
// format: a JSON payload as data, any other as data_base64, the request's
// headers as the extension headers (a string of JSON). The file is
// rotated past maxSize: PATH becomes PATH.1, PATH.1 becomes PATH.2, up to
// PATH.MAXFILES.
type fileSink struct {
	mu       sync.Mutex
	path     string
	f        *os.File
	size     int64
	maxSize  int64
	maxFiles int
}

func openFile(path string, maxSize int64, maxFiles int) (*fileSink, error) {
	s := &fileSink{path: path, maxSize: maxSize, maxFiles: maxFiles}
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *fileSink) open() error {
	f, err := os.OpenFile(s.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("payload log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("payload log: %w", err)
	}
	s.f, s.size = f, st.Size()
	return nil
}

// line is one event in the CloudEvents JSON format.
type line struct {
	SpecVersion     string          `json:"specversion"`
	ID              string          `json:"id"`
	Type            string          `json:"type"`
	Source          string          `json:"source"`
	Time            string          `json:"time"`
	DataContentType string          `json:"datacontenttype,omitempty"`
	Headers         string          `json:"headers,omitempty"`
	Data            json.RawMessage `json:"data,omitempty"`
	DataBase64      string          `json:"data_base64,omitempty"`
}

// Line is e as the file sink writes it, without its newline.
func Line(e *Event) ([]byte, error) {
	l := line{SpecVersion: "1.0", ID: e.ID, Type: e.Type, Source: e.Source,
		Time: e.Time.UTC().Format(time.RFC3339Nano), DataContentType: e.ContentType}
	if len(e.Header) > 0 {
		// An extension attribute's value is a string: the headers as
		// a JSON object in one.
		h, err := json.Marshal(e.Header)
		if err != nil {
			return nil, fmt.Errorf("payload log headers: %w", err)
		}
		l.Headers = string(h)
	}
	if isJSON(e.ContentType) && json.Valid(e.Data) {
		var b bytes.Buffer
		if err := json.Compact(&b, e.Data); err == nil {
			l.Data = b.Bytes()
		}
	}
	if l.Data == nil && len(e.Data) > 0 {
		l.DataBase64 = base64.StdEncoding.EncodeToString(e.Data)
	}
	return json.Marshal(l)
}

func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

func (s *fileSink) send(_ context.Context, e *Event) error {
	b, err := Line(e)
	if err != nil {
		return fmt.Errorf("payload log: %w: %w", err, errRefused)
	}
	b = append(b, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		if err := s.open(); err != nil {
			return err
		}
	}
	if s.size > 0 && s.size+int64(len(b)) > s.maxSize {
		if err := s.rotate(); err != nil {
			return err
		}
	}
	n, err := s.f.Write(b)
	s.size += int64(n)
	if err != nil {
		return fmt.Errorf("payload log: %w", err)
	}
	return nil
}

// rotate shifts the files up by one, dropping the oldest, and opens a
// new one.
func (s *fileSink) rotate() error {
	if err := s.f.Close(); err != nil {
		return fmt.Errorf("payload log: %w", err)
	}
	s.f = nil
	if s.maxFiles == 0 {
		_ = os.Remove(s.path)
		return s.open()
	}
	_ = os.Remove(s.path + "." + strconv.Itoa(s.maxFiles))
	for i := s.maxFiles - 1; i >= 1; i-- {
		_ = os.Rename(s.path+"."+strconv.Itoa(i), s.path+"."+strconv.Itoa(i+1))
	}
	if err := os.Rename(s.path, s.path+".1"); err != nil {
		return fmt.Errorf("payload log: %w", err)
	}
	return s.open()
}

func (s *fileSink) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	if err != nil {
		return fmt.Errorf("payload log: %w", err)
	}
	return nil
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if c.Write(&m) != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}
