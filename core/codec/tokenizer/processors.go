package tokenizer

import (
	"encoding/json"
	"fmt"
	"slices"
)

// postProcessor adds the special tokens around the encodings of one input
// (one, or two for a pair) and fixes their type ids and offsets.
type postProcessor interface {
	added(pair bool) int
	process(encs []*Encoding, addSpecial bool) []*Encoding
}

func parsePostProcessor(raw json.RawMessage, path string) (postProcessor, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c config
	if err := decode(raw, path, &c); err != nil {
		return nil, err
	}
	switch c.Type {
	case "BertProcessing", "RobertaProcessing":
		var b struct {
			Sep            [2]json.RawMessage `json:"sep"`
			Cls            [2]json.RawMessage `json:"cls"`
			TrimOffsets    *bool              `json:"trim_offsets"`
			AddPrefixSpace *bool              `json:"add_prefix_space"`
		}
		if err := decode(raw, path, &b); err != nil {
			return nil, err
		}
		var p clsSep
		for _, f := range []struct {
			raw json.RawMessage
			v   any
		}{{b.Sep[0], &p.sep}, {b.Sep[1], &p.sepID}, {b.Cls[0], &p.cls}, {b.Cls[1], &p.clsID}} {
			if err := decode(f.raw, path, f.v); err != nil {
				return nil, err
			}
		}
		p.roberta = c.Type == "RobertaProcessing"
		p.trim, p.prefixSpace = orTrue(b.TrimOffsets), orTrue(b.AddPrefixSpace)
		return &p, nil
	case "ByteLevel":
		var b byteLevelConfig
		if err := decode(raw, path, &b); err != nil {
			return nil, err
		}
		return byteLevelProcessor(b), nil
	case "TemplateProcessing":
		return parseTemplate(raw, path)
	case "Sequence":
		var s struct {
			Processors []json.RawMessage `json:"processors"`
		}
		if err := decode(raw, path, &s); err != nil {
			return nil, err
		}
		var seq sequenceProcessor
		for i, r := range s.Processors {
			p, err := parsePostProcessor(r, fmt.Sprintf("%s.processors[%d]", path, i))
			if err != nil {
				return nil, err
			}
			if p != nil {
				seq = append(seq, p)
			}
		}
		return seq, nil
	}
	return nil, unknownType(path, c.Type, knownPostProcessors)
}

type sequenceProcessor []postProcessor

func (s sequenceProcessor) added(pair bool) int {
	n := 0
	for _, p := range s {
		n += p.added(pair)
	}
	return n
}

func (s sequenceProcessor) process(encs []*Encoding, addSpecial bool) []*Encoding {
	for _, p := range s {
		encs = p.process(encs, addSpecial)
	}
	return encs
}

// special is an encoding of special tokens only.
func special(ids []int64, toks []string, typeID int64) *Encoding {
	n := len(ids)
	e := &Encoding{IDs: slices.Clone(ids), Tokens: slices.Clone(toks), TypeIDs: make([]int64, n),
		AttentionMask: make([]int64, n), SpecialTokensMask: make([]int64, n), Offsets: make([][2]int, n)}
	for i := range n {
		e.TypeIDs[i], e.AttentionMask[i], e.SpecialTokensMask[i] = typeID, 1, 1
	}
	return e
}

// clsSep is BertProcessing and RobertaProcessing.
type clsSep struct {
	sep, cls          string
	sepID, clsID      int64
	roberta           bool
	trim, prefixSpace bool
}

func (p *clsSep) added(pair bool) int {
	switch {
	case !pair:
		return 2
	case p.roberta:
		return 4
	}
	return 3
}

func (p *clsSep) process(encs []*Encoding, addSpecial bool) []*Encoding {
	if p.roberta {
		if p.trim {
			for _, e := range encs {
				trimOffsets(e, p.prefixSpace)
			}
		}
		for _, e := range encs {
			setTypeIDs(e, 0)
		}
	}
	if !addSpecial {
		return encs
	}
	cls := special([]int64{p.clsID}, []string{p.cls}, 0)
	sep := special([]int64{p.sepID}, []string{p.sep}, 0)
	out := []*Encoding{cls, encs[0], sep}
	if len(encs) > 1 {
		sep1 := special([]int64{p.sepID}, []string{p.sep}, 1)
		if p.roberta {
			sep0 := special([]int64{p.sepID}, []string{p.sep}, 0)
			out = append(out, sep0, encs[1], sep0)
		} else {
			out = append(out, encs[1], sep1)
		}
	}
	return out
}

func setTypeIDs(e *Encoding, id int64) {
	for i := range e.TypeIDs {
		e.TypeIDs[i] = id
	}
}

type byteLevelProcessor byteLevelConfig

func (byteLevelProcessor) added(bool) int { return 0 }

func (b byteLevelProcessor) process(encs []*Encoding, _ bool) []*Encoding {
	if b.TrimOffsets {
		for _, e := range encs {
			trimOffsets(e, b.AddPrefixSpace)
		}
	}
	return encs
}

// trimOffsets removes the spaces at the ends of byte-level tokens from
// their offsets (but the one the pre-tokenizer put before the first).
func trimOffsets(e *Encoding, addPrefixSpace bool) {
	space := byteChar[' ']
	isSpace := func(r rune) bool { return r == space || isWhitespace(r) }
	for i, tok := range e.Tokens {
		runes := []rune(tok)
		lead, trail := 0, 0
		for lead < len(runes) && isSpace(runes[lead]) {
			lead++
		}
		for trail < len(runes) && isSpace(runes[len(runes)-1-trail]) {
			trail++
		}
		o := &e.Offsets[i]
		if lead > 0 {
			if (i == 0 || o[0] == 0) && addPrefixSpace && lead == 1 {
				lead = 0
			}
			o[0] = min(o[0]+lead, o[1])
		}
		if trail > 0 && o[1] >= trail {
			o[1] = max(o[1]-trail, o[0])
		}
	}
}

type templatePiece struct {
	special string // "" for a sequence
	seq     int    // 0: A, 1: B
	typeID  int64
}

type templateProcessor struct {
	single, pair []templatePiece
	tokens       map[string]struct {
		IDs    []int64  `json:"ids"`
		Tokens []string `json:"tokens"`
	}
}

func parseTemplate(raw json.RawMessage, path string) (postProcessor, error) {
	type pieceJSON struct {
		Sequence *struct {
			ID     string `json:"id"`
			TypeID int64  `json:"type_id"`
		} `json:"Sequence"`
		SpecialToken *struct {
			ID     string `json:"id"`
			TypeID int64  `json:"type_id"`
		} `json:"SpecialToken"`
	}
	var t struct {
		Single []pieceJSON `json:"single"`
		Pair   []pieceJSON `json:"pair"`
	}
	var tp templateProcessor
	if err := decode(raw, path, &t); err != nil {
		return nil, err
	}
	var sp struct {
		SpecialTokens json.RawMessage `json:"special_tokens"`
	}
	if err := decode(raw, path, &sp); err != nil {
		return nil, err
	}
	if err := decode(sp.SpecialTokens, path+".special_tokens", &tp.tokens); err != nil {
		return nil, err
	}
	conv := func(list []pieceJSON, name string) ([]templatePiece, error) {
		var out []templatePiece
		for i, p := range list {
			switch {
			case p.Sequence != nil:
				seq := 0
				if p.Sequence.ID != "A" {
					seq = 1
				}
				out = append(out, templatePiece{seq: seq, typeID: p.Sequence.TypeID})
			case p.SpecialToken != nil:
				tok, ok := tp.tokens[p.SpecialToken.ID]
				if !ok || len(tok.IDs) != len(tok.Tokens) {
					return nil, fmt.Errorf("%s.%s[%d]: special token %q is not in special_tokens", path, name, i, p.SpecialToken.ID)
				}
				out = append(out, templatePiece{special: p.SpecialToken.ID, typeID: p.SpecialToken.TypeID})
			default:
				return nil, fmt.Errorf("%s.%s[%d]: neither Sequence nor SpecialToken", path, name, i)
			}
		}
		return out, nil
	}
	var err error
	if tp.single, err = conv(t.Single, "single"); err != nil {
		return nil, err
	}
	if tp.pair, err = conv(t.Pair, "pair"); err != nil {
		return nil, err
	}
	return &tp, nil
}

func (t *templateProcessor) added(pair bool) int {
	list := t.single
	if pair {
		list = t.pair
	}
	n := 0
	for _, p := range list {
		if p.special != "" {
			n += len(t.tokens[p.special].IDs)
		}
	}
	return n
}

func (t *templateProcessor) process(encs []*Encoding, addSpecial bool) []*Encoding {
	list := t.single
	if len(encs) == 2 {
		list = t.pair
	}
	var out []*Encoding
	for _, p := range list {
		if p.special == "" {
			if p.seq >= len(encs) {
				continue
			}
			e := encs[p.seq]
			setTypeIDs(e, p.typeID)
			out = append(out, e.clone())
			continue
		}
		if addSpecial {
			tok := t.tokens[p.special]
			out = append(out, special(tok.IDs, tok.Tokens, p.typeID))
		}
	}
	return out
}
