//go:build windows

package sysprobe

import (
	"fmt"
	"syscall"
	"unsafe"
)

// Load opens the libraries in order and frees them again.
func (Probe) Load(libs ...string) error {
	var handles []syscall.Handle
	defer func() {
		for i := len(handles) - 1; i >= 0; i-- {
			_ = syscall.FreeLibrary(handles[i])
		}
	}()
	for _, l := range libs {
		h, err := syscall.LoadLibrary(l)
		if err != nil {
			return fmt.Errorf("%s: %w", l, err)
		}
		handles = append(handles, h)
	}
	return nil
}

// Preload loads the files in order and keeps them loaded.
func (Probe) Preload(files ...string) error {
	for _, f := range files {
		if _, err := syscall.LoadLibrary(f); err != nil {
			return fmt.Errorf("preload %s: %w", f, err)
		}
	}
	return nil
}

// Locate returns the file the system loader resolves lib to.
func Locate(lib, _ string) (string, error) {
	h, err := syscall.LoadLibrary(lib)
	if err != nil {
		return "", fmt.Errorf("cannot locate %s: %w", lib, err)
	}
	defer func() { _ = syscall.FreeLibrary(h) }()
	k32, err := syscall.LoadLibrary("kernel32.dll")
	if err != nil {
		return "", err
	}
	defer func() { _ = syscall.FreeLibrary(k32) }()
	proc, err := syscall.GetProcAddress(k32, "GetModuleFileNameW")
	if err != nil {
		return "", err
	}
	buf := make([]uint16, 32768)
	n, _, callErr := syscall.SyscallN(proc, uintptr(h), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	if n == 0 {
		return "", fmt.Errorf("cannot locate %s: %w", lib, callErr)
	}
	return syscall.UTF16ToString(buf[:n]), nil
}

// CUDADevices asks the NVIDIA driver (nvcuda.dll) how many devices it
// sees. The driver stays loaded for ONNX Runtime.
func (Probe) CUDADevices() (int, error) {
	h, err := syscall.LoadLibrary("nvcuda.dll")
	if err != nil {
		return 0, fmt.Errorf("no NVIDIA driver: nvcuda.dll: %w", err)
	}
	initProc, err := syscall.GetProcAddress(h, "cuInit")
	if err != nil {
		return 0, fmt.Errorf("the NVIDIA driver lacks cuInit: %w", err)
	}
	countProc, err := syscall.GetProcAddress(h, "cuDeviceGetCount")
	if err != nil {
		return 0, fmt.Errorf("the NVIDIA driver lacks cuDeviceGetCount: %w", err)
	}
	if r, _, _ := syscall.SyscallN(initProc, 0); r != 0 {
		return 0, fmt.Errorf("NVIDIA driver: cuInit: %s", cudaResult(int(int32(r))))
	}
	var count int32
	if r, _, _ := syscall.SyscallN(countProc, uintptr(unsafe.Pointer(&count))); r != 0 {
		return 0, fmt.Errorf("NVIDIA driver: cuDeviceGetCount: %s", cudaResult(int(int32(r))))
	}
	return int(count), nil
}
