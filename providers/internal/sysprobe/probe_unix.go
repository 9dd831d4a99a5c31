//go:build unix && cgo

package sysprobe

/*
#cgo linux LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

// svc_load opens libs[0..n) in order, keeping each open while the next
// loads, then closes them all. It returns NULL, or the loader's message for
// the first that failed (the caller frees it) and its index in *failed.
static char *svc_load(char **libs, int n, int *failed) {
	void *handles[16];
	char *msg = NULL;
	int opened = 0;
	if (n > 16) n = 16;
	for (int i = 0; i < n; i++) {
		void *h = dlopen(libs[i], RTLD_LAZY | RTLD_LOCAL);
		if (!h) {
			const char *e = dlerror();
			msg = strdup(e ? e : "dlopen failed");
			*failed = i;
			break;
		}
		handles[opened++] = h;
	}
	while (opened > 0) dlclose(handles[--opened]);
	return msg;
}

// svc_locate returns the file a library resolved by the system loader was
// loaded from, found through one of its symbols (the caller frees it).
static char *svc_locate(const char *lib, const char *sym) {
	void *h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
	if (!h) return NULL;
	void *addr = dlsym(h, sym);
	char *out = NULL;
	Dl_info info;
	if (addr && dladdr(addr, &info) && info.dli_fname) out = strdup(info.dli_fname);
	dlclose(h);
	return out;
}

// svc_preload opens path with RTLD_NOW | RTLD_GLOBAL and keeps it loaded
// for the life of the process, so that libraries loaded later find its
// soname and symbols. It returns NULL or the loader's message (freed by
// the caller).
static char *svc_preload(const char *path) {
	if (dlopen(path, RTLD_NOW | RTLD_GLOBAL)) return NULL;
	const char *e = dlerror();
	return strdup(e ? e : "dlopen failed");
}

typedef int (*svc_cu_init)(unsigned int);
typedef int (*svc_cu_count)(int *);

// svc_cuda_devices asks the NVIDIA driver library for its device count. The
// driver stays loaded: ONNX Runtime uses it next, and unloading a CUDA
// driver that has been initialised is not safe. It returns NULL, or a
// message the caller frees; *code is the CUresult of a failed call.
static char *svc_cuda_devices(const char *lib, int *count, int *code) {
	void *h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		return strdup(e ? e : "dlopen failed");
	}
	svc_cu_init init = (svc_cu_init)dlsym(h, "cuInit");
	svc_cu_count cnt = (svc_cu_count)dlsym(h, "cuDeviceGetCount");
	if (!init || !cnt) return strdup("the driver library lacks cuInit or cuDeviceGetCount");
	*code = init(0);
	if (*code != 0) return strdup("cuInit");
	*code = cnt(count);
	if (*code != 0) return strdup("cuDeviceGetCount");
	return NULL;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"
)

// Load opens the libraries in order and closes them again.
func (Probe) Load(libs ...string) error {
	if len(libs) == 0 {
		return nil
	}
	if len(libs) > 16 {
		return errors.New("too many libraries to load at once")
	}
	cs := make([]*C.char, len(libs))
	for i, l := range libs {
		cs[i] = C.CString(l)
	}
	defer func() {
		for _, c := range cs {
			C.free(unsafe.Pointer(c))
		}
	}()
	arr := (**C.char)(C.malloc(C.size_t(len(cs)) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(arr))
	copy(unsafe.Slice(arr, len(cs)), cs)
	var failed C.int
	if msg := C.svc_load(arr, C.int(len(cs)), &failed); msg != nil {
		defer C.free(unsafe.Pointer(msg))
		return errors.New(C.GoString(msg))
	}
	return nil
}

// Preload loads the files in order, each with RTLD_GLOBAL, and keeps them
// loaded for the life of the process: a library loaded later (a provider
// library) then finds them by soname even outside the loader's path. It
// stops at the first that does not load.
func (Probe) Preload(files ...string) error {
	for _, f := range files {
		cf := C.CString(f)
		msg := C.svc_preload(cf)
		C.free(unsafe.Pointer(cf))
		if msg != nil {
			defer C.free(unsafe.Pointer(msg))
			return fmt.Errorf("preload %s: %s", f, C.GoString(msg))
		}
	}
	return nil
}

// Locate returns the file the system loader resolves lib to.
func Locate(lib, symbol string) (string, error) {
	cl, cs := C.CString(lib), C.CString(symbol)
	defer C.free(unsafe.Pointer(cl))
	defer C.free(unsafe.Pointer(cs))
	p := C.svc_locate(cl, cs)
	if p == nil {
		return "", fmt.Errorf("cannot locate %s", lib)
	}
	defer C.free(unsafe.Pointer(p))
	return C.GoString(p), nil
}

// cudaDriver is the NVIDIA driver library's name.
func cudaDriver() string {
	if runtime.GOOS == "linux" {
		return "libcuda.so.1"
	}
	return ""
}

// CUDADevices asks the NVIDIA driver how many devices it sees.
func (Probe) CUDADevices() (int, error) {
	lib := cudaDriver()
	if lib == "" {
		return 0, fmt.Errorf("no NVIDIA CUDA driver on %s", runtime.GOOS)
	}
	cl := C.CString(lib)
	defer C.free(unsafe.Pointer(cl))
	var count, code C.int
	msg := C.svc_cuda_devices(cl, &count, &code)
	if msg != nil {
		defer C.free(unsafe.Pointer(msg))
		if code != 0 {
			return 0, fmt.Errorf("NVIDIA driver: %s: %s", C.GoString(msg), cudaResult(int(code)))
		}
		return 0, fmt.Errorf("no NVIDIA driver: %s", C.GoString(msg))
	}
	return int(count), nil
}
