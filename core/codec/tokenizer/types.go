package tokenizer

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The component types svc reproduces, by part, as the parsers' switches
// take them; an error for a type not among them names the ones that are
// (TestKnownTypes checks each list against its parser).
var (
	knownNormalizers    = []string{"BertNormalizer", "Lowercase", "NFC", "NFD", "NFKC", "NFKD", "Nmt", "Precompiled", "Prepend", "Replace", "Sequence", "Strip", "StripAccents"}
	knownPreTokenizers  = []string{"BertPreTokenizer", "ByteLevel", "CharDelimiterSplit", "Digits", "Metaspace", "Punctuation", "Sequence", "Split", "Whitespace", "WhitespaceSplit"}
	knownModels         = []string{"BPE", "Unigram", "WordPiece"}
	knownPostProcessors = []string{"BertProcessing", "ByteLevel", "RobertaProcessing", "Sequence", "TemplateProcessing"}
	// knownDecoders are the decoders of the Hugging Face library. svc
	// encodes only, so it applies none, but one it does not know says the
	// file is not one it can read with certainty.
	knownDecoders = []string{"BPEDecoder", "ByteFallback", "ByteLevel", "CTC", "Fuse", "Metaspace", "Replace", "Sequence", "Strip", "WordPiece"}
)

// unknownType is the error for a component whose type svc does not
// reproduce: path names the component ("model", "normalizer.normalizers[1]"),
// known the types it does.
func unknownType(path, typ string, known []string) error {
	return fmt.Errorf("%s.type %q is not supported: svc knows %s", path, typ, strings.Join(known, ", "))
}

// checkDecoder checks that the decoder of raw is one the library has
// (a Sequence's too); path names it in errors.
func checkDecoder(raw json.RawMessage, path string) error {
	if isNull(raw) {
		return nil
	}
	var c struct {
		Type     string            `json:"type"`
		Decoders []json.RawMessage `json:"decoders"`
	}
	if err := decode(raw, path, &c); err != nil {
		return err
	}
	if !slices.Contains(knownDecoders, c.Type) {
		return unknownType(path, c.Type, knownDecoders)
	}
	for i, d := range c.Decoders {
		if err := checkDecoder(d, fmt.Sprintf("%s.decoders[%d]", path, i)); err != nil {
			return err
		}
	}
	return nil
}
