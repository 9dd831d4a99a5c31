// Package page reads a text detector's output as PaddleOCR's Python
// pipeline reads it, to the pixel: the detector input's size
// (DetResizeForTest), the boxes of a DB probability map (DBPostProcess:
// threshold, optional dilation, contours, least-area rectangles, the
// box score, unclipping and the size filters, scaled back to the page),
// their clockwise order and clipping (TextDetector.filter_tag_det_res),
// the reading order (sorted_boxes), and the crops of the page the
// recogniser reads (get_rotate_crop_image: a perspective warp with cubic
// interpolation and replicated border, turned upright when tall).
//
// It is a codec: pure Go over core/codec/geom, protocol-neutral, knowing
// neither ONNX Runtime nor the wire. The tests compare every step with a
// reference run of the Python code's operations through Debian's OpenCV,
// NumPy, pyclipper and shapely (testdata/db_ref.py).
package page
