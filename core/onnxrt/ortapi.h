// Shared by the package's cgo files: opening the ONNX Runtime library and
// reaching its C API, which is a table of function pointers returned by
// OrtGetApiBase()->GetApi(version). The table only grows between versions,
// so the slots used are stable; they are counted from onnxruntime_c_api.h
// (struct OrtApi, one slot per member).
#ifndef SVC_ORTAPI_H
#define SVC_ORTAPI_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <windows.h>
static inline void *svc_open(const char *path) { return (void *)LoadLibraryA(path); }
static inline void *svc_sym(void *h, const char *name) { return (void *)GetProcAddress((HMODULE)h, name); }
static inline void svc_close(void *h) { FreeLibrary((HMODULE)h); }
#else
#include <dlfcn.h>
static inline void *svc_open(const char *path) { return dlopen(path, RTLD_LAZY); }
static inline void *svc_sym(void *h, const char *name) { return dlsym(h, name); }
static inline void svc_close(void *h) { dlclose(h); }
#endif

enum {
	SVC_GET_ERROR_MESSAGE = 2,
	SVC_GET_STRING_TENSOR_DATA_LENGTH = 53,
	SVC_GET_STRING_TENSOR_CONTENT = 54,
	SVC_RELEASE_STATUS = 93,
	SVC_GET_AVAILABLE_PROVIDERS = 125,
	SVC_RELEASE_AVAILABLE_PROVIDERS = 126,
	SVC_GET_RESIZED_STRING_TENSOR_ELEMENT_BUFFER = 252, // C API 14 and later
};

typedef struct { void *(*GetApi)(uint32_t version); const char *(*GetVersionString)(void); } svc_api_base;
typedef svc_api_base *(*svc_get_api_base)(void);
typedef const char *(*svc_error_message)(const void *status);
typedef void (*svc_release_status)(void *status);

// svc_api_base_of is the library's OrtApiBase, or NULL.
static inline svc_api_base *svc_api_base_of(void *h) {
	svc_get_api_base gb = (svc_get_api_base)svc_sym(h, "OrtGetApiBase");
	return gb ? gb() : NULL;
}

// svc_api_of is the library's C API table of api_version, or NULL.
static inline void *const *svc_api_of(void *h, uint32_t api_version) {
	svc_api_base *base = svc_api_base_of(h);
	return base ? (void *const *)base->GetApi(api_version) : NULL;
}

// svc_status_text turns a status into a malloc'ed message and releases
// the status; NULL stays NULL.
static inline char *svc_status_text(void *const *api, void *status) {
	if (!status) return NULL;
	char *msg = strdup(((svc_error_message)api[SVC_GET_ERROR_MESSAGE])(status));
	((svc_release_status)api[SVC_RELEASE_STATUS])(status);
	return msg;
}

#endif
