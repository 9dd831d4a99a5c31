package onnxrt

// StringsBound reports whether string tensors cross through the C API
// directly (for the external tests).
func StringsBound() bool { return stringsBound.Load() }
