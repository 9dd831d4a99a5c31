package tensorjson

import "errors"

// ErrNotObject is returned by Decoder.Object for a well-formed JSON body
// whose top-level value is not an object; the protocol words its own
// message for it.
var ErrNotObject = errors.New("tensorjson: the body is not a JSON object")

// Object walks the JSON object that makes up the whole body: for each
// member it calls field with the key (valid only during the call) and the
// decoder at the member's value, which field must consume (with Value,
// SkipValue or a nested Object-like walk). Malformed JSON, including
// anything after the object, is an *Error; a well-formed non-object is
// ErrNotObject. Errors from field are returned as they are.
func (x Decoder) Object(field func(key []byte) error) error {
	x.SkipSpace()
	c, ok := x.Peek()
	if !ok {
		return x.Unexpected("looking for beginning of value")
	}
	if c != '{' {
		if err := x.SkipValue(); err != nil {
			return err
		}
		x.SkipSpace()
		if _, more := x.Peek(); more {
			return x.Unexpected("after top-level value")
		}
		return ErrNotObject
	}
	x.Advance(1)
	x.SkipSpace()
	if c, _ := x.Peek(); c == '}' {
		x.Advance(1)
	} else {
		for {
			key, kerr := x.Key()
			if kerr != nil {
				return kerr
			}
			x.SkipSpace()
			if err := field(key); err != nil {
				return err
			}
			x.SkipSpace()
			c, _ := x.Peek()
			if c == ',' {
				x.Advance(1)
				x.SkipSpace()
				continue
			}
			if c == '}' {
				x.Advance(1)
				break
			}
			return x.Unexpected("after object key:value pair")
		}
	}
	x.SkipSpace()
	if _, more := x.Peek(); more {
		return x.Unexpected("after top-level value")
	}
	return nil
}
