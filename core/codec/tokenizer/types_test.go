package tokenizer

import (
	"strings"
	"testing"
)

// withPart is wordPieceJSON with the member key set to value (added when
// the fixture has none).
func withPart(t *testing.T, key, value string) string {
	t.Helper()
	for _, line := range strings.Split(wordPieceJSON, "\n") {
		if strings.HasPrefix(line, ` "`+key+`":`) && !strings.HasPrefix(line, ` "model":`) {
			return strings.Replace(wordPieceJSON, line, ` "`+key+`": `+value+`,`, 1)
		}
	}
	if key == "model" {
		at := strings.Index(wordPieceJSON, ` "model":`)
		return wordPieceJSON[:at] + ` "model": ` + value + "\n}"
	}
	return strings.Replace(wordPieceJSON, "{\n", "{\n \""+key+"\": "+value+",\n", 1)
}

// TestUnknownTypes: a part whose type svc does not know (a normalizer,
// pre-tokenizer, model, post-processor or decoder, alone or in a
// Sequence) is refused, the error naming the part, the type and the
// types svc knows.
func TestUnknownTypes(t *testing.T) {
	tests := []struct {
		key, value, want string
	}{
		{"model", `{"type": "QuantumPiece", "vocab": {}}`, `model.type "QuantumPiece" is not supported: svc knows BPE, Unigram, WordPiece`},
		{"model", `{"type": "WordLevel", "vocab": {}, "unk_token": "[UNK]"}`, `model.type "WordLevel" is not supported: svc knows BPE, Unigram, WordPiece`},
		{"normalizer", `{"type": "QuantumNorm"}`, `normalizer.type "QuantumNorm" is not supported: svc knows BertNormalizer, Lowercase, NFC, NFD, NFKC, NFKD, Nmt, Precompiled, Prepend, Replace, Sequence, Strip, StripAccents`},
		{"normalizer", `{"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "QuantumNorm"}]}`, `normalizer.normalizers[1].type "QuantumNorm" is not supported: svc knows BertNormalizer,`},
		{"pre_tokenizer", `{"type": "QuantumSplit"}`, `pre_tokenizer.type "QuantumSplit" is not supported: svc knows BertPreTokenizer, ByteLevel, CharDelimiterSplit, Digits, Metaspace, Punctuation, Sequence, Split, Whitespace, WhitespaceSplit`},
		{"post_processor", `{"type": "QuantumTemplate"}`, `post_processor.type "QuantumTemplate" is not supported: svc knows BertProcessing, ByteLevel, RobertaProcessing, Sequence, TemplateProcessing`},
		{"decoder", `{"type": "QuantumDecoder"}`, `decoder.type "QuantumDecoder" is not supported: svc knows BPEDecoder, ByteFallback, ByteLevel, CTC, Fuse, Metaspace, Replace, Sequence, Strip, WordPiece`},
		{"decoder", `{"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "QuantumDecoder"}]}`, `decoder.decoders[1].type "QuantumDecoder" is not supported: svc knows BPEDecoder,`},
		{"decoder", `{"prefix": "##"}`, `decoder.type "" is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.key+" "+tt.value, func(t *testing.T) {
			_, err := Parse([]byte(withPart(t, tt.key, tt.value)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse: %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// TestKnownTypes: every type an error says svc knows is one its parser
// takes: none is refused as an unknown type (a part may still want more
// fields than the bare type), and every known decoder parses.
func TestKnownTypes(t *testing.T) {
	parts := []struct {
		key   string
		known []string
	}{
		{"normalizer", knownNormalizers},
		{"pre_tokenizer", knownPreTokenizers},
		{"model", knownModels},
		{"post_processor", knownPostProcessors},
		{"decoder", knownDecoders},
	}
	for _, p := range parts {
		for _, typ := range p.known {
			t.Run(p.key+" "+typ, func(t *testing.T) {
				_, err := Parse([]byte(withPart(t, p.key, `{"type": "`+typ+`"}`)))
				if err != nil && strings.Contains(err.Error(), p.key+`.type "`+typ+`" is not supported`) {
					t.Fatalf("Parse: %v", err)
				}
				if p.key == "decoder" && err != nil {
					t.Fatalf("Parse with decoder %s: %v", typ, err)
				}
			})
		}
	}
	// The check reaches the parts: an unknown type of each is refused.
	for _, p := range parts {
		if _, err := Parse([]byte(withPart(t, p.key, `{"type": "Quantum"}`))); err == nil || !strings.Contains(err.Error(), p.key+`.type "Quantum"`) {
			t.Errorf("%s Quantum: %v", p.key, err)
		}
	}
}
