package coreml

import "github.com/svc-dev/svc/providers"

// The CoreML provider's metadata, declared on every OS, with or without the
// coreml tag. A package-level variable, so it is declared before the tagged
// file's init() registers the provider.
var _ = providers.Declare(providers.Known{
	Name:     "coreml",
	ORTName:  "CoreMLExecutionProvider",
	GOOS:     "darwin",
	Priority: 10,
	Order:    2,
	Needs:    "macOS (the official darwin library includes CoreML)",
})
