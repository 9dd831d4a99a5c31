package rest

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport"
)

// ParamDraw is the /predict query parameter that answers the picture with
// what the decoded outputs say drawn on it.
const ParamDraw = "draw"

// decodingOf reads what a /predict request says of its decoded outputs:
// the detection outputs' settings in its query (confidence, iou, max_det,
// classes, rle), and whether it asks for the picture drawn (draw=true, or
// for a model that can draw (codec.Set.Drawable: one image input and
// decoded outputs, or a pipeline's pictures) an Accept header naming
// image/png or image/jpeg before application/json): the drawing's
// media type (drawAsSent for draw=true alone), "" for JSON.
func decodingOf(r *http.Request, set *codec.Set, raw bool) (*codec.Decoding, string, error) {
	q := r.URL.Query()
	dec := set.NewDecoding()
	for _, name := range codec.DetectionParams() {
		if !q.Has(name) {
			continue
		}
		if err := dec.SetParam(name, q.Get(name)); err != nil {
			return nil, "", &tensorjson.Error{Message: "Query parameter " + err.Error()}
		}
	}
	// Accept asks for a drawing only of a model that can draw one: a
	// client that prefers pictures still gets JSON from any other.
	drawType := ""
	if set.Drawable() {
		drawType = acceptedDrawing(r.Header.Values("Accept"))
	}
	if q.Has(ParamDraw) {
		b := true
		if v := q.Get(ParamDraw); v != "" {
			var err error
			if b, err = strconv.ParseBool(v); err != nil {
				return nil, "", &tensorjson.Error{Message: fmt.Sprintf("Query parameter draw must be true or false, got '%s'", truncate(transport.Quote(v), 40))}
			}
		}
		switch {
		case !b:
			drawType = ""
		case drawType == "":
			drawType = drawAsSent
		}
	}
	if drawType != "" && raw {
		return nil, "", &tensorjson.Error{Message: "draw answers the picture with the decoded outputs drawn on it, raw the tensors: ask for one"}
	}
	if drawType != "" {
		dec.KeepPictures()
	}
	return dec, drawType, nil
}

// drawAsSent is a drawing asked for by draw=true alone: answered in the
// format of the picture sent (Decoding.SentType).
const drawAsSent = "as sent"

// acceptedDrawing is the drawing an Accept header asks for: image/png or
// image/jpeg when it names one before application/json (and with a
// non-zero q), "" otherwise.
func acceptedDrawing(accept []string) string {
	for _, line := range accept {
		for part := range strings.SplitSeq(line, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			if q, err := strconv.ParseFloat(params["q"], 64); err == nil && q <= 0 {
				continue
			}
			switch mt {
			case codec.DrawPNG, codec.DrawJPEG:
				return mt
			case "application/json", "*/*", "application/*":
				return ""
			}
		}
	}
	return ""
}

// writeDrawing answers the request's picture with res drawn on it.
func (h *Handler) writeDrawing(ctx context.Context, w http.ResponseWriter, dec *codec.Decoding, res core.Result, mediaType string) core.Outcome {
	if mediaType == drawAsSent {
		mediaType = dec.SentType()
	}
	var buf bytes.Buffer
	if err := dec.Draw(ctx, res, &buf, mediaType); err != nil {
		h.writeErr(w, err)
		return core.OutcomeOf(err)
	}
	w.Header().Set("Content-Type", mediaType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
	return core.OutcomeSuccess
}
