package decode

import (
	"fmt"

	"github.com/svc-dev/svc/core/tensor"
)

// Text is one item's decoded text and its score.
type Text struct {
	Text  string  `json:"text"`
	Score float64 `json:"score"`
}

// CTC decodes the output of a recognizer trained with CTC (PaddleOCR's text
// recognition, CRNN models) into text, greedily.
type CTC struct {
	// Labels are the symbols, in class order, without the blank.
	Labels []string
	// Blank is the blank's class index: 0 by default (PaddleOCR); a
	// negative index counts from the end (-1: the last class).
	Blank int
	// Space appends " " as the last symbol, after Labels. nil decides from
	// the class axis: true when it has len(Labels)+2 classes (blank, labels
	// and space: PaddleOCR's use_space_char), false when len(Labels)+1.
	Space *bool
	// Softmax applies a softmax to each step's scores before its maximum
	// is taken as the step's probability, for models that output logits.
	// The text is the same either way; only the score changes.
	Softmax bool
}

// Decode returns each item's text: the argmax class of each step, repeats
// collapsed, blanks dropped. The score is the mean of the kept steps'
// maxima, 0 for an empty text. t is [N, T, C], or [T, C] for one item; a
// class axis that does not fit Labels (with or without the space) is an
// error that gives both numbers.
func (c CTC) Decode(t *tensor.Tensor) ([]Text, error) {
	vals, err := newFloats(t)
	if err != nil {
		return nil, fmt.Errorf("ctc: %w", err)
	}
	var n, steps, classes int
	switch len(t.Shape) {
	case 2:
		n, steps, classes = 1, int(t.Shape[0]), int(t.Shape[1])
	case 3:
		n, steps, classes = int(t.Shape[0]), int(t.Shape[1]), int(t.Shape[2])
	default:
		return nil, fmt.Errorf("ctc: output of shape %s is not a sequence of class scores: want [N, T, C] or [T, C]", tensor.FormatShape(t.Shape))
	}
	blank, space, err := c.layout(classes)
	if err != nil {
		return nil, fmt.Errorf("ctc: %w", err)
	}
	out := make([]Text, n)
	if n == 0 || steps == 0 {
		return out, nil
	}
	d := decoder{ctc: &c, blank: blank, space: space, row: make([]float64, classes)}
	for i := range n {
		out[i] = d.item(vals, i*steps*classes, steps)
	}
	return out, nil
}

// layout resolves the blank's index and whether the last symbol is a space
// for a class axis of the given length.
func (c CTC) layout(classes int) (blank int, space bool, err error) {
	labels := len(c.Labels)
	switch {
	case c.Space != nil:
		space = *c.Space
		want := labels + 1
		if space {
			want++
		}
		if classes != want {
			what := "blank and %d labels"
			if space {
				what = "blank, %d labels and a space"
			}
			return 0, false, fmt.Errorf("the output has %d classes, want %d ("+what+")", classes, want, labels)
		}
	case classes == labels+2:
		space = true
	case classes != labels+1:
		return 0, false, fmt.Errorf("the output has %d classes, want %d (blank and %d labels) or %d (blank, %d labels and a space)",
			classes, labels+1, labels, labels+2, labels)
	}
	blank = c.Blank
	if blank < 0 {
		blank += classes
	}
	if blank < 0 || blank >= classes {
		return 0, false, fmt.Errorf("blank index %d is outside the %d classes", c.Blank, classes)
	}
	return blank, space, nil
}

// decoder holds what Decode's items share.
type decoder struct {
	ctc   *CTC
	blank int
	space bool
	row   []float64
}

// item decodes the steps of one item, which start at off.
func (d *decoder) item(vals floats, off, steps int) Text {
	var text []byte
	sum, kept := 0.0, 0
	prev := -1
	for s := range steps {
		vals.row(d.row, off+s*len(d.row))
		best := argmax(d.row)
		if best >= 0 && best != d.blank && best != prev {
			text = append(text, d.symbol(best)...)
			p := d.row[best]
			if d.ctc.Softmax {
				softmax(d.row)
				p = d.row[best]
			}
			sum += p
			kept++
		}
		prev = best
	}
	if kept == 0 {
		return Text{}
	}
	return Text{Text: string(text), Score: sum / float64(kept)}
}

// symbol is the text of class i, which is not the blank.
func (d *decoder) symbol(i int) string {
	if i > d.blank {
		i--
	}
	if i < len(d.ctc.Labels) {
		return d.ctc.Labels[i]
	}
	return " " // the space, after the labels
}

// argmax is the index of row's largest number, the lowest among equals; -1
// when every entry is NaN (or row is empty).
func argmax(row []float64) int {
	best := -1
	for i, x := range row {
		if x == x && (best < 0 || x > row[best]) {
			best = i
		}
	}
	return best
}
