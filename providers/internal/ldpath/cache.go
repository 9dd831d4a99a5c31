package ldpath

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
)

// The ld.so.cache layout glibc's ldconfig writes (elf/dl-cache.h): a
// 48-byte header "glibc-ld.so.cache" "1.1", nlibs, len_strings, flags,
// padding, extension_offset, unused[3]; then nlibs 24-byte entries {int32
// flags; uint32 key, value (string offsets from the file's start); uint32
// osversion; uint64 hwcap}; then the strings.
const (
	cacheMagic     = "glibc-ld.so.cache1.1"
	cacheHeaderLen = 48
	cacheEntryLen  = 24

	flagTypeMask     = 0x00ff
	flagELFLibc6     = 0x0003
	flagRequiredMask = 0xff00
)

// archFlags is the "required" part of an entry's flags for the libraries
// of goarch (0 = accept any).
func archFlags(goarch string) int32 {
	switch goarch {
	case "amd64":
		return 0x0300 // FLAG_X8664_LIB64
	case "arm64":
		return 0x0a00 // FLAG_AARCH64_LIB64
	}
	return 0
}

// ReadCache reads the soname → path table of an ld.so.cache file, keeping
// the libc6 entries for goarch (the first entry of a name wins, as in
// ld.so).
func ReadCache(path, goarch string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the loader cache: %w", err)
	}
	return ParseCache(b, goarch)
}

// ParseCache parses the contents of an ld.so.cache (see ReadCache).
func ParseCache(b []byte, goarch string) (map[string]string, error) {
	if len(b) < cacheHeaderLen || string(b[:len(cacheMagic)]) != cacheMagic {
		return nil, ErrNotCache
	}
	le := binary.LittleEndian
	n := int(le.Uint32(b[20:24]))
	if n < 0 || cacheHeaderLen+n*cacheEntryLen > len(b) {
		return nil, fmt.Errorf("%w: %d entries do not fit in %d bytes", ErrNotCache, n, len(b))
	}
	want := archFlags(goarch)
	str := func(off uint32) (string, bool) {
		if int(off) >= len(b) {
			return "", false
		}
		end := bytes.IndexByte(b[off:], 0)
		if end < 0 {
			return "", false
		}
		return string(b[off : int(off)+end]), true
	}
	out := make(map[string]string, n)
	for i := 0; i < n; i++ {
		e := b[cacheHeaderLen+i*cacheEntryLen:]
		flags := int32(le.Uint32(e[0:4]))
		if flags&flagTypeMask != flagELFLibc6 || (want != 0 && flags&flagRequiredMask != want) {
			continue
		}
		key, ok1 := str(le.Uint32(e[4:8]))
		val, ok2 := str(le.Uint32(e[8:12]))
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%w: entry %d points outside the file", ErrNotCache, i)
		}
		if _, dup := out[key]; !dup {
			out[key] = val
		}
	}
	return out, nil
}
