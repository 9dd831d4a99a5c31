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
	// FallbackReason is set when the requested provider is compiled in but
	// cannot run here, and Provider is the CPU fallback.
	FallbackReason string
	// Skipped lists, for automatic selection, the higher-priority providers
	// that were passed over and why.
	Skipped []Skip
}

// Skip is a provider that automatic selection passed over.
type Skip struct {
	Name   string
	Reason string
}

// Named is anything with a provider's name: a Provider, or the provider
// a session reports it runs on.
type Named interface{ Name() string }

// Note is the banner's remark on the provider that actually runs (nil:
// none yet): empty when it is the one chosen, else which provider could
// not be used.
func (c Choice) Note(running Named) string {
	wanted := c.Requested
	if wanted == "" && c.Provider != nil {
		wanted = c.Provider.Name()
	}
	switch {
	case c.FallbackReason != "":
		return fmt.Sprintf("fallback: %s not usable", wanted)
	case running != nil && c.Provider != nil && running.Name() != c.Provider.Name():
		return fmt.Sprintf("fallback: %s failed to start a session", c.Provider.Name())
	}
	return ""
}

// ErrNoProvider is returned when automatic selection finds nothing usable,
// which only happens in a binary without the CPU provider.
var ErrNoProvider = errors.New("no usable execution provider")

// Select picks the provider to run.
//
//   - requested outside Names: a *UsageError;
//   - requested valid but not compiled in: a *NotCompiledError naming the
//     build tag;
//   - requested compiled in but not usable here: the CPU fallback, with
//     FallbackReason set;
//   - nothing requested: the highest-priority usable provider that is not
//     Explicit.
func (s Set) Select(requested string, h Host) (Choice, error) {
	if requested != "" {
		if !ValidName(requested) {
			return Choice{}, &UsageError{Name: requested}
		}
		p, ok := s.Lookup(requested)
		if !ok {
			return Choice{}, &NotCompiledError{Name: requested}
		}
		err := p.Usable(h)
		if err == nil {
			return Choice{Provider: p, Requested: requested}, nil
		}
		fb := s.Fallback()
		if fb == nil || fb.Name() == p.Name() {
			return Choice{}, fmt.Errorf("provider %s is not usable here (%w) and there is no CPU provider to fall back to", requested, err)
		}
		return Choice{Provider: fb, Requested: requested, FallbackReason: err.Error()}, nil
	}
	var c Choice
	var reasons []error
	for _, p := range s {
		if k, ok := Info(p.Name()); ok && k.Explicit {
			c.Skipped = append(c.Skipped, Skip{Name: p.Name(), Reason: "used only when asked for (--provider " + p.Name() + ")"})
			continue
		}
		err := p.Usable(h)
		if err == nil {
			c.Provider = p
			return c, nil
		}
		c.Skipped = append(c.Skipped, Skip{Name: p.Name(), Reason: err.Error()})
		reasons = append(reasons, fmt.Errorf("%s: %w", p.Name(), err))
	}
	if len(reasons) == 0 {
		return Choice{}, fmt.Errorf("%w: no provider is compiled in", ErrNoProvider)
	}
	return Choice{}, fmt.Errorf("%w: %w", ErrNoProvider, errors.Join(reasons...))
}
