// Package all compiles in every provider selected by build tags. The CPU
// provider is always included; the others come from files tagged with their
// names.
package all

import (
	// The CPU provider is always available.
	_ "github.com/svc-dev/svc/providers/cpu"
)
