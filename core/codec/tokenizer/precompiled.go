package tokenizer

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// charsmap is SentencePiece's compiled normalisation rules, the
// precompiled_charsmap of a Precompiled normalizer: a 4-byte little-endian
// size in bytes of a double-array trie (Darts-clone's layout: uint32
// units), the trie, then a blob of NUL-terminated replacement strings. The
// trie maps a byte string to the offset of its replacement in the blob.
type charsmap struct {
	units []uint32
	blob  []byte
	// ascii caches the lookup of every one-byte string: most text is
	// ASCII, and most of it maps to nothing.
	ascii [128]lookup
}

// lookup is the result of one search: the replacement, when found.
type lookup struct {
	repl  string
	found bool
}

func parseCharsmap(b64, path string) (*charsmap, error) {
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("%s.precompiled_charsmap: not base64: %w", path, err)
	}
	if len(data) < 4 {
		return nil, fmt.Errorf("%s.precompiled_charsmap: %d bytes, too short for a trie size", path, len(data))
	}
	size := binary.LittleEndian.Uint32(data)
	if size%4 != 0 || size == 0 || uint64(size) > uint64(len(data)-4) {
		return nil, fmt.Errorf("%s.precompiled_charsmap: trie size %d does not fit its %d bytes", path, size, len(data)-4)
	}
	m := &charsmap{units: make([]uint32, size/4), blob: data[4+size:]}
	for i := range m.units {
		m.units[i] = binary.LittleEndian.Uint32(data[4+4*i:])
	}
	for c := range m.ascii {
		m.ascii[c] = m.search(string(rune(c)))
	}
	return m, nil
}

// The fields of a double-array unit.
func unitHasLeaf(u uint32) bool  { return u>>8&1 == 1 }
func unitValue(u uint32) uint32  { return u & (1<<31 - 1) }
func unitLabel(u uint32) uint32  { return u & (1<<31 | 0xff) }
func unitOffset(u uint32) uint32 { return u >> 10 << ((u & (1 << 9)) >> 6) }

// search looks key's prefixes up and returns the replacement of the
// shortest one in the trie, as the reference does (its common prefix
// search lists them shortest first and it takes the first). A NUL byte
// ends the key. A trie that points outside itself or its blob matches
// nothing there.
func (m *charsmap) search(key string) lookup {
	if len(m.units) == 0 {
		return lookup{}
	}
	pos := unitOffset(m.units[0])
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == 0 {
			break
		}
		pos ^= uint32(c)
		if int(pos) >= len(m.units) {
			return lookup{}
		}
		u := m.units[pos]
		if unitLabel(u) != uint32(c) {
			return lookup{}
		}
		pos ^= unitOffset(u)
		if unitHasLeaf(u) {
			if int(pos) >= len(m.units) {
				return lookup{}
			}
			v := int(unitValue(m.units[pos]))
			if v > len(m.blob) {
				return lookup{}
			}
			end := v
			for end < len(m.blob) && m.blob[end] != 0 {
				end++
			}
			return lookup{string(m.blob[v:end]), true}
		}
	}
	return lookup{}
}

func (m *charsmap) find(key string) lookup {
	if len(key) == 1 && key[0] < utf8.RuneSelf {
		return m.ascii[key[0]]
	}
	return m.search(key)
}

func parsePrecompiled(raw json.RawMessage, path string) (normalizer, error) {
	var s struct {
		Charsmap *string `json:"precompiled_charsmap"`
	}
	if err := decode(raw, path, &s); err != nil {
		return nil, err
	}
	if s.Charsmap == nil {
		return nil, fmt.Errorf("%s: no precompiled_charsmap", path)
	}
	m, err := parseCharsmap(*s.Charsmap, path)
	if err != nil {
		return nil, err
	}
	return m.normalize, nil
}

// normalize rewrites the piece grapheme by grapheme (extended grapheme
// clusters), as the reference does: a grapheme under 6 bytes whose
// prefix is in the trie is replaced whole by that prefix's replacement;
// any other is looked up character by character, each character replaced
// by its own or kept.
func (m *charsmap) normalize(p *piece) {
	// Most text maps to itself: no change is listed until one is made
	// (dest nil), then the characters before it are.
	var dest []change
	begin := func(at int) {
		if dest == nil {
			dest = make([]change, 0, len(p.norm)+8)
			for _, r := range p.norm[:at] {
				dest = append(dest, change{r, 0})
			}
		}
	}
	rest, state := p.norm, -1
	for len(rest) > 0 {
		at := len(p.norm) - len(rest)
		var g string
		if rest[0] < utf8.RuneSelf && (len(rest) == 1 || rest[1] < utf8.RuneSelf && rest[0] != '\r') {
			// An ASCII character followed by another is a grapheme of
			// its own (only CR LF is not).
			g, rest, state = rest[:1], rest[1:], -1
		} else {
			g, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		}
		if len(g) < 6 {
			if l := m.find(g); l.found {
				begin(at)
				dest = replaceChanges(dest, g, l.repl)
				continue
			}
		}
		for i, r := range g {
			n := utf8.RuneLen(r)
			if r == utf8.RuneError {
				_, n = utf8.DecodeRuneInString(g[i:])
			}
			if l := m.find(g[i : i+n]); l.found {
				begin(at + i)
				dest = replaceChanges(dest, g[i:i+n], l.repl)
			} else if dest != nil {
				dest = append(dest, change{r, 0})
			}
		}
	}
	if dest != nil {
		p.transform(dest, 0)
	}
}

// replaceChanges appends the changes that replace old by repl: every
// character of repl replaces one, the last ones inserted when repl is
// longer, and the last change (which may be an earlier character's when
// repl is empty) removing the rest when it is shorter.
func replaceChanges(dest []change, old, repl string) []change {
	diff := utf8.RuneCountInString(repl) - utf8.RuneCountInString(old)
	start := len(dest)
	for _, r := range repl {
		dest = append(dest, change{r, 0})
	}
	switch {
	case diff > 0:
		for i := len(dest) - diff; i < len(dest); i++ {
			if i >= start {
				dest[i].ch = 1
			}
		}
	case diff < 0 && len(dest) > 0:
		dest[len(dest)-1].ch += diff
	}
	return dest
}
