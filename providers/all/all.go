// Package all brings in every provider: main imports it blank. It has one
// file per provider, importing the provider's package blank on every OS and
// with any tags, so every binary knows every provider (its metadata and
// settings section, from the package's untagged file); the package's own
// build tags decide whether the provider itself is compiled in (directml
// also only on windows, coreml only on darwin). A build with no tags has
// CPU only. The CPU provider is always compiled in.
package all

import (
	// The CPU provider is always available.
	_ "github.com/svc-dev/svc/providers/cpu"
)
