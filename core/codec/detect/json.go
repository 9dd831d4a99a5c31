package detect

import (
	"math"
	"strconv"

	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

// AppendJSON appends one picture's detections as a JSON array, best
// first: {"label","index","score","box":{"x1","y1","x2","y2"}}, with
// "polygon" ([[x, y], ...]) and "mask" ({"size": [height, width],
// "counts": COCO's compressed RLE}) for segment and "keypoints"
// ([{"x","y","score"}], "score" when the model gives one) for pose.
// Numbers are the shortest decimal that reads back as the same float32;
// NaN and ±Inf are null.
func AppendJSON(dst []byte, dets []Detection) []byte {
	dst = append(dst, '[')
	for i := range dets {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = dets[i].appendJSON(dst)
	}
	return append(dst, ']')
}

// AppendBatchJSON appends one array per picture.
func AppendBatchJSON(dst []byte, items [][]Detection) []byte {
	dst = append(dst, '[')
	for i, dets := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendJSON(dst, dets)
	}
	return append(dst, ']')
}

// MarshalJSON writes d as AppendJSON writes each detection.
func (d Detection) MarshalJSON() ([]byte, error) { return d.appendJSON(nil), nil }

func (d *Detection) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"label":`...)
	dst = tensorjson.AppendString(dst, d.Label)
	dst = append(dst, `,"index":`...)
	dst = strconv.AppendInt(dst, int64(d.Index), 10)
	dst = append(dst, `,"score":`...)
	dst = appendFloat(dst, d.Score)
	dst = append(dst, `,"box":{"x1":`...)
	dst = appendFloat(dst, d.Box.X1)
	dst = append(dst, `,"y1":`...)
	dst = appendFloat(dst, d.Box.Y1)
	dst = append(dst, `,"x2":`...)
	dst = appendFloat(dst, d.Box.X2)
	dst = append(dst, `,"y2":`...)
	dst = appendFloat(dst, d.Box.Y2)
	dst = append(dst, '}')
	if d.Polygon != nil {
		dst = append(dst, `,"polygon":[`...)
		for i, p := range d.Polygon {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '[')
			dst = appendFloat(dst, p.X)
			dst = append(dst, ',')
			dst = appendFloat(dst, p.Y)
			dst = append(dst, ']')
		}
		dst = append(dst, ']')
	}
	if d.Mask != nil {
		dst = append(dst, `,"mask":{"size":[`...)
		dst = strconv.AppendInt(dst, int64(d.Mask.Height), 10)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, int64(d.Mask.Width), 10)
		dst = append(dst, `],"counts":`...)
		dst = tensorjson.AppendString(dst, d.Mask.String())
		dst = append(dst, '}')
	}
	if d.Keypoints != nil {
		dst = append(dst, `,"keypoints":[`...)
		for i, k := range d.Keypoints {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"x":`...)
			dst = appendFloat(dst, k.X)
			dst = append(dst, `,"y":`...)
			dst = appendFloat(dst, k.Y)
			if k.HasScore {
				dst = append(dst, `,"score":`...)
				dst = appendFloat(dst, k.Score)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// appendFloat writes f as the shortest decimal that reads back as f,
// null for NaN and ±Inf.
func appendFloat(dst []byte, f float32) []byte {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return append(dst, "null"...)
	}
	return strconv.AppendFloat(dst, float64(f), 'g', -1, 32)
}
