package main_test

import (
	"bufio"
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
)

// TestPayloadLoggerPictures: pictures sent as a form and as the whole
// body are logged as the client sent them, byte for byte with their
// content type (data_base64 in the file sink's lines), and the answers as
// the client got them.
func TestPayloadLoggerPictures(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "payloads.jsonl")
	cfg := fmt.Sprintf("models:\n  cls:\n    path: %s\n    inputs:\n      x:\n        image: {preset: paddleocr-cls}\n"+
		"    logger: {url: 'file://%s'}\n", thirdParty(t, "paddleocr-cls"), path)
	yml := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(yml, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	png, err := os.ReadFile(filepath.Join(repoRoot, "examples", "ocr", "line.png"))
	if err != nil {
		t.Fatal(err)
	}
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	w, _ := mw.CreateFormFile("x", "line.png")
	_, _ = w.Write(png)
	_ = mw.Close()
	s := startServer(t, "cls", "--config", yml)
	sent := map[string]logged{}
	for _, ask := range []struct {
		id, contentType string
		body            []byte
	}{{"form", mw.FormDataContentType(), form.Bytes()}, {"raw", "image/png", png}} {
		r := s.do(http.MethodPost, "/predict", ask.contentType, bytes.NewReader(ask.body), "X-Request-ID", ask.id)
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", ask.id, r.Status, r.Body)
		}
		sent[ask.id] = logged{reqType: ask.contentType, req: ask.body, respType: r.Header.Get("Content-Type"), resp: r.Body}
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("svc exited %d", code)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		e := cloudevents.NewEvent()
		if err := e.UnmarshalJSON(sc.Bytes()); err != nil {
			t.Fatalf("%v\n%s", err, sc.Text())
		}
		key := e.Type() + " " + e.ID()
		seen[key]++
		l, ok := sent[e.ID()]
		if !ok {
			t.Fatalf("event %s: no such request", key)
		}
		checkData(t, key, e, l, e.Type() == "org.kubeflow.serving.inference.request")
	}
	if len(seen) != 4 {
		t.Fatalf("events %v, want a request and a response for each of form and raw", seen)
	}
}
