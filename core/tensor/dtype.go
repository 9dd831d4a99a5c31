package tensor

// DType is the element type of a tensor.
type DType uint8

// Element types. Invalid is the zero value and is not a usable type.
const (
	Invalid DType = iota
	Float32
	Float64
	Float16
	BFloat16
	Int8
	Int16
	Int32
	Int64
	Uint8
	Uint16
	Uint32
	Uint64
	Bool
	String
)

var dtypeNames = [...]string{
	Invalid:  "invalid",
	Float32:  "float32",
	Float64:  "float64",
	Float16:  "float16",
	BFloat16: "bfloat16",
	Int8:     "int8",
	Int16:    "int16",
	Int32:    "int32",
	Int64:    "int64",
	Uint8:    "uint8",
	Uint16:   "uint16",
	Uint32:   "uint32",
	Uint64:   "uint64",
	Bool:     "bool",
	String:   "string",
}

var dtypeSizes = [...]int{
	Float32: 4, Float64: 8, Float16: 2, BFloat16: 2,
	Int8: 1, Int16: 2, Int32: 4, Int64: 8,
	Uint8: 1, Uint16: 2, Uint32: 4, Uint64: 8,
	Bool: 1, String: 0,
}

// String returns the lower-case name of d ("float32", "int64", "bool", ...).
// Invalid and unknown values give "invalid".
func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return "invalid"
}

// ParseDType is the inverse of DType.String. It reports false for
// "invalid" and any unknown name.
func ParseDType(s string) (DType, bool) {
	for i := Float32; int(i) < len(dtypeNames); i++ {
		if dtypeNames[i] == s {
			return i, true
		}
	}
	return Invalid, false
}

// Size is the number of bytes one element takes; 0 for String and Invalid.
func (d DType) Size() int {
	if int(d) < len(dtypeSizes) {
		return dtypeSizes[d]
	}
	return 0
}

// valid reports whether d is one of the defined element types.
// Valid reports whether d is one of the element types above.
func (d DType) Valid() bool { return d >= Float32 && d <= String }
