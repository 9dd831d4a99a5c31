#!/usr/bin/env bash
# The image rows of make bench. (1) Preprocessing against OpenCV
# (build/bench-image.sh: decode, resize, normalise per image, goal ≤ 2×)
# into $OUT/image-preprocess.md. (2) End to end on PaddleOCR rec: a text
# line rendered by cmd/svc/testdata/images/render_lines.py posted as the
# raw body (Content-Type: image/png) to /predict of rec served with
# image: {preset: paddleocr-rec}, against the tensor the server makes of it
# ([1,3,48,W] float32, W as the preset computes it) posted over v2 binary
# to rec served without image settings, the same CTC decoding of the
# output on both (goal: image ≥ 0.9× the tensor's throughput). The tensor's
# values are svc bench's random ones: inference costs the same whatever
# they are. Image and tensor runs alternate, IMG_PAIRS times per level.
# build/bench.sh runs it; it also runs alone:
#
#   build/bench-images.sh && (cd build/benchreport && go run . -out /tmp/BENCHMARKS.md)
#
# Writes $OUT/image-preprocess.md, $OUT/e2e-{image,tensor}-cC-P.json (and
# .log), the picture and both svc.yml under $OUT/e2e/, and appends to
# $OUT/commands.txt. Knobs: SVC (build/bin/svc), OUT
# (build/artifacts/bench), IMG_LEVELS (4 16), IMG_PAIRS (3), IMG_DURATION
# (4s), IMG_WARMUP (1s), IMG_TEXT (the line), IMG_FONT (DejaVu Sans),
# IMG_PREPROCESS (1; 0 skips step 1). A short look: IMG_PAIRS=1
# IMG_DURATION=1s IMG_WARMUP=300ms IMG_PREPROCESS=0.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=build/bench-lib.sh
. build/bench-lib.sh

SVC=${SVC:-build/bin/svc}
OUT=${OUT:-build/artifacts/bench}
IMG_LEVELS=${IMG_LEVELS:-4 16}
IMG_PAIRS=${IMG_PAIRS:-3}
IMG_DURATION=${IMG_DURATION:-4s}
IMG_WARMUP=${IMG_WARMUP:-1s}
IMG_TEXT=${IMG_TEXT:-svc reads this line}
IMG_FONT=${IMG_FONT:-/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf}
IMG_PREPROCESS=${IMG_PREPROCESS:-1}
REC=build/models/paddleocr-rec

die() { echo "bench-images: $*" >&2; exit 1; }
[ -x "$SVC" ] || die "$SVC missing: run 'make build'"
[ -f "$REC/model.onnx" ] || die "$REC/model.onnx missing: run 'make models'"
bench_start bench-images

status=0
if [ "$IMG_PREPROCESS" = 1 ]; then
	show "build/bench-image.sh $OUT/image-preprocess.md"
	run build/bench-image.sh "$OUT/image-preprocess.md" >/dev/null || { echo "bench-images: build/bench-image.sh failed" >&2; status=1; }
fi

dir=$OUT/e2e
mkdir -p "$dir"
echo "$IMG_TEXT" | /usr/bin/python3 cmd/svc/testdata/images/render_lines.py "$dir" "$IMG_FONT" || die "cannot render the line"
pic=$dir/0.png
# The batch width of paddleocr-rec: ceil(48·w/h), at least 320, at most
# 3200, rounded up to 8 (core/codec/image's lineWidth and batchWidth).
width=$(/usr/bin/python3 -c 'import math, sys
from PIL import Image
w, h = Image.open(sys.argv[1]).size
print((min(max(math.ceil(48 * (w / h)), 320), 3200) + 7) // 8 * 8)' "$pic") || die "cannot size $pic"
keys=$PWD/$REC/ppocr_keys_v1.txt
outputs="    outputs:
      softmax_11.tmp_0:
        ctc: {labels: $keys}"
printf 'models:\n  rec:\n    path: %s\n    inputs:\n      x:\n        image: {preset: paddleocr-rec}\n%s\n' "$PWD/$REC/model.onnx" "$outputs" >"$dir/image.yml"
printf 'models:\n  rec:\n    path: %s\n%s\n' "$PWD/$REC/model.onnx" "$outputs" >"$dir/tensor.yml"

common=(--duration "$IMG_DURATION" --warmup "$IMG_WARMUP" --no-raw --json)
for pair in $(seq 1 "$IMG_PAIRS"); do
	for c in $IMG_LEVELS; do
		for kind in image tensor; do
			if [ "$kind" = image ]; then
				cmd=("$SVC" bench rec --config "$dir/image.yml" --input "$pic" --content-type image/png --concurrency "$c" "${common[@]}")
			else
				cmd=("$SVC" bench rec --config "$dir/tensor.yml" --protocol v2-binary --shape "x=1,3,48,$width" --concurrency "$c" "${common[@]}")
			fi
			file=$OUT/e2e-$kind-c$c-$pair.json
			show "${cmd[*]} > $file"
			if ! run "${cmd[@]}" >"$file" 2>"${file%.json}.log"; then
				echo "bench-images: $kind at $c failed: $(tail -n 3 "${file%.json}.log")" >&2
				rm -f "$file"
				status=1
			fi
		done
	done
done
exit $status
