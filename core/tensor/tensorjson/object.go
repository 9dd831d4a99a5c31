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
	if err := x.Members(field); err != nil {
		return err
	}
	x.SkipSpace()
	if _, more := x.Peek(); more {
		return x.Unexpected("after top-level value")
	}
	return nil
}

// Members walks the members of an object whose '{' has just been consumed,
// through its closing '}': for each member it calls field with the key
// (valid only during the call) and the decoder at the member's value, which
// field must consume. Protocols use it for objects nested in their
// envelope; Object uses it for the body's top level.
func (x Decoder) Members(field func(key []byte) error) error {
	x.SkipSpace()
	if c, _ := x.Peek(); c == '}' {
		x.Advance(1)
		return nil
	}
	for {
		key, err := x.Key()
		if err != nil {
			return err
		}
		x.SkipSpace()
		if err := field(key); err != nil {
			return err
		}
		x.SkipSpace()
		switch c, _ := x.Peek(); c {
		case ',':
			x.Advance(1)
			x.SkipSpace()
		case '}':
			x.Advance(1)
			return nil
		default:
			return x.Unexpected("after object key:value pair")
		}
	}
}
