package onnxrt

/*
#include "ortapi.h"

typedef void *(*svc_str_data_length)(const void *value, size_t *len);
typedef void *(*svc_str_content)(const void *value, void *s, size_t s_len, size_t *offsets, size_t offsets_len);
typedef void *(*svc_str_resized_buffer)(void *value, size_t index, size_t length, char **buffer);

static void *const *svc_str_api;

// svc_str_bind finds the C API table of the library at lib, already
// loaded (svc_open only takes a reference, kept for the process's life).
static int svc_str_bind(const char *lib, uint32_t api_version) {
	void *h = svc_open(lib);
	if (!h) return 1;
	svc_str_api = svc_api_of(h, api_version);
	return svc_str_api ? 0 : 1;
}

// svc_str_write sets the n elements of string tensor value: element i is
// data[ends[i-1]:ends[i]] (ends[-1] = 0), bytes copied as they are, NUL
// bytes included.
static char *svc_str_write(void *value, const char *data, const size_t *ends, size_t n) {
	svc_str_resized_buffer resized = (svc_str_resized_buffer)svc_str_api[SVC_GET_RESIZED_STRING_TENSOR_ELEMENT_BUFFER];
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		char *buf = NULL;
		size_t len = ends[i] - start;
		char *msg = svc_status_text(svc_str_api, resized(value, i, len, &buf));
		if (msg) return msg;
		if (len > 0) memcpy(buf, data + start, len);
		start = ends[i];
	}
	return NULL;
}

static char *svc_str_length(void *value, size_t *len) {
	return svc_status_text(svc_str_api, ((svc_str_data_length)svc_str_api[SVC_GET_STRING_TENSOR_DATA_LENGTH])(value, len));
}

static char *svc_str_read(void *value, char *data, size_t len, size_t *offsets, size_t n) {
	return svc_status_text(svc_str_api, ((svc_str_content)svc_str_api[SVC_GET_STRING_TENSOR_CONTENT])(value, data, len, offsets, n));
}
*/
import "C"

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-dev/svc/core/tensor"
)

// String tensors cross into ONNX Runtime through its C API directly: the
// Go binding copies each element into a C string of its own on the way in
// (a cgo call and a malloc per element, and elements end at their first
// NUL byte) and makes a Go string per element on the way out. Here a whole
// tensor crosses in one call each way, and the strings read back share one
// allocation.

// The element offsets cross as 64-bit words: size_t must be 64 bits.
var _ [unsafe.Sizeof(C.size_t(0)) - 8]struct{}

// stringsBound is set once the OrtApi table is found (bindStrings).
var stringsBound atomic.Bool

// bindStrings finds the C API of the library at path, already loaded by
// the binding. Without it, string tensors go through the binding.
func bindStrings(path string) {
	// The binding keeps a value's OrtValue pointer as the only field of
	// ValueInternalData; read it only while that holds.
	if unsafe.Sizeof(ort.ValueInternalData{}) != unsafe.Sizeof(uintptr(0)) {
		return
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	if C.svc_str_bind(cpath, apiVersion) == 0 {
		stringsBound.Store(true)
	}
}

// ortValue is t's OrtValue pointer.
func ortValue(t *ort.StringTensor) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(t.GetInternals()))
}

func cError(msg *C.char) error {
	if msg == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(msg))
	return errors.New(C.GoString(msg))
}

// NewStringTensor makes a string tensor of shape holding elems.
func NewStringTensor(shape ort.Shape, elems []string) (*ort.StringTensor, error) {
	if int64(len(elems)) != shape.FlattenedSize() {
		return nil, fmt.Errorf("%d strings for shape %s", len(elems), tensor.FormatShape(shape))
	}
	st, err := ort.NewStringTensor(shape)
	if err != nil {
		return nil, err
	}
	if !stringsBound.Load() {
		err = st.SetContents(elems)
	} else {
		err = writeStrings(st, elems)
	}
	if err != nil {
		_ = st.Destroy()
		return nil, err
	}
	return st, nil
}

func writeStrings(st *ort.StringTensor, elems []string) error {
	if len(elems) == 0 {
		return nil
	}
	size := 0
	for _, e := range elems {
		size += len(e)
	}
	data := tensor.MakeSlice[byte](max(size, 1))[:0]
	ends := tensor.MakeSlice[uint64](len(elems))
	defer tensor.PutSlice(data)
	defer tensor.PutSlice(ends)
	for i, e := range elems {
		data = append(data, e...)
		ends[i] = uint64(len(data))
	}
	data = data[:max(len(data), 1)]
	return cError(C.svc_str_write(ortValue(st), (*C.char)(unsafe.Pointer(&data[0])), (*C.size_t)(unsafe.Pointer(&ends[0])), C.size_t(len(elems))))
}

// Strings returns the elements of st; they share one allocation.
func Strings(st *ort.StringTensor) ([]string, error) {
	if !stringsBound.Load() {
		return st.GetContents()
	}
	n := st.GetShape().FlattenedSize()
	if n == 0 {
		return []string{}, nil
	}
	var size C.size_t
	if err := cError(C.svc_str_length(ortValue(st), &size)); err != nil {
		return nil, err
	}
	if size == 0 {
		return make([]string, n), nil
	}
	data := make([]byte, size)
	offsets := tensor.MakeSlice[uint64](int(n))
	defer tensor.PutSlice(offsets)
	if err := cError(C.svc_str_read(ortValue(st), (*C.char)(unsafe.Pointer(&data[0])), size, (*C.size_t)(unsafe.Pointer(&offsets[0])), C.size_t(n))); err != nil {
		return nil, err
	}
	// data is not changed again: the strings share it.
	all := unsafe.String(&data[0], len(data))
	out := make([]string, n)
	for i := range out {
		end := uint64(len(all))
		if i+1 < len(out) {
			end = offsets[i+1]
		}
		if offsets[i] > end || end > uint64(len(all)) {
			return nil, fmt.Errorf("string element %d spans bytes %d to %d of %d", i, offsets[i], end, len(all))
		}
		out[i] = all[offsets[i]:end]
	}
	return out, nil
}
