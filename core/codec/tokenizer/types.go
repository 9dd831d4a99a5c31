package tokenizer

import (
	"fmt"
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
	// knownDecoders are the decoders of the Hugging Face library, which
	// Decode applies (TEI's /decode).
	knownDecoders = []string{"BPEDecoder", "ByteFallback", "ByteLevel", "CTC", "Fuse", "Metaspace", "Replace", "Sequence", "Strip", "WordPiece"}
)

// unknownType is the error for a component whose type svc does not
// reproduce: path names the component ("model", "normalizer.normalizers[1]"),
// known the types it does.
func unknownType(path, typ string, known []string) error {
	return fmt.Errorf("%s.type %q is not supported: svc knows %s", path, typ, strings.Join(known, ", "))
}
