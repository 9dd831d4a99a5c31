package onnxrt

/*
#cgo linux LDFLAGS: -ldl
#cgo darwin LDFLAGS: -ldl
#include "ortapi.h"

typedef void *(*svc_get_available)(char ***out, int *len);
typedef void *(*svc_release_available)(char **ptr, int len);

// svc_available_providers fills *out/*len; it returns NULL or an error text
// that the caller frees.
static char *svc_available_providers(const char *lib, uint32_t api_version, char ***out, int *len) {
	void *h = svc_open(lib);
	if (!h) return strdup("cannot open library");
	if (!svc_api_base_of(h)) { svc_close(h); return strdup("OrtGetApiBase not found"); }
	void *const *api = svc_api_of(h, api_version);
	if (!api) { svc_close(h); return strdup("library does not offer the requested API version"); }
	char *msg = svc_status_text(api, ((svc_get_available)api[SVC_GET_AVAILABLE_PROVIDERS])(out, len));
	svc_close(h);
	return msg;
}

static void svc_release_available_providers(const char *lib, uint32_t api_version, char **ptr, int len) {
	void *h = svc_open(lib);
	if (!h) return;
	void *const *api = svc_api_of(h, api_version);
	if (api) free(svc_status_text(api, ((svc_release_available)api[SVC_RELEASE_AVAILABLE_PROVIDERS])(ptr, len)));
	svc_close(h);
}

static char *svc_index(char **arr, int i) { return arr[i]; }

// svc_library_api opens the library, copies its version string into *version
// (freed by the caller; NULL when it has no OrtGetApiBase) and sets *ok when
// it offers C API api_version. It returns 0, or 1 when the library does not
// open.
static int svc_library_api(const char *lib, uint32_t api_version, char **version, int *ok) {
	*version = NULL;
	*ok = 0;
	void *h = svc_open(lib);
	if (!h) return 1;
	svc_api_base *base = svc_api_base_of(h);
	if (base) {
		const char *v = base->GetVersionString ? base->GetVersionString() : NULL;
		*version = strdup(v ? v : "");
		*ok = base->GetApi(api_version) != NULL;
	}
	svc_close(h);
	return 0;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// apiVersion is the C API version svc is built against (ONNX Runtime 1.24):
// any library offering it (1.24 or newer) will do.
const apiVersion = 24

// MinVersion is the oldest ONNX Runtime release that offers apiVersion.
const MinVersion = "1.24"

// TooOldError says a library does not offer the C API svc is built against.
type TooOldError struct {
	// Version is the library's own version string ("" when it has none).
	Version string
}

func (e *TooOldError) Error() string {
	v := "ONNX Runtime " + e.Version
	if e.Version == "" {
		v = "this ONNX Runtime library"
	}
	return fmt.Sprintf("%s is too old: svc needs %s or newer (C API %d)", v, MinVersion, apiVersion)
}

// checkAPI opens the library at path (a file or a bare name for the system
// loader) and returns a *TooOldError when it lacks C API apiVersion. A
// library that does not open, or is not ONNX Runtime, passes: loading it
// reports that.
func checkAPI(path string) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var version *C.char
	var ok C.int
	if C.svc_library_api(cpath, apiVersion, &version, &ok) != 0 || version == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(version))
	if ok == 0 {
		return &TooOldError{Version: C.GoString(version)}
	}
	return nil
}

// availableProviders calls OrtApi::GetAvailableProviders on the library at
// path, which must already be loaded (so dlopen only takes a reference).
func availableProviders(path string) ([]string, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var arr **C.char
	var n C.int
	if msg := C.svc_available_providers(cpath, apiVersion, &arr, &n); msg != nil {
		defer C.free(unsafe.Pointer(msg))
		return nil, fmt.Errorf("GetAvailableProviders: %s", C.GoString(msg))
	}
	if arr == nil {
		return nil, errors.New("GetAvailableProviders returned nothing")
	}
	out := make([]string, int(n))
	for i := range out {
		out[i] = C.GoString(C.svc_index(arr, C.int(i)))
	}
	C.svc_release_available_providers(cpath, apiVersion, arr, n)
	return out, nil
}
