// Package tensorjson is the JSON codec for tensors shared by every JSON
// protocol: JSON arrays (nested in the tensor's shape) to typed slices and
// back, with exact numbers. It never uses encoding/json and never boxes
// elements in interfaces. The object layers (which keys a body has, what a
// missing input is called) belong to the protocols; they walk their
// envelope with a Decoder and hand each tensor value to Decoder.Value.
//
// # Decoding
//
// Every client mistake is an *Error whose Message is meant for the client:
//
//   - Malformed JSON (including an empty body, trailing data, or nesting
//     deeper than 64 levels): "Invalid JSON body: <reason> at offset <n>"
//     (the body itself is never quoted).
//   - A value of the wrong kind: "Invalid input type for '<name>': expected
//     array" (or "expected number", "expected boolean", "expected string"
//     for a rank-0 input).
//   - The shape comes from the nesting of the arrays: "Invalid input for
//     '<name>': ragged array: element [1] has 3 items, expected 4", or
//     "... expected an array at [0, 1], got a number" when nesting is mixed.
//   - Batch rule: a value nested one level less than the input's rank is a
//     single item when the first dimension is dynamic or 1, and gets a batch
//     dimension of 1 ([1,2,3,4] for [-1, 4] is [1, 4]); a bare value is
//     accepted for shape [1] or [-1] (as [1]) and for a scalar input. An
//     empty array says nothing about what it would hold, so the dimensions
//     below it come from the spec: [] for [-1, 3] is an empty batch [0, 3].
//   - Then the rank and every fixed dimension must match: "Invalid shape for
//     '<name>': expected rank 2 [-1, 4], got rank 3 [1, 2, 4]" or "...:
//     expected [-1, 3, 224, 224], got [1, 3, 224, 100]".
//   - Elements: "Invalid value for '<name>' at [0, 2]: 1.5 is not an integer
//     (int64)", "...: 300 is out of range for uint8", "...: expected a
//     boolean, got a number", "...: expected a number, got null".
//
// Integers are exact (any JSON number whose value is integral, such as 1e3
// or 2.0, is accepted). float32 and float64 values are bit-for-bit what
// strconv.ParseFloat gives; float16 and bfloat16 values are rounded once,
// correctly, from the decimal. A finite number too large for the type is
// out of range; one too small becomes zero. Strings are fully unescaped
// and must be valid Unicode: invalid UTF-8 or a lone surrogate escape in a
// string element is "Invalid value for '<name>' at [1]: invalid UTF-8 in
// string" (never silently replaced); in an object key it is malformed JSON.
//
// # Encoding
//
// AppendJSON writes nested arrays in the tensor's shape (a bare value for
// rank 0). Floats use the shortest form that reads back to the same value
// (float16 and bfloat16 at float32 precision), identical to
// strconv.AppendFloat(dst, v, 'g', -1, 32 or 64); NaN and ±Inf, which JSON
// cannot express, are written as null.
package tensorjson
