package oip

import "github.com/svc-dev/svc/transport"

// The keys of the request's objects that the parser reads: each may come
// once (a key it skips may repeat, as it means nothing).
var (
	requestKeys = []string{"id", "parameters", "inputs", "outputs"}
	inputKeys   = []string{"name", "datatype", "shape", "parameters", "data"}
	outputKeys  = []string{"name", "parameters"}
)

// members walks the members of an object as the decoder's Members does,
// refusing a key the object repeats, which would otherwise take the last
// value: among known, the keys of an envelope object the parser reads
// (a bit each, no allocation); any key when known is nil, for a
// parameters object, whose few keys are kept. what names the object in
// the message.
func (p *parser) members(what func() string, known []string, field func(key []byte) error) error {
	var seen uint64
	var keys []string
	return p.d.Members(func(key []byte) error {
		repeated := false
		if known == nil {
			for _, k := range keys {
				repeated = repeated || k == string(key)
			}
			keys = append(keys, string(key))
		}
		for i, k := range known {
			if k == string(key) {
				repeated = seen&(1<<i) != 0
				seen |= 1 << i
			}
		}
		if repeated {
			return invalid("Duplicate key '%s' in %s", transport.Quote(string(key)), what())
		}
		return field(key)
	})
}
