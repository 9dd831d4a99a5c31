package decode

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/svc-dev/svc/core/tensor"
)

// Class is one class of a classification: its label, its index on the
// class axis and its score (a probability after a softmax, otherwise the
// model's value).
type Class struct {
	Label string  `json:"label"`
	Index int     `json:"index"`
	Score float64 `json:"score"`
}

// Classifier decodes a classifier's scores into each item's top classes.
// The zero value gives the single best class of each item, labelled with
// its index, scored with the model's own values.
type Classifier struct {
	// Softmax applies a softmax over the class axis first; leave it off when
	// the model already outputs probabilities.
	Softmax bool
	// Sigmoid applies the logistic function to each score first, for a
	// multi-label classifier's logits (each class scored on its own).
	// Setting both Softmax and Sigmoid is an error.
	Sigmoid bool
	// TopK is how many classes each item gets: 1 when 0 or less, and at
	// most the number of classes.
	TopK int
	// Labels names the classes by index. It may be shorter than the class
	// axis, or empty: a class without a label gets its index in decimal.
	Labels []string
}

// sortAbove is the k from which top sorts the whole row instead of
// inserting into a short sorted list.
const sortAbove = 32

// Decode returns each item's TopK classes, best first: higher score first,
// NaN last, equal scores by lower index. t is [N, C], [C] (one item) or
// [N, 1, C]; N = 0 gives an empty list. Any other shape, a type other than
// a number, data that does not fill the shape, or C = 0 with N > 0 is an
// error.
func (c Classifier) Decode(t *tensor.Tensor) ([][]Class, error) {
	if c.Softmax && c.Sigmoid {
		return nil, fmt.Errorf("classify: softmax and sigmoid are both set: a classifier applies one")
	}
	vals, err := newFloats(t)
	if err != nil {
		return nil, fmt.Errorf("classify: %w", err)
	}
	n, classes, err := classifyShape(t.Shape)
	if err != nil {
		return nil, fmt.Errorf("classify: %w", err)
	}
	out := make([][]Class, n)
	if n == 0 {
		return out, nil
	}
	if classes == 0 {
		return nil, fmt.Errorf("classify: output of shape %s has no classes", tensor.FormatShape(t.Shape))
	}
	k := min(max(c.TopK, 1), classes)
	all := make([]Class, n*k)
	row := make([]float64, classes)
	order := make([]int, 0, min(k, sortAbove)+1)
	if k > sortAbove {
		order = make([]int, classes)
	}
	for i := range n {
		vals.row(row, i*classes)
		if c.Softmax {
			softmax(row)
		}
		if c.Sigmoid {
			sigmoid(row)
		}
		top := topK(order, row, k)
		item := all[i*k : (i+1)*k : (i+1)*k]
		for j, idx := range top {
			item[j] = Class{Label: c.label(idx), Index: idx, Score: row[idx]}
		}
		out[i] = item
	}
	return out, nil
}

// classifyShape reads the number of items and of classes from a
// classification output's shape; the data's length is known to match it.
func classifyShape(shape []int64) (n, classes int, err error) {
	switch {
	case len(shape) == 1:
		return 1, int(shape[0]), nil
	case len(shape) == 2:
		return int(shape[0]), int(shape[1]), nil
	case len(shape) == 3 && shape[1] == 1:
		return int(shape[0]), int(shape[2]), nil
	}
	return 0, 0, fmt.Errorf("output of shape %s is not a list of class scores: want [N, C], [C] or [N, 1, C]", tensor.FormatShape(shape))
}

// label names class i.
func (c Classifier) label(i int) string {
	if i < len(c.Labels) {
		return c.Labels[i]
	}
	return strconv.Itoa(i)
}

// before reports whether class a of row comes before class b: a higher
// score, a number before NaN, a lower index among equals.
func before(row []float64, a, b int) bool {
	x, y := row[a], row[b]
	if x > y {
		return true
	}
	if x < y {
		return false
	}
	if xn, yn := x != x, y != y; xn != yn {
		return yn
	}
	return a < b
}

// topK returns the indices of row's k first classes in order, using buf:
// an insertion into a sorted list of k for small k (one pass over the
// row), a sort of every index otherwise (buf then has len(row)).
func topK(buf []int, row []float64, k int) []int {
	if k > sortAbove {
		for i := range buf {
			buf[i] = i
		}
		slices.SortFunc(buf, func(a, b int) int {
			if before(row, a, b) {
				return -1
			}
			if before(row, b, a) {
				return 1
			}
			return 0
		})
		return buf[:k]
	}
	top := buf[:0]
	for i := range row {
		if len(top) == k && !before(row, i, top[k-1]) {
			continue
		}
		if len(top) < k {
			top = append(top, i)
		}
		j := len(top) - 1
		for ; j > 0 && before(row, i, top[j-1]); j-- {
			top[j] = top[j-1]
		}
		top[j] = i
	}
	return top
}
