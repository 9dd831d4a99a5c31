package onnxrt

// StringsBound reports whether string tensors cross through the C API
// directly (for the external tests).
func StringsBound() bool { return stringsBound.Load() }

// SetStringsBound switches the direct path on or off and returns the
// previous setting, so a test can run the binding's fallback path.
func SetStringsBound(on bool) bool { return stringsBound.Swap(on) }
