#!/usr/bin/env bash
# bench-image.sh [OUT.md]: core/codec/image's BenchmarkPreprocess against
# OpenCV (Debian's python3-opencv, single-threaded) on the same files and
# the same steps (decode, resize, crop/pad, normalise, layout). Prints a
# markdown table of milliseconds per image and svc ÷ OpenCV (goal ≤ 2×),
# and writes it to OUT.md too when given.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
BENCH_IMAGE_DIR=$dir go test ./core/codec/image/ -run '^$' -bench BenchmarkPreprocess \
	-benchtime "${BENCHTIME:-20x}" -count 1 -cpu 1 >"$dir/go.txt"
cat >"$dir/req.json" <<JSON
[
 {"name": "imagenet-1280x720-jpeg", "file": "$dir/imagenet-1280x720-jpeg.jpg", "resize": "cover", "interp": "bilinear",
  "color": "rgb", "layout": "nchw", "H": 224, "W": 224, "cap": 224, "scale": 0.00392156862745098,
  "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225], "pad": 0},
 {"name": "yolo-4000x3000-jpeg", "file": "$dir/yolo-4000x3000-jpeg.jpg", "resize": "fit", "interp": "bilinear",
  "color": "rgb", "layout": "nchw", "H": 640, "W": 640, "cap": 640, "scale": 0.00392156862745098,
  "mean": [0, 0, 0], "std": [1, 1, 1], "pad": 114},
 {"name": "paddleocr-rec-320x48-png", "file": "$dir/paddleocr-rec-320x48-png.png", "resize": "height", "interp": "bilinear",
  "color": "bgr", "layout": "nchw", "H": 48, "W": 320, "cap": 3200, "scale": 0.00392156862745098,
  "mean": [0.5, 0.5, 0.5], "std": [0.5, 0.5, 0.5], "pad": 127.5}
]
JSON
/usr/bin/python3 core/codec/image/testdata/opencv_ref.py time "$dir/req.json" >"$dir/cv.json"
table=$(/usr/bin/python3 - "$dir/go.txt" "$dir/cv.json" <<'PY'
import json, re, sys
cv = json.load(open(sys.argv[2]))
print("| case | svc ms/image | OpenCV ms/image | svc ÷ OpenCV |")
print("|---|---:|---:|---:|")
for line in open(sys.argv[1]):
    m = re.match(r"BenchmarkPreprocess/(\S+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op", line)
    if m:
        name, ns = m.group(1), float(m.group(3))
        ms = ns / 1e6
        print(f"| {name} | {ms:.2f} | {cv[name]:.2f} | {ms / cv[name]:.2f}× |")
PY
)
echo "$table"
if [ $# -ge 1 ]; then echo "$table" >"$1"; fi
