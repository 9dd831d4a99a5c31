package providers

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Known describes one --provider value, whether or not this binary has it.
// Each provider package declares its own with Declare, from a file without
// build tags, so every binary knows every provider (providers/all imports
// them all) while only the tagged ones are compiled in.
type Known struct {
	// Name is the --provider value, and the build tag that compiles it in:
	// lower-case letters and digits.
	Name string
	// ORTName is ONNX Runtime's name for it, ending in ExecutionProvider.
	ORTName string
	// GOOS is the only operating system it builds for ("" = any).
	GOOS string
	// Priority orders automatic selection; higher wins. No two providers
	// share one.
	Priority int
	// Order places the name in the --provider value list (Names),
	// ascending, so the list keeps the specification's order whatever
	// order the packages initialize in. cpu has 100 to stay last; a new
	// provider takes the next free number below it.
	Order int
	// Needs says, for the README and 'svc providers', what it needs at run
	// time besides a build with its tag.
	Needs string
	// Builtin is true for the provider compiled into every binary, without
	// a build tag (cpu).
	Builtin bool
	// Explicit is true for a provider used only when --provider names it:
	// automatic selection passes over it (webgpu, whose adapter may be a
	// software rasterizer far slower than the CPU provider).
	Explicit bool
	// UsesDeviceID is true when providers.device_id selects its device.
	UsesDeviceID bool
	// CostlySessions is true when creating a session compiles the whole
	// model for the device (TensorRT builds its engines), so svc does not
	// create an extra session at start-up to report the node placement.
	CostlySessions bool
	// NewSettings returns a new pointer to a struct holding the provider's
	// own settings section (providers.<Name> in the configuration file)
	// with its defaults; the configuration decodes that section into it,
	// strictly, by the fields' yaml tags. Nil when the provider has no
	// section.
	NewSettings func() any
	// Starter is the section as 'svc init' writes it: the commented YAML
	// under "providers.<Name>:", unindented, every key with its default.
	// Set exactly when NewSettings is.
	Starter string
}

// declared is the table behind Info, filled by Declare.
var declared = struct {
	mu   sync.Mutex
	list []Known
}{}

// Declare records a provider's metadata. Provider packages call it while
// their package initializes, from an untagged file, and do nothing else
// there: no probing, no I/O. It is usually the initializer of a
// package-level variable, so it runs before any init() of the package (the
// one in the tagged file that calls Register). It returns k.
//
// Like database/sql's Register, it panics on a second declaration of the
// same name and on metadata that is not usable: an invalid name, GOOS or
// ONNX Runtime name, a name, ONNX Runtime name, priority or order another
// provider already has, no Needs text, settings without a starter snippet
// (or the other way round), or NewSettings not returning a new pointer to a
// struct.
func Declare(k Known) Known {
	declared.mu.Lock()
	defer declared.mu.Unlock()
	if err := k.check(declared.list); err != nil {
		panic(fmt.Sprintf("providers: Declare of %q: %v", k.Name, err))
	}
	declared.list = append(declared.list, k)
	return k
}

var identRE = regexp.MustCompile(`^[a-z][a-z0-9]*$`)

// check returns what makes k unusable beside the providers already declared.
func (k Known) check(others []Known) error {
	switch {
	case !identRE.MatchString(k.Name):
		return errors.New("the name must be lower-case letters and digits (it is a build tag and a --provider value)")
	case k.GOOS != "" && !identRE.MatchString(k.GOOS):
		return fmt.Errorf("GOOS %q is not a GOOS value", k.GOOS)
	case k.Builtin && k.GOOS != "":
		return errors.New("a builtin provider cannot be limited to one GOOS")
	case !strings.HasSuffix(k.ORTName, "ExecutionProvider"):
		return fmt.Errorf("ONNX Runtime name %q does not end in ExecutionProvider", k.ORTName)
	case k.Order <= 0:
		return errors.New("the order must be positive")
	case strings.TrimSpace(k.Needs) == "":
		return errors.New("no Needs text")
	case (k.NewSettings == nil) != (strings.TrimSpace(k.Starter) == ""):
		return errors.New("a settings section needs its starter snippet, and a snippet needs a section (NewSettings and Starter go together)")
	}
	if k.NewSettings != nil {
		if err := checkSettings(k.NewSettings); err != nil {
			return err
		}
	}
	for _, o := range others {
		switch {
		case o.Name == k.Name:
			return errors.New("declared twice")
		case o.ORTName == k.ORTName:
			return fmt.Errorf("ONNX Runtime name %s is %s's", k.ORTName, o.Name)
		case o.Priority == k.Priority:
			return fmt.Errorf("priority %d is %s's", k.Priority, o.Name)
		case o.Order == k.Order:
			return fmt.Errorf("order %d is %s's", k.Order, o.Name)
		}
	}
	return nil
}

// checkSettings checks that newSettings returns a new, non-nil pointer to a
// struct on every call (the configuration decodes into it in place).
func checkSettings(newSettings func() any) error {
	a, b := reflect.ValueOf(newSettings()), reflect.ValueOf(newSettings())
	if a.Kind() != reflect.Pointer || a.IsNil() || a.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("NewSettings returns %s, want a non-nil pointer to a struct", a.Type())
	}
	if b.Kind() != reflect.Pointer || a.Pointer() == b.Pointer() {
		return errors.New("NewSettings returns the same pointer twice, want a new one each call")
	}
	return nil
}

// KnownProviders returns every declared provider, highest priority first.
func KnownProviders() []Known {
	declared.mu.Lock()
	out := append([]Known(nil), declared.list...)
	declared.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Priority > out[j].Priority })
	return out
}

// Names lists every --provider value the service accepts, in the order the
// specification gives them (Known.Order).
func Names() []string {
	ks := KnownProviders()
	sort.Slice(ks, func(i, j int) bool { return ks[i].Order < ks[j].Order })
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.Name
	}
	return out
}

// NameList is Names joined with ", ", as usage texts and messages show it.
func NameList() string { return strings.Join(Names(), ", ") }

// Info returns what svc knows about a --provider value.
func Info(name string) (Known, bool) {
	declared.mu.Lock()
	defer declared.mu.Unlock()
	for _, k := range declared.list {
		if k.Name == name {
			return k, true
		}
	}
	return Known{}, false
}

// ValidName reports whether name is one of the declared provider values.
func ValidName(name string) bool {
	_, ok := Info(name)
	return ok
}

// RebuildHint is how to get a binary with the provider compiled in.
func (k Known) RebuildHint() string {
	hint := "go build -tags " + k.Name + " ./cmd/svc"
	switch k.GOOS {
	case "windows":
		hint += " (on Windows, or with GOOS=windows)"
	case "darwin":
		hint += " (on macOS)"
	}
	return hint
}

// NotCompiledError is returned when the asked-for provider is a valid value
// but not compiled into this binary.
type NotCompiledError struct{ Name string }

func (e *NotCompiledError) Error() string {
	k, _ := Info(e.Name)
	k.Name = e.Name
	return fmt.Sprintf("provider %q is not compiled into this binary; rebuild with: %s", e.Name, k.RebuildHint())
}

// UsageError is returned for a --provider value outside the allowed list.
type UsageError struct{ Name string }

func (e *UsageError) Error() string {
	return fmt.Sprintf("invalid --provider %q: allowed values are %s", e.Name, NameList())
}
