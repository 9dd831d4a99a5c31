package providers

// Status is one row of 'svc providers': what this binary and this machine
// make of one provider.
type Status struct {
	Known
	// Compiled is true when the provider is compiled into this binary.
	Compiled bool
	// Offered is true when the loaded ONNX Runtime library lists the
	// provider in GetAvailableProviders.
	Offered bool
	// Usable is true when the provider can run here now.
	Usable bool
	// WhyNot says why the provider cannot run here ("" when it can).
	WhyNot string
}

// Report describes every known provider for this set and host, highest
// priority first. It runs each compiled-in provider's Usable.
func (s Set) Report(h Host) []Status {
	known := KnownProviders()
	out := make([]Status, 0, len(known))
	for _, k := range known {
		st := Status{Known: k}
		p, ok := s.Lookup(k.Name)
		if ok {
			st.ORTName = p.ORTName()
		}
		st.Offered = h.Offers(st.ORTName)
		switch {
		case !ok:
			st.WhyNot = "not compiled in; rebuild with: " + k.RebuildHint()
		default:
			st.Compiled = true
			if err := p.Usable(h); err != nil {
				st.WhyNot = err.Error()
			} else {
				st.Usable = true
			}
		}
		out = append(out, st)
	}
	return out
}

// Unsupported lists the providers the loaded library offers that svc has
// no provider for (e.g. WebGpuExecutionProvider), in the library's order.
func (h Host) Unsupported() []string {
	known := KnownProviders()
	var out []string
	for _, n := range h.LibraryProviders {
		supported := false
		for _, k := range known {
			if k.ORTName == n {
				supported = true
				break
			}
		}
		if !supported {
			out = append(out, n)
		}
	}
	return out
}
