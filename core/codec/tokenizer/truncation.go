package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
)

type truncation struct {
	maxLength int
	strategy  string // longest_first, only_first, only_second
	left      bool
}

func parseTruncation(raw json.RawMessage) (*truncation, error) {
	if isNull(raw) {
		return nil, nil
	}
	var t struct {
		Direction string `json:"direction"`
		MaxLength int    `json:"max_length"`
		Strategy  string `json:"strategy"`
		Stride    int    `json:"stride"`
	}
	if err := decode(raw, "truncation", &t); err != nil {
		return nil, err
	}
	if t.Stride != 0 {
		return nil, fmt.Errorf("truncation.stride %d is not supported (overflowing windows; only 0)", t.Stride)
	}
	out := &truncation{maxLength: t.MaxLength}
	switch t.Direction {
	case "Right", "right", "":
	case "Left", "left":
		out.left = true
	default:
		return nil, unsupported("truncation.direction", t.Direction)
	}
	switch t.Strategy {
	case "LongestFirst", "longest_first", "":
		out.strategy = "longest_first"
	case "OnlyFirst", "only_first":
		out.strategy = "only_first"
	case "OnlySecond", "only_second":
		out.strategy = "only_second"
	default:
		return nil, unsupported("truncation.strategy", t.Strategy)
	}
	return out, nil
}

// cut keeps n tokens of e, from the end the direction says.
func (t *truncation) cut(e *Encoding, n int) {
	if n >= e.Len() {
		return
	}
	if t.left {
		e.keep(e.Len()-n, e.Len())
	} else {
		e.keep(0, n)
	}
}

// apply truncates the encodings of one input to max tokens in all.
func (t *truncation) apply(encs []*Encoding, max int) error {
	if max <= 0 {
		for _, e := range encs {
			t.cut(e, 0)
		}
		return nil
	}
	total := 0
	for _, e := range encs {
		total += e.Len()
	}
	if total <= max {
		return nil
	}
	remove := total - max
	switch t.strategy {
	case "longest_first":
		if len(encs) == 1 {
			t.cut(encs[0], total-remove)
			return nil
		}
		n1, n2 := encs[0].Len(), encs[1].Len()
		swap := n1 > n2
		if swap {
			n1, n2 = n2, n1
		}
		if n1 > max {
			n2 = n1
		} else {
			n2 = maxInt(n1, max-n1)
		}
		if n1+n2 > max {
			n1 = max / 2
			n2 = n1 + max%2
		}
		if swap {
			n1, n2 = n2, n1
		}
		t.cut(encs[0], n1)
		t.cut(encs[1], n2)
		return nil
	}
	i := 0
	if t.strategy == "only_second" {
		if len(encs) < 2 {
			return errors.New("truncation error: second sequence not provided")
		}
		i = 1
	}
	if encs[i].Len() <= remove {
		return errors.New("truncation error: sequence to truncate too short to respect the provided max_length")
	}
	t.cut(encs[i], encs[i].Len()-remove)
	return nil
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

type padding struct {
	fixed    int // 0: BatchLongest
	left     bool
	multiple int
	id, typ  int64
	token    string
}

func parsePadding(raw json.RawMessage) (*padding, error) {
	if isNull(raw) {
		return nil, nil
	}
	var p struct {
		Strategy  json.RawMessage `json:"strategy"`
		Direction string          `json:"direction"`
		Multiple  *int            `json:"pad_to_multiple_of"`
		PadID     int64           `json:"pad_id"`
		PadTypeID int64           `json:"pad_type_id"`
		PadToken  string          `json:"pad_token"`
	}
	if err := decode(raw, "padding", &p); err != nil {
		return nil, err
	}
	out := &padding{id: p.PadID, typ: p.PadTypeID, token: p.PadToken}
	if p.Multiple != nil {
		out.multiple = *p.Multiple
	}
	switch p.Direction {
	case "Right", "right", "":
	case "Left", "left":
		out.left = true
	default:
		return nil, unsupported("padding.direction", p.Direction)
	}
	var name string
	var fixed struct {
		Fixed *int `json:"Fixed"`
	}
	switch {
	case json.Unmarshal(p.Strategy, &name) == nil && name == "BatchLongest":
	case json.Unmarshal(p.Strategy, &fixed) == nil && fixed.Fixed != nil:
		out.fixed = *fixed.Fixed
	default:
		return nil, unsupported("padding.strategy", string(p.Strategy))
	}
	return out, nil
}

// apply pads every encoding to the same length.
func (p *padding) apply(encs []Encoding) {
	if len(encs) == 0 {
		return
	}
	n := p.fixed
	if n == 0 {
		for _, e := range encs {
			n = maxInt(n, e.Len())
		}
	}
	if p.multiple > 0 && n%p.multiple > 0 {
		n += p.multiple - n%p.multiple
	}
	for i := range encs {
		p.pad(&encs[i], n)
	}
}

func (p *padding) pad(e *Encoding, n int) {
	k := n - e.Len()
	if k <= 0 {
		return
	}
	pad := &Encoding{}
	for range k {
		pad.IDs = append(pad.IDs, p.id)
		pad.TypeIDs = append(pad.TypeIDs, p.typ)
		pad.AttentionMask = append(pad.AttentionMask, 0)
		pad.SpecialTokensMask = append(pad.SpecialTokensMask, 1)
		pad.Offsets = append(pad.Offsets, [2]int{})
		pad.Tokens = append(pad.Tokens, p.token)
	}
	if p.left {
		pad.append(e)
		*e = *pad
		return
	}
	e.append(pad)
}
