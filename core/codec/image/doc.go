// Package image turns what users post, encoded images, into a model input
// tensor, preprocessed as OpenCV (cv2) would: it is a codec over core that
// the protocols (transport/rest, transport/oip, transport/grpcapi) call, and
// imports neither them nor the runtime.
//
// # Pipeline
//
// Plan.Tensor reads every image's header first (image.DecodeConfig; EXIF
// orientation for JPEG) and refuses one of more than maxPixels before
// anything is decoded, so a decompression bomb costs nothing. It then
// allocates the batch tensor [N, ...] (pooled, tensor.MakeSlice) and, one
// image at a time: decodes it (JPEG baseline, progressive, grey,
// CMYK/YCCK; PNG 8/16-bit, palette, alpha, grey; WebP lossy and lossless;
// GIF's first frame; BMP), converts it once to a packed 8-bit RGB or grey
// buffer from the decoder's Pix slices (alpha dropped, not composited, as
// IMREAD_COLOR; 16 bits cut to the high byte; grey by BGR2GRAY's 14-bit
// weights; EXIF orientations 2–8 applied), resizes that on 8 bits with
// cv2.resize's own kernels, and normalises it into the tensor through a
// 256-entry table per channel ((pixel×scale − mean)/std, float32, float16
// or the bytes as they are for uint8), padding what the image does not
// cover.
//
// Resize modes: stretch; fit (letterbox: scale to fit, the scaled size
// rounded half to even as Ultralytics' LetterBox rounds it, centred, pad);
// cover (shorter side to the size, centre crop: only the kept window is
// computed); height (to the height keeping aspect, width
// ceil(H×(w/h)) as PaddleOCR computes it, capped at the model's width or
// max_width, padded right). With a dynamic model width (paddleocr-rec) the
// batch is as wide as its widest line, at least size[1] (320, PaddleOCR's
// imgW), rounded up to width_multiple (8); every line is padded to it. Pad
// is in pixel units and goes through the normalisation unrounded: the
// PaddleOCR presets' 127.5 is exactly 0 in the tensor, as PaddleOCR pads.
//
// # Equivalence with OpenCV
//
// TestOpenCV runs Debian's python3-opencv (4.6) on the same files and
// compares element by element, for every resize mode × interpolation, on
// synthetic photographs (1280×720, 640×480, 333×517) and text lines
// rendered with DejaVu Sans. Resizing is OpenCV's: INTER_NEAREST's
// floor(d×src/dst), INTER_LINEAR's half-pixel centres with 11-bit fixed
// point (including its SIMD kernel's rounding of the vertical pass),
// INTER_CUBIC (A = −0.75), INTER_AREA's area tables when shrinking and its
// bilinear-like rule when enlarging. From PNG (the decoders agree) the
// tensors are identical for nearest and area and differ by at most one
// pixel level (1/255 of the range) in at most 0.5 % of the elements for
// bilinear and bicubic, where OpenCV's SIMD and scalar tails round
// differently.
//
// JPEG decoding differs: Go's image/jpeg against libjpeg-turbo. svc does
// the chroma upsampling (libjpeg's "fancy" triangular filter for 4:2:0 and
// 4:2:2) and the YCbCr→RGB conversion with libjpeg's tables, so what is
// left is Go's IDCT, which rounds some pixels differently: measured, at
// most 3 pixel levels after resizing (mean 0.03 levels, 3 % of the
// elements differ), at most 2 levels before it (grey and CMYK JPEG 1).
// WebP lossy goes through libwebp's limited-range YUV conversion; it
// differs by at most 2 levels (libwebp rounds its upsampling differently).
// PNG, GIF, BMP and WebP lossless are exact.
//
// # Speed
//
// build/bench-image.sh runs BenchmarkPreprocess and the same steps in
// OpenCV with cv2.setNumThreads(1). On the 2-core CI machine, shared with
// other work (load average about 4), 30 iterations, 2026-11-26, before and
// after converting only what the resize reads (two alternated runs each;
// OpenCV's own time moved between 14 and 24 ms on (a) from run to run):
//
//	case                       before ms   after ms   OpenCV ms   after ÷ OpenCV
//	1280×720 JPEG → 224×224    19.4–21.9   16.7–17.5  15.0–24.3   0.7–1.2×
//	4000×3000 JPEG → 640×640   240–248     201–216    169–183     1.2×
//	320×48 PNG line → 48×320   0.71–0.83   0.70–0.89  0.79–0.87   0.9–1.1×
//
// The resize is planned before the picture is converted, and of a JPEG or
// lossy WebP only the source columns and rows its kernel reads are
// converted from YCbCr (cover 224 of 1280×720 reads 448×448 pixels of
// 921,600; fit 640 of 4000×3000 about a tenth). What is left is Go's
// decoder: on (a) image/jpeg takes about 87 % of the time (13–14 ms of
// 16, Huffman decoding and IDCT, about twice libjpeg-turbo's SIMD), the
// conversion, resize and normalisation about 2 ms. A cgo decoder
// (libjpeg-turbo) would close that gap but break svc's static
// cross-builds for linux/arm64 and windows and add a C dependency to a
// pure-Go package; at about 2× on the decode alone, next to model
// inference that usually takes longer, it is not worth it.
//
// # Frames
//
// Batch.Frames says where each picture went in the tensor (Frame: its
// size as shown, the scale and offsets of its resize and padding), so that
// a decoder maps boxes, keypoints and masks back onto the picture the
// client sent with the geometry that placed it; a batch asked to (Keep)
// keeps each decoded picture (Kept, a Picture), which a drawing then
// converts to RGBA as shown rather than decoding it again, and Shown
// decodes a picture as shown, to draw on, when none was kept.
//
// What decoding a picture costs is read from its header before anything
// is decoded (cost.go): the memory the format's decoder allocates, and
// for a JPEG its scans, counted as Go's decoder sees them, since it walks
// every block in every scan: more than 100 scans (maxJPEGScans), or more
// scans × pixels than Limits.MaxScanPixels, is refused. Plan.Inspect adds
// the preprocessing's memory, so that the protocols can refuse a batch,
// or reserve its memory, before decoding it.
package image
