// Package geom is the plane geometry of segmentation maps, computed as
// OpenCV and Clipper compute it so that what svc derives from a model's
// map is what the published Python pipelines derive: the borders of a
// binary map (cv2.findContours with RETR_LIST and CHAIN_APPROX_SIMPLE,
// Suzuki and Abe's border following), the convex hull (cv2.convexHull,
// Sklansky's scan), the rotated rectangle of least area (cv2.minAreaRect,
// rotating calipers in float32) and its corners (cv2.boxPoints), the
// filled polygon (cv2.fillPoly's scan conversion) and the round offset of a
// closed polygon (Clipper's ClipperOffset with JT_ROUND, as pyclipper gives
// it). It is pure Go, knows nothing of models or tensors, and is shared by
// the codecs that read detection and segmentation outputs (core/codec/page).
//
// Every function reproduces its reference's arithmetic, float32 where
// OpenCV computes in float32, so that results are equal, not close: the
// tests compare them with OpenCV 4.6 and pyclipper on generated maps.
package geom

// Point is a pixel position: X the column, Y the row.
type Point struct{ X, Y int }

// Point2f is a position in float32, as OpenCV's Point2f.
type Point2f struct{ X, Y float32 }

// RotatedRect is cv::RotatedRect: centre, width and height, and the angle
// in degrees of the width side.
type RotatedRect struct {
	Center        Point2f
	Width, Height float32
	Angle         float32
}
