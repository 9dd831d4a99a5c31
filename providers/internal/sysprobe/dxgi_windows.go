//go:build windows

package sysprobe

import (
	"fmt"
	"syscall"
	"unsafe"
)

// Adapter is one display adapter DXGI reports.
type Adapter struct {
	// Name is the adapter's description, e.g. "NVIDIA GeForce RTX 4070".
	Name string
	// Software is true for a software rasterizer such as the Microsoft
	// Basic Render Driver (WARP), which DirectML would run on the CPU.
	Software bool
}

// comObject is a COM interface pointer: a pointer to its method table.
type comObject struct{ vtbl *[16]uintptr }

// call invokes method number m of the object with args.
func (o *comObject) call(m int, args ...uintptr) uint32 {
	r, _, _ := syscall.SyscallN(o.vtbl[m], append([]uintptr{uintptr(unsafe.Pointer(o))}, args...)...)
	return uint32(r)
}

func (o *comObject) release() { o.call(2) } // IUnknown::Release

// Method numbers in the DXGI interfaces' tables (IUnknown 0-2, IDXGIObject
// 3-6, then the interface's own).
const (
	factoryEnumAdapters1 = 12 // IDXGIFactory1::EnumAdapters1
	adapterGetDesc1      = 10 // IDXGIAdapter1::GetDesc1
)

const (
	dxgiErrorNotFound   = 0x887A0002
	dxgiAdapterSoftware = 2 // DXGI_ADAPTER_FLAG_SOFTWARE
)

// adapterDesc1 is DXGI_ADAPTER_DESC1.
type adapterDesc1 struct {
	Description                                   [128]uint16
	VendorID, DeviceID, SubSysID, Revision        uint32
	DedicatedVideo, DedicatedSystem, SharedSystem uintptr
	LUIDLow                                       uint32
	LUIDHigh                                      int32
	Flags                                         uint32
}

// iidFactory1 is IID_IDXGIFactory1.
var iidFactory1 = syscall.GUID{Data1: 0x770aae78, Data2: 0xf26f, Data3: 0x4dba,
	Data4: [8]byte{0xa8, 0x29, 0x25, 0x3c, 0x83, 0xd1, 0xb3, 0x87}}

// DXGIAdapters lists the display adapters in DXGI's order, which is the
// order DirectML's device_id counts in.
func (Probe) DXGIAdapters() ([]Adapter, error) {
	dll, err := syscall.LoadDLL("dxgi.dll")
	if err != nil {
		return nil, fmt.Errorf("dxgi.dll: %w", err)
	}
	create, err := dll.FindProc("CreateDXGIFactory1")
	if err != nil {
		return nil, fmt.Errorf("dxgi.dll: %w", err)
	}
	var factory *comObject
	if hr, _, _ := create.Call(uintptr(unsafe.Pointer(&iidFactory1)), uintptr(unsafe.Pointer(&factory))); int32(hr) < 0 || factory == nil {
		return nil, fmt.Errorf("CreateDXGIFactory1: HRESULT 0x%08X", uint32(hr))
	}
	defer factory.release()
	var out []Adapter
	for i := uintptr(0); i < 64; i++ {
		var adapter *comObject
		hr := factory.call(factoryEnumAdapters1, i, uintptr(unsafe.Pointer(&adapter)))
		if hr == dxgiErrorNotFound {
			break
		}
		if int32(hr) < 0 || adapter == nil {
			return out, fmt.Errorf("EnumAdapters1(%d): HRESULT 0x%08X", i, hr)
		}
		var desc adapterDesc1
		hr = adapter.call(adapterGetDesc1, uintptr(unsafe.Pointer(&desc)))
		adapter.release()
		if int32(hr) < 0 {
			return out, fmt.Errorf("GetDesc1(%d): HRESULT 0x%08X", i, hr)
		}
		out = append(out, Adapter{Name: syscall.UTF16ToString(desc.Description[:]), Software: desc.Flags&dxgiAdapterSoftware != 0})
	}
	return out, nil
}
