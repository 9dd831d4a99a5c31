package decode

import (
	"math"
	"strconv"

	"github.com/svc-dev/svc/core/tensor/tensorjson"
)

// AppendClassesJSON appends the classes of every item as a JSON array
// with one array per item: [[{"label":"cat","index":3,"score":0.93}]].
func AppendClassesJSON(dst []byte, items [][]Class) []byte {
	return appendArray(dst, items, AppendClassListJSON)
}

// AppendClassListJSON appends one item's classes as a JSON array:
// [{"label":"cat","index":3,"score":0.93},...].
func AppendClassListJSON(dst []byte, classes []Class) []byte {
	return appendArray(dst, classes, func(d []byte, c Class) []byte { return c.appendJSON(d) })
}

// AppendTextsJSON appends the texts as a JSON array with one object per
// item: [{"text":"abc","score":0.97}].
func AppendTextsJSON(dst []byte, texts []Text) []byte {
	return appendArray(dst, texts, func(d []byte, t Text) []byte { return t.appendJSON(d) })
}

// appendArray appends xs as a JSON array, each element written by each.
func appendArray[T any](dst []byte, xs []T, each func([]byte, T) []byte) []byte {
	dst = append(dst, '[')
	for i, x := range xs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = each(dst, x)
	}
	return append(dst, ']')
}

// MarshalJSON writes c as AppendClassListJSON writes each class, so that
// encoding/json gives the same float32 scores (encoding/json then escapes
// <, > and & in labels, unless told not to; the helpers do not).
func (c Class) MarshalJSON() ([]byte, error) { return c.appendJSON(nil), nil }

// MarshalJSON writes t as AppendTextsJSON writes each text.
func (t Text) MarshalJSON() ([]byte, error) { return t.appendJSON(nil), nil }

func (c Class) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"label":`...)
	dst = tensorjson.AppendString(dst, c.Label)
	dst = append(dst, `,"index":`...)
	dst = strconv.AppendInt(dst, int64(c.Index), 10)
	dst = append(dst, `,"score":`...)
	dst = appendScore(dst, c.Score)
	return append(dst, '}')
}

func (t Text) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"text":`...)
	dst = tensorjson.AppendString(dst, t.Text)
	dst = append(dst, `,"score":`...)
	dst = appendScore(dst, t.Score)
	return append(dst, '}')
}

// appendScore writes f as the shortest decimal that reads back as the
// same float32, null for NaN and ±Inf. A finite f beyond float32's range
// (a float64 model's raw value) is written in full.
func appendScore(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if x := float32(f); !math.IsInf(float64(x), 0) {
		return strconv.AppendFloat(dst, float64(x), 'g', -1, 32)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}
