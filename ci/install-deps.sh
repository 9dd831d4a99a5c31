#!/usr/bin/env bash
# Installs the system packages the tests need when they are missing:
# Chromium for the browser test; curl and jq for the documentation test
# (cmd/svc/docs_test.go runs the examples of README.md and docs/); podman,
# buildah, runc, catatonit, readelf and the CA certificates for the
# container image and its test (ci/kube);
# wrk for make bench (build/bench-deps.sh installs it alone); zstd for make
# gpu-kit (build/gpu-kit.sh installs it alone when missing); OpenCV, NumPy
# and Pillow for Debian's python3 (the reference image preprocessing and the
# text-line renderer of the image tests), pyclipper and shapely (the
# reference of the text detector's post-processing in core/codec/geom and
# core/codec/page), and the DejaVu fonts they render with;
# espeak-ng, the speech synthesiser whose speech the sequence tests feed to
# Silero VAD (cmd/svc/sequence_vad_test.go).
# Runs apt-get only when something is missing (CI runs as root; elsewhere use
# sudo).
set -euo pipefail

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
for tool in curl jq podman buildah runc catatonit readelf wrk zstd espeak-ng; do
  command -v "$tool" >/dev/null 2>&1 || case $tool in readelf) need+=(binutils) ;; *) need+=("$tool") ;; esac
done
[ -f /etc/ssl/certs/ca-certificates.crt ] || need+=(ca-certificates)
/usr/bin/python3 -c 'import cv2, numpy, PIL.ImageFont' >/dev/null 2>&1 || need+=(python3-opencv python3-numpy python3-pil)
/usr/bin/python3 -c 'import pyclipper, shapely' >/dev/null 2>&1 || need+=(python3-pyclipper python3-shapely)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
bash "$(dirname "$0")/apt-install.sh" "${need[@]}"
