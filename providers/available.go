package providers

// Available lists, highest priority first, the ONNX Runtime names of the
// providers in s that can run on h now: the ones 'svc providers' reports
// as usable, which /metrics shows as available_providers. It reuses what
// selection c already found out (the provider it chose, the ones it passed
// over as not usable, the one asked for that was not usable) and asks
// Usable of the rest, so each provider is probed at most once per start.
func (s Set) Available(h Host, c Choice) []string {
	known := map[string]bool{}
	if c.Provider != nil && c.FallbackReason == "" {
		known[c.Provider.Name()] = true
	}
	if c.Requested != "" && c.FallbackReason != "" {
		known[c.Requested] = false
	}
	for _, sk := range c.Skipped {
		if k, ok := Info(sk.Name); ok && k.Explicit {
			continue // passed over without a probe
		}
		known[sk.Name] = false
	}
	out := []string{}
	for _, p := range s {
		usable, ok := known[p.Name()]
		if !ok {
			usable = p.Usable(h) == nil
		}
		if usable {
			out = append(out, p.ORTName())
		}
	}
	return out
}
