package providers

import (
	"fmt"
	"sort"
	"sync"

	"go.uber.org/fx"
)

// GroupTag is the fx value group every provider joins.
const GroupTag = `group:"providers"`

// AsProvider annotates a provider constructor so that its result joins the
// providers value group as a Provider.
func AsProvider(ctor any) any {
	return fx.Annotate(ctor, fx.As(new(Provider)), fx.ResultTags(GroupTag))
}

// registry holds the providers compiled into this binary. Provider packages
// fill it from init() through Register, the way database/sql drivers
// register; it is read-only once main runs.
var registry = struct {
	mu    sync.Mutex
	ctors map[string]func() Provider
}{ctors: map[string]func() Provider{}}

// Register adds a provider to the ones compiled into this binary. Provider
// packages call it from init() in their tagged file, and do nothing else
// there: ctor must not probe the machine. It panics on a name no package
// declared (Declare) or on a second registration of the same name.
func Register(name string, ctor func() Provider) {
	if !ValidName(name) {
		panic(fmt.Sprintf("providers: Register of unknown provider %q (not declared)", name))
	}
	if ctor == nil {
		panic(fmt.Sprintf("providers: Register of %q with a nil constructor", name))
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if _, dup := registry.ctors[name]; dup {
		panic(fmt.Sprintf("providers: Register called twice for %q", name))
	}
	registry.ctors[name] = ctor
}

// Compiled returns the names of the providers compiled into this binary,
// sorted.
func Compiled() []string {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	out := make([]string, 0, len(registry.ctors))
	for name := range registry.ctors {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Registered returns one instance of every compiled-in provider, highest
// priority first, for commands that run without fx (svc providers).
func Registered() Set {
	var ps []Provider
	for _, ctor := range constructors() {
		ps = append(ps, ctor())
	}
	return NewSet(SetParams{Providers: ps})
}

// registered puts every compiled-in provider into the value group.
func registered() fx.Option {
	var opts []fx.Option
	for _, ctor := range constructors() {
		opts = append(opts, fx.Provide(fx.Annotate(ctor, fx.ResultTags(GroupTag))))
	}
	return fx.Options(opts...)
}

// constructors returns the registered constructors, by name.
func constructors() []func() Provider {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	names := make([]string, 0, len(registry.ctors))
	for name := range registry.ctors {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]func() Provider, len(names))
	for i, name := range names {
		out[i] = registry.ctors[name]
	}
	return out
}

// Set is the providers in the value group, highest priority first.
type Set []Provider

// SetParams collects the value group.
type SetParams struct {
	fx.In
	Providers []Provider `group:"providers"`
}

// NewSet sorts the group by priority, then name: the group's own order
// means nothing.
func NewSet(p SetParams) Set {
	s := make(Set, 0, len(p.Providers))
	for _, pr := range p.Providers {
		if pr != nil {
			s = append(s, pr)
		}
	}
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

// Fallback is the provider to run on when the chosen one fails: CPU, which
// every ONNX Runtime library has (nil when it is not in the set).
func (s Set) Fallback() Provider {
	p, _ := s.Lookup(FallbackName)
	return p
}

// FallbackName is the provider svc falls back to.
const FallbackName = "cpu"

// Names returns the names in the set, in priority order.
func (s Set) Names() []string {
	out := make([]string, len(s))
	for i, p := range s {
		out[i] = p.Name()
	}
	return out
}
