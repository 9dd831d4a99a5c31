package config

import "time"

// Limits holds request limits: what one request may hold or cost, checked
// before the work starts, and the server-wide budget of the memory that
// the requests in flight hold (docs/limits.md).
type Limits struct {
	// MaxBodyBytes caps the /predict request body.
	MaxBodyBytes ByteSize `yaml:"max_body_size"`
	// MaxElements caps the values (numbers, strings, booleans) in one
	// request, over all inputs; 0 means MaxBodyBytes/4 (see Elements).
	MaxElements int64 `yaml:"max_elements"`
	// MaxStringLength caps one string element, in bytes after unescaping.
	MaxStringLength ByteSize `yaml:"max_string_length"`
	// ReadTimeout bounds reading one request, headers and body (0 = none).
	ReadTimeout Duration `yaml:"read_timeout"`
	// MaxImagePixels caps an image input's width × height, checked from
	// its header before decoding (0 = DefaultMaxImagePixels).
	MaxImagePixels int64 `yaml:"max_image_pixels"`
	// MaxImages caps the pictures of one request, over its image inputs.
	MaxImages int `yaml:"max_images"`
	// MaxRequestPixels caps the pixels (width × height, from the headers)
	// of one request's pictures together.
	MaxRequestPixels int64 `yaml:"max_request_pixels"`
	// MaxJPEGScanPixels caps a JPEG's scans × pixels: a progressive JPEG
	// is decoded in one pass over its pixels per scan.
	MaxJPEGScanPixels int64 `yaml:"max_jpeg_scan_pixels"`
	// MaxTexts caps the texts of one request.
	MaxTexts int `yaml:"max_texts"`
	// MaxTokens caps the tokens of one request's texts, summed: what it
	// may ask of the model in all, over as many runs of
	// text.max_batch_tokens as it takes.
	MaxTokens int64 `yaml:"max_tokens"`
	// RequestMemory is the server-wide budget of the memory that the
	// requests in flight hold: decoded pictures, the tensors made from
	// pictures and texts, their runs' outputs.
	RequestMemory ByteSize `yaml:"request_memory"`
	// MemoryWait is how long a request waits for RequestMemory that
	// others hold (within its deadline) before a 503.
	MemoryWait Duration `yaml:"memory_wait"`
}

// Default request limits.
const (
	DefaultMaxStringLength   = 1 << 20
	DefaultReadTimeout       = 60 * time.Second
	DefaultMaxImages         = 64
	DefaultMaxRequestPixels  = 4 * DefaultMaxImagePixels
	DefaultMaxJPEGScanPixels = 10 * DefaultMaxImagePixels
	DefaultMaxTexts          = 2048
	DefaultMaxTokens         = 262144
	DefaultRequestMemory     = 256 << 20
	DefaultMemoryWait        = 5 * time.Second
)

func defaultLimits() Limits {
	return Limits{
		MaxBodyBytes:      DefaultMaxBodyBytes,
		MaxStringLength:   DefaultMaxStringLength,
		ReadTimeout:       Duration(DefaultReadTimeout),
		MaxImages:         DefaultMaxImages,
		MaxRequestPixels:  DefaultMaxRequestPixels,
		MaxJPEGScanPixels: DefaultMaxJPEGScanPixels,
		MaxTexts:          DefaultMaxTexts,
		MaxTokens:         DefaultMaxTokens,
		RequestMemory:     DefaultRequestMemory,
		MemoryWait:        Duration(DefaultMemoryWait),
	}
}

// ImagePixels is the effective MaxImagePixels.
func (l Limits) ImagePixels() int64 {
	if l.MaxImagePixels > 0 {
		return l.MaxImagePixels
	}
	return DefaultMaxImagePixels
}

// Elements is the effective MaxElements: a body needs at least two bytes
// per value ("0,"), so the default, a quarter of the body limit, only
// turns away bodies made almost entirely of one-digit numbers.
func (l Limits) Elements() int64 {
	if l.MaxElements > 0 {
		return l.MaxElements
	}
	return max(int64(l.MaxBodyBytes)/4, 1)
}

func (l Limits) check() (string, string) {
	switch {
	case l.MaxBodyBytes <= 0:
		return "limits.max_body_size", "must be positive"
	case l.MaxElements < 0:
		return "limits.max_elements", "cannot be negative"
	case l.MaxStringLength <= 0:
		return "limits.max_string_length", "must be positive"
	case l.ReadTimeout < 0:
		return "limits.read_timeout", "cannot be negative"
	case l.MaxImagePixels < 0:
		return "limits.max_image_pixels", "cannot be negative"
	case l.MaxImages < 1:
		return "limits.max_images", "must be at least 1"
	case l.MaxRequestPixels < 1:
		return "limits.max_request_pixels", "must be positive"
	case l.MaxJPEGScanPixels < 1:
		return "limits.max_jpeg_scan_pixels", "must be positive"
	case l.MaxTexts < 1:
		return "limits.max_texts", "must be at least 1"
	case l.MaxTokens < 1:
		return "limits.max_tokens", "must be positive"
	case l.RequestMemory <= 0:
		return "limits.request_memory", "must be positive"
	case l.MemoryWait <= 0:
		return "limits.memory_wait", "must be positive"
	}
	return "", ""
}
