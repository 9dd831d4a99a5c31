package oip

import (
	"fmt"

	"github.com/svc-dev/svc/core/tensor/tensorjson"
	"github.com/svc-dev/svc/transport"
)

// Kind is what is wrong with a request that the protocol refuses. Each
// codec maps a kind to its own status, in one place: the REST handler to
// an HTTP status, transport/grpcapi to a gRPC code.
type Kind uint8

// The kinds of refusal.
const (
	// KindInvalid: the request is malformed or does not fit the model
	// (400, InvalidArgument).
	KindInvalid Kind = iota + 1
	// KindNotFound: it names another model or version (404, NotFound).
	KindNotFound
	// KindTooLarge: it holds more than a limit allows (413,
	// ResourceExhausted).
	KindTooLarge
	// KindUnavailable: the model cannot serve now (503, Unavailable).
	KindUnavailable
	// KindExhausted: a bound on what the server holds is reached, such as
	// sequence.max_active (429, ResourceExhausted).
	KindExhausted
)

// Error is a request the protocol refuses: what kind of refusal, and the
// message every codec sends as it is.
type Error struct {
	Kind    Kind
	Message string
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error of kind k.
func Errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) *Error { return Errorf(KindInvalid, format, args...) }

// UnknownModel refuses a request that names another model than served.
func UnknownModel(name, served string) *Error {
	return Errorf(KindNotFound, "Unknown model '%s'; this server serves '%s'", transport.Quote(name), served)
}

// UnknownVersion refuses a request for another version of the model than
// the one it has.
func UnknownVersion(version, model, has string) *Error {
	return Errorf(KindNotFound, "Unknown version '%s' of model '%s'; it has version '%s'", transport.Quote(version), model, has)
}

// elementCount is tensorjson.ElementCount as an *Error.
func elementCount(name string, shape []int64) (int64, error) {
	n, err := tensorjson.ElementCount(name, shape)
	if err != nil {
		return 0, invalid("%s", err.Message)
	}
	return n, nil
}
