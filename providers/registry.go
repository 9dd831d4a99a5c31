package providers

import (
	"fmt"
	"sort"
	"strings"

	"go.uber.org/fx"
)

// GroupTag is the fx value group every provider joins.
const GroupTag = `group:"providers"`

// AsProvider annotates a provider constructor so that its result joins the
// providers value group.
func AsProvider(ctor any) any {
	return fx.Annotate(ctor, fx.As(new(Provider)), fx.ResultTags(GroupTag))
}

var registered []fx.Option

// Register adds a provider constructor to the providers compiled into this
// binary. Provider packages call it from init(); it does nothing else.
func Register(name string, ctor any) {
	registered = append(registered, fx.Provide(AsProvider(ctor)))
	compiled = append(compiled, name)
}

var compiled []string

// Compiled returns the names of the providers compiled into this binary,
// sorted.
func Compiled() []string {
	out := append([]string(nil), compiled...)
	sort.Strings(out)
	return out
}

// Set is the providers compiled in, highest priority first.
type Set []Provider

// SetParams collects the value group.
type SetParams struct {
	fx.In
	Providers []Provider `group:"providers"`
}

// NewSet sorts the group by priority (the group's order is not meaningful).
func NewSet(p SetParams) Set {
	s := append(Set(nil), p.Providers...)
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].Priority() != s[j].Priority() {
			return s[i].Priority() > s[j].Priority()
		}
		return s[i].Name() < s[j].Name()
	})
	return s
}

// Lookup finds a provider by --provider name.
func (s Set) Lookup(name string) (Provider, bool) {
	for _, p := range s {
		if p.Name() == name {
			return p, true
		}
	}
	return nil, false
}

// ValidName reports whether name is one of the spec's provider values.
func ValidName(name string) bool {
	for _, n := range Names {
		if n == name {
			return true
		}
	}
	return false
}

// ErrNotCompiled is returned when the asked-for provider is not in the binary.
type ErrNotCompiled struct{ Name string }

func (e *ErrNotCompiled) Error() string {
	return fmt.Sprintf("provider %q is not compiled into this binary; rebuild with: go build -tags %s ./cmd/svc", e.Name, e.Name)
}

// UsageError is returned for a --provider value outside the allowed list.
type UsageError struct{ Name string }

func (e *UsageError) Error() string {
	return fmt.Sprintf("invalid --provider %q: allowed values are %s", e.Name, strings.Join(Names, ", "))
}
