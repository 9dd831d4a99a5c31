// A stand-in for an ONNX Runtime library older than svc needs: it has the
// C API entry point and a version string, but offers no API newer than 23.
#include <stddef.h>
#include <stdint.h>

typedef struct {
	const void *(*GetApi)(uint32_t version);
	const char *(*GetVersionString)(void);
} OrtApiBase;

static const void *get_api(uint32_t version) {
	static const int table = 0;
	return version <= 23 ? &table : NULL;
}
static const char *version_string(void) { return "1.23.2"; }
static const OrtApiBase base = {get_api, version_string};

const OrtApiBase *OrtGetApiBase(void) { return &base; }
