#!/usr/bin/env bash
# Checks the windows/amd64 release archive (issue 5, item 6) without
# Windows: builds it with build/release.sh (mingw-w64, -tags directml), and
# checks that svc.exe is a valid x86-64 console PE executable that imports
# only Windows system DLLs (no mingw runtime DLL to ship), that the version
# is stamped in, that lib\ holds onnxruntime.dll (exporting OrtGetApiBase)
# and DirectML.dll, that the README says how onnxruntime.dll is found, and
# that svc's LICENSE (Apache-2.0, the repository's, with Windows line ends)
# is in the archive.
#
# Usage: ci/check-windows.sh   (make check-windows installs what it needs first)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
version=0.0.0-check
out=$root/build/artifacts/check-windows
objdump=x86_64-w64-mingw32-objdump

die() { echo "check-windows: FAILED: $*" >&2; exit 1; }
for tool in x86_64-w64-mingw32-gcc "$objdump" unzip; do
  command -v "$tool" >/dev/null || die "$tool missing: run build/cross-deps.sh (make cross-deps)"
done

rm -rf "$out"
OUT=$out bash build/release.sh "$version" windows/amd64
archive=$out/svc-$version-windows-amd64.zip
[ -f "$archive" ] || die "no archive at $archive"
(cd "$out" && sha256sum -c --quiet SHA256SUMS) || die "SHA256SUMS does not match the archive"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unzip -q "$archive" -d "$work"
dir=$work/svc-$version-windows-amd64
for f in svc.exe lib/onnxruntime.dll lib/DirectML.dll lib/dxcompiler.dll lib/dxil.dll README.txt THIRD_PARTY_NOTICES.txt LICENSE; do
  [ -f "$dir/$f" ] || die "archive lacks $f"
done

# svc.exe: a PE32+ x86-64 console program.
head=$("$objdump" -p "$dir/svc.exe")
grep -q 'file format pei-x86-64' <<<"$head" || die "svc.exe is not a PE32+ x86-64 file"
grep -q '^Magic.*020b' <<<"$head" || die "svc.exe is not PE32+"
grep -qE '^Subsystem[[:space:]]+0+3[[:space:]]+\(Windows CUI\)' <<<"$head" || die "svc.exe is not a console program"
grep -qE '^Characteristics.*' <<<"$head" && grep -q 'executable' <<<"$head" || die "svc.exe is not marked executable"
imports=$(sed -n 's/^[[:space:]]*DLL Name: //p' <<<"$head" | tr 'A-Z' 'a-z' | sort -u)
[ -n "$imports" ] || die "svc.exe imports nothing?"
for dll in $imports; do
  case $dll in
    kernel32.dll | msvcrt.dll | advapi32.dll | ws2_32.dll | ntdll.dll | user32.dll | bcrypt.dll | winmm.dll | api-ms-win-*) ;;
    *) die "svc.exe imports $dll, which Windows does not have: link it statically" ;;
  esac
done
echo "check-windows: svc.exe imports: $(echo $imports)" >&2
grep -aq "$version" "$dir/svc.exe" || die "the version $version is not stamped into svc.exe"

# onnxruntime.dll: an x86-64 DLL with the C API entry point; DirectML.dll
# beside it (onnxruntime.dll loads it from its own directory).
ort=$("$objdump" -p "$dir/lib/onnxruntime.dll")
grep -q 'file format pei-x86-64' <<<"$ort" || die "lib/onnxruntime.dll is not x86-64"
grep -qE '\bOrtGetApiBase\b' <<<"$ort" || die "lib/onnxruntime.dll does not export OrtGetApiBase"
"$objdump" -f "$dir/lib/DirectML.dll" | grep -q 'pei-x86-64' || die "lib/DirectML.dll is not x86-64"

# The README documents how onnxruntime.dll is resolved.
readme=$(tr -d '\r' <"$dir/README.txt")
for want in 'lib\onnxruntime.dll' 'ONNXRUNTIME_LIB' 'runtime.library' 'System32' 'DirectML.dll' 'Visual C++'; do
  grep -qF "$want" <<<"$readme" || die "README.txt does not mention $want"
done
grep -q $'\r$' "$dir/README.txt" || die "README.txt does not have Windows line ends"

# svc's licence: the repository's LICENSE, with Windows line ends.
grep -q $'\r$' "$dir/LICENSE" || die "LICENSE does not have Windows line ends"
tr -d '\r' <"$dir/LICENSE" | cmp -s - "$root/LICENSE" || die "LICENSE is not the repository's LICENSE"
grep -q 'Apache License' "$dir/LICENSE" || die "LICENSE is not the Apache License"
echo "check-windows: ok" >&2
