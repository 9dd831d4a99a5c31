package codec

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/budget"
	"github.com/svc-dev/svc/core/codec/image"
	"github.com/svc-dev/svc/core/tensor"
)

// errNotPicture is a string that is neither base64 nor a data: URL.
var errNotPicture = errors.New("not an image: send the encoded file as base64 or as a data: URL (data:image/png;base64,...)")

// Picture returns the encoded picture that a JSON string carries: a data:
// URL with base64 data, or plain base64 in the standard or URL-safe
// alphabet, padded or not, with or without line breaks.
func Picture(s string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(s, "data:"); ok {
		meta, data, found := strings.Cut(rest, ",")
		if !found || !strings.HasSuffix(meta, ";base64") {
			return nil, errors.New("a data: URL must carry base64 data (data:image/jpeg;base64,...)")
		}
		s = data
	}
	if strings.ContainsAny(s, "\r\n \t") {
		s = strings.NewReplacer("\r", "", "\n", "", " ", "", "\t", "").Replace(s)
	}
	s = strings.TrimRight(s, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	b, err := enc.DecodeString(s)
	if err != nil || len(s) == 0 {
		return nil, errNotPicture
	}
	return b, nil
}

// PictureBytes returns the encoded picture that a BYTES element carries:
// the element itself when it starts as an image file does, else the
// base64 or data: URL text it holds; an element that is neither is
// returned as it is, for the decoder to refuse with the formats it takes.
func PictureBytes(b []byte) []byte {
	if _, ok := image.Sniff(b); ok {
		return b
	}
	if p, err := Picture(string(b)); err == nil {
		return p
	}
	return b
}

// Pictures are the encoded pictures that one request sends to one image
// input.
type Pictures struct {
	Input *Image
	Data  [][]byte
	// Single says the client sent one picture, not a list, so messages
	// name no item.
	Single bool
}

// Tensors makes each image input's tensor from its pictures, in ps's
// order. Before any picture is decoded, the request's pictures are
// counted and their headers read, and what the limits do not allow is
// refused: more than limits.max_images pictures, or more than
// limits.max_request_pixels together (*core.LimitError, a 413); one
// picture too large or too costly, or not a picture (*core.InputError
// naming the input and the item, a 400). Then the memory that decoding
// them holds is reserved against the request's ticket (core/budget),
// and they are decoded; ctx is looked at between pictures and by the
// decoders' reads, and once it ends the work stops with core.Canceled.
func (s *Set) Tensors(ctx context.Context, ps []Pictures) ([]*tensor.Tensor, error) {
	total := 0
	for _, p := range ps {
		if len(p.Data) == 0 {
			return nil, &core.InputError{Input: p.Input.Name, Message: fmt.Sprintf("Input '%s' is an image input: send at least one image (%s)", p.Input.Name, formatList())}
		}
		total += len(p.Data)
	}
	input := ""
	if len(ps) == 1 {
		input = ps[0].Input.Name
	}
	if err := s.CountPictures(input, total); err != nil {
		return nil, err
	}
	lim := image.Limits{MaxPixels: s.lim.ImagePixels(), MaxScanPixels: s.lim.MaxJPEGScanPixels}
	batches := make([]*image.Batch, len(ps))
	var pixels, tensors, work int64
	for i, p := range ps {
		b, err := p.Input.Plan.Inspect(p.Data, lim)
		if err != nil {
			return nil, p.Input.refusal(err, p.Single)
		}
		if keeping(ctx) {
			b.Keep()
		}
		batches[i] = b
		pixels += b.Pixels
		tensors += b.TensorBytes
		work = max(work, b.WorkBytes)
	}
	if n := s.lim.MaxRequestPixels; n > 0 && pixels > n {
		return nil, &core.LimitError{Key: "limits.max_request_pixels", Message: fmt.Sprintf("%s pictures of %d pixels together, more than the %d one request may send (limits.max_request_pixels)", whose(ps), pixels, n)}
	}
	if err := budget.Reserve(ctx, tensors+work, "to decode its pictures"); err != nil {
		return nil, err
	}
	out := make([]*tensor.Tensor, len(ps))
	for i, b := range batches {
		t, err := b.Tensor(ctx)
		if err != nil {
			tensor.RecycleAll(out)
			if ctx.Err() != nil {
				return nil, core.Canceled(ctx)
			}
			return nil, ps[i].Input.refusal(err, ps[i].Single)
		}
		out[i] = t
		recordPictures(ctx, ps[i].Input.Index, b, ps[i].Data)
	}
	return out, nil
}

// CountPictures refuses a request that sends n pictures in all, to input
// (its name; "" for several), if that is more than limits.max_images:
// the protocols call it with what the request declares (a shape, the
// strings of a JSON body) before they decode the pictures, and Tensors
// with the pictures themselves.
func (s *Set) CountPictures(input string, n int) error {
	if s == nil || s.lim.MaxImages <= 0 || n <= s.lim.MaxImages {
		return nil
	}
	limit := s.lim.MaxImages
	who := "The request sends"
	if input != "" {
		who = fmt.Sprintf("Input '%s':", input)
	}
	return &core.LimitError{Key: "limits.max_images", Message: fmt.Sprintf("%s %d pictures, more than the %d one request may send (limits.max_images)", who, n, limit)}
}

// Tensor makes the input's tensor from one request's pictures (Set.Tensors
// for one image input).
func (s *Set) Tensor(ctx context.Context, im *Image, pictures [][]byte, single bool) (*tensor.Tensor, error) {
	ts, err := s.Tensors(ctx, []Pictures{{Input: im, Data: pictures, Single: single}})
	if err != nil {
		return nil, err
	}
	return ts[0], nil
}

// whose begins a message about a request's pictures: the input's when
// they go to one.
func whose(ps []Pictures) string {
	if len(ps) == 1 {
		return fmt.Sprintf("Input '%s':", ps[0].Input.Name)
	}
	return "The request sends"
}

// refusal is a picture's error as the client sees it: a *core.InputError
// naming the input, and the item unless the client sent one picture.
func (im *Image) refusal(err error, single bool) error {
	var ie *image.Error
	if !errors.As(err, &ie) {
		return &core.InputError{Input: im.Name, Message: fmt.Sprintf("Input '%s': %v", im.Name, err)}
	}
	if single {
		return &core.InputError{Input: im.Name, Message: fmt.Sprintf("Input '%s': %s", im.Name, ie.Msg)}
	}
	return &core.InputError{Input: im.Name, Message: fmt.Sprintf("Input '%s', item %d: %s", im.Name, ie.Index, ie.Msg)}
}
