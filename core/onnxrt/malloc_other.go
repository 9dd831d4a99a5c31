//go:build !linux || !cgo

package onnxrt

// fixMallocThreshold does nothing: the threshold it fixes is glibc's.
func fixMallocThreshold() error { return nil }

// mmappedOnReuse cannot tell outside Linux.
func mmappedOnReuse(int) (mapped, ok bool) { return false, false }
