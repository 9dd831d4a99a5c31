// Package tensor holds svc's dense, row-major tensor type, its element types
// and the float16/bfloat16 conversions. It knows no wire format: the JSON
// codec is tensorjson, and each protocol under transport/ owns its own
// envelope.
package tensor
