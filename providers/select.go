package providers

import (
	"errors"
	"fmt"
)

// Choice is the outcome of provider selection.
type Choice struct {
	// Provider is the provider to use.
	Provider Provider
	// Requested is the name the user asked for ("" = automatic).
	Requested string
	// FallbackReason is set when the requested provider could not be used
	// and Provider is the CPU fallback.
	FallbackReason string
}

// Select picks the provider to run: the requested one when it is compiled in
// and usable, else CPU with a reason; with no request, the highest-priority
// usable provider.
func (s Set) Select(requested string, h Host) (Choice, error) {
	if requested != "" {
		if !ValidName(requested) {
			return Choice{}, &UsageError{Name: requested}
		}
		p, ok := s.Lookup(requested)
		if !ok {
			return Choice{}, &ErrNotCompiled{Name: requested}
		}
		err := p.Usable(h)
		if err == nil {
			return Choice{Provider: p, Requested: requested}, nil
		}
		cpu, ok := s.Lookup("cpu")
		if !ok {
			return Choice{}, fmt.Errorf("provider %q is not usable (%v) and no CPU provider is compiled in", requested, err)
		}
		return Choice{Provider: cpu, Requested: requested, FallbackReason: err.Error()}, nil
	}
	var reasons []error
	for _, p := range s {
		err := p.Usable(h)
		if err == nil {
			return Choice{Provider: p}, nil
		}
		reasons = append(reasons, fmt.Errorf("%s: %w", p.Name(), err))
	}
	return Choice{}, fmt.Errorf("no usable execution provider: %w", errors.Join(reasons...))
}
