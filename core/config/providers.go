package config

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/svc-dev/svc/providers"
)

// Providers holds execution-provider options: providers.device_id, and a
// section providers.<name> for each provider that declares settings
// (providers.Known.NewSettings). This package names no provider: the
// sections are whatever the providers linked into the program declare.
type Providers struct {
	DeviceID int `yaml:"device_id"`
	// Settings holds each declared provider's section by provider name: a
	// pointer of the type the provider's NewSettings returns, holding its
	// defaults overlaid with the file's values. Default and Load fill in
	// every declared section.
	Settings map[string]any `yaml:"-"`
}

// defaultSettings returns every declared section with its defaults.
func defaultSettings() map[string]any {
	m := map[string]any{}
	for _, k := range providers.KnownProviders() {
		if k.NewSettings != nil {
			m[k.Name] = k.NewSettings()
		}
	}
	return m
}

// fillDefaults puts the defaults in for every declared section the file
// left out (or set to null).
func (p *Providers) fillDefaults() {
	if p.Settings == nil {
		p.Settings = map[string]any{}
	}
	for name, s := range defaultSettings() {
		if isNil(p.Settings[name]) {
			p.Settings[name] = s
		}
	}
}

// isNil reports whether v is nil or a nil pointer.
func isNil(v any) bool {
	rv := reflect.ValueOf(v)
	return !rv.IsValid() || rv.Kind() == reflect.Pointer && rv.IsNil()
}

// UnmarshalYAML decodes the providers section: device_id, and each
// provider's own section, strictly (an unknown key is an error, as
// everywhere else in the file), into the type the provider declared. A
// section no provider declared is an error naming the providers. Errors
// name their line in yaml's own words, so they read like the rest.
func (p *Providers) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: cannot unmarshal %s into config.Providers", n.Line, n.ShortTag())}}
	}
	// Decode over a copy: the defaults may be shared with another Config.
	settings := maps.Clone(p.Settings)
	if settings == nil {
		settings = map[string]any{}
	}
	var errs []string
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if line, dup := seen[key.Value]; dup {
			errs = append(errs, fmt.Sprintf("line %d: mapping key %q already defined at line %d", key.Line, key.Value, line))
			continue
		}
		seen[key.Value] = key.Line
		var err error
		if key.Value == "device_id" {
			err = val.Decode(&p.DeviceID)
		} else {
			err = decodeSection(settings, key, val)
		}
		var te *yaml.TypeError
		switch {
		case errors.As(err, &te):
			errs = append(errs, te.Errors...)
		case err != nil:
			return err
		}
	}
	p.Settings = settings
	if len(errs) > 0 {
		return &yaml.TypeError{Errors: errs}
	}
	return nil
}

// decodeSection decodes the section providers.<key> into settings[key],
// over its current value (the defaults, unless the section came before).
func decodeSection(settings map[string]any, key, val *yaml.Node) error {
	name := key.Value
	k, ok := providers.Info(name)
	if !ok {
		known := providers.NameList()
		if known == "" {
			known = "none (the program declares no provider: import providers/all)"
		}
		return typeError(key, "providers.%s is not a provider; the providers are %s", name, known)
	}
	if k.NewSettings == nil {
		return typeError(key, "providers.%s: the %s provider has no settings; the providers with settings are %s", name, name, strings.Join(withSettings(), ", "))
	}
	if val.ShortTag() == "!!null" {
		return nil // an empty section: the defaults
	}
	s := k.NewSettings()
	if cur := settings[name]; !isNil(cur) && reflect.TypeOf(cur) == reflect.TypeOf(s) {
		reflect.ValueOf(s).Elem().Set(reflect.ValueOf(cur).Elem())
	}
	if unknown := unknownFields(val, reflect.TypeOf(s)); len(unknown) > 0 {
		return &yaml.TypeError{Errors: unknown}
	}
	if err := val.Decode(s); err != nil {
		return err
	}
	settings[name] = s
	return nil
}

// withSettings names the declared providers that have a settings section.
func withSettings() []string {
	var out []string
	for _, k := range providers.KnownProviders() {
		if k.NewSettings != nil {
			out = append(out, k.Name)
		}
	}
	return out
}

func typeError(at *yaml.Node, format string, args ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: ", at.Line) + fmt.Sprintf(format, args...)}}
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// unknownFields returns, in yaml's words, every key in n that t has no
// field for, looking into nested structs, pointers, slices and maps: what a
// yaml.Decoder with KnownFields does, which yaml.Node.Decode cannot.
// Types that decode themselves (yaml.Unmarshaler) are left to do so.
func unknownFields(n *yaml.Node, t reflect.Type) []string {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	var out []string
	switch t.Kind() {
	case reflect.Pointer:
		return unknownFields(n, t.Elem())
	case reflect.Slice, reflect.Array:
		if n.Kind == yaml.SequenceNode {
			for _, c := range n.Content {
				out = append(out, unknownFields(c, t.Elem())...)
			}
		}
	case reflect.Map:
		if n.Kind == yaml.MappingNode {
			for i := 1; i < len(n.Content); i += 2 {
				out = append(out, unknownFields(n.Content[i], t.Elem())...)
			}
		}
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil // Decode says what is wrong
		}
		fields, anyKey := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i]
			ft, ok := fields[key.Value]
			if !ok {
				if !anyKey {
					out = append(out, fmt.Sprintf("line %d: field %s not found in type %s", key.Line, key.Value, t))
				}
				continue
			}
			out = append(out, unknownFields(n.Content[i+1], ft)...)
		}
	}
	return out
}

// yamlFields maps the keys of struct type t to their field types, the way
// yaml.v3 names them: the yaml tag's name, else the field name in lower
// case; ",inline" structs add their keys, and an ",inline" map takes any
// key (then anyKey is true).
func yamlFields(t reflect.Type) (fields map[string]reflect.Type, anyKey bool) {
	fields = map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",inline,") {
			switch f.Type.Kind() {
			case reflect.Struct:
				inner, innerAny := yamlFields(f.Type)
				maps.Copy(fields, inner)
				anyKey = anyKey || innerAny
			case reflect.Map:
				anyKey = true
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f.Type
	}
	return fields, anyKey
}

// ProviderOptions are the settings the execution providers read: the
// providers section and the runtime's memory limit.
func (c Config) ProviderOptions() providers.Options {
	return providers.Options{
		DeviceID:    c.Providers.DeviceID,
		MemoryLimit: int64(c.Runtime.MemoryLimit),
		Settings:    c.Providers.Settings,
	}
}
