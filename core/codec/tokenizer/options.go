package tokenizer

// VocabSize is one past the largest id the tokenizer gives: the rows a
// model's word-embedding table needs.
func (t *Tokenizer) VocabSize() int {
	n := t.model.vocabSize()
	if t.added != nil {
		for id := range t.added.byID {
			n = max(n, id+1)
		}
	}
	return n
}

// PadID is the id and type id that padding tokens take: the
// tokenizer.json's padding, else 0 and 0.
func (t *Tokenizer) PadID() (id, typeID int64) {
	if t.pad == nil {
		return 0, 0
	}
	return t.pad.id, t.pad.typ
}

// WithTruncation returns a tokenizer like t that truncates to maxLength
// tokens, special tokens included (0: does not truncate), with the
// tokenizer.json's strategy and direction when it has them (else
// longest_first, from the right), and without its padding: a caller
// batching encodings pads them itself.
func (t *Tokenizer) WithTruncation(maxLength int) *Tokenizer {
	c := *t
	c.pad = nil
	switch {
	case maxLength <= 0:
		c.trunc = nil
	case t.trunc != nil:
		tr := *t.trunc
		tr.maxLength = maxLength
		c.trunc = &tr
	default:
		c.trunc = &truncation{maxLength: maxLength, strategy: "longest_first"}
	}
	return &c
}

// WithTruncationSide is WithTruncation cutting a longer input from the
// start (left) or the end, whatever the tokenizer.json says.
func (t *Tokenizer) WithTruncationSide(maxLength int, left bool) *Tokenizer {
	c := t.WithTruncation(maxLength)
	if c.trunc != nil {
		tr := *c.trunc
		tr.left = left
		c.trunc = &tr
	}
	return c
}

// TruncatesLeft reports whether the tokenizer cuts a longer input from
// its start.
func (t *Tokenizer) TruncatesLeft() bool { return t.trunc != nil && t.trunc.left }
