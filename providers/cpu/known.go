package cpu

import "github.com/svc-dev/svc/providers"

// The CPU provider's metadata. A package-level variable, so it is declared
// before init() registers the provider.
var _ = providers.Declare(providers.Known{
	Name:     "cpu",
	ORTName:  "CPUExecutionProvider",
	Priority: 0,
	Order:    100, // always last in the --provider list
	Needs:    "nothing: every ONNX Runtime library has it",
	Builtin:  true,
})
