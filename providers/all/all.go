// Package all compiles in every provider selected by build tags: main
// imports it blank. The CPU provider is always included; each other
// provider comes from a file here tagged with its name (directml also only
// on windows, coreml only on darwin), so a build with no tags has CPU only.
package all

import (
	// The CPU provider is always available.
	_ "github.com/svc-dev/svc/providers/cpu"
)
