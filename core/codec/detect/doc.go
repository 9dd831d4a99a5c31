// Package detect decodes an object detector's output into boxes in the
// pixels of the picture the client sent: Ultralytics' post-processing
// (YOLOv5, YOLOv8 to v12, YOLOv10/YOLO26 end-to-end exports, RT-DETR),
// with its masks (segment) and keypoints (pose). It is a codec over core:
// protocol-neutral, pure Go, below every protocol, importing no runtime;
// core/codec declares it for a model's output (svc.yml's detect, segment
// and pose) and every protocol answers what it decodes.
//
// # Layouts
//
// Head says what a row holds: yolov8 [N, 4+classes(+extra), anchors]
// (centre box, class scores, one column per anchor), yolov5 [N, anchors,
// 5+classes(+extra)] (with objectness: the confidence is objectness ×
// class score, and YOLOv5's mask coefficients are multiplied by it too,
// as its non_max_suppression does), end2end [N, boxes, 6(+extra)] (corners,
// score, class, already suppressed) and rtdetr [N, queries, 4+classes]
// (centre boxes normalised to the input). The extra values are segment's
// mask coefficients or pose's keypoints. Resolve tells the layout from
// the shape, the labels and the metadata when svc.yml names none.
//
// # Decoding
//
// As Ultralytics' non_max_suppression, in float32: a box is a candidate
// when its best class score is strictly greater than the confidence; the
// classes filter applies; at most 30,000 candidates, the best, go to
// suppression; suppression is torchvision's nms over the boxes offset by
// class × 7680 (class-aware; no offset when agnostic): sorted by score
// (stable: equal scores in anchor order), each box kept in turn drops the
// later boxes whose IoU with it is over the threshold; at most max_det
// are kept. end2end and rtdetr are not suppressed: their candidates are
// sorted best first (stable) and cut at max_det (Ultralytics keeps
// RT-DETR's query order; svc answers best first).
//
// Boxes and keypoints are mapped onto the picture with the Frame its
// preprocessing placed it by (core/codec/image): (x − offset) / scale, in
// float32, clipped to the picture, as Ultralytics' scale_boxes,
// scale_coords, clip_boxes and clip_coords do once the letterbox's
// rounding is theirs.
//
// # Masks
//
// For segment, each kept box's mask is Ultralytics' process_mask:
// coefficients × prototypes, sigmoid, cropped to the box scaled to the
// prototypes (the pixels c with x1 ≤ c < x2), upsampled bilinearly to the
// input's size as PyTorch's interpolate (align_corners false), over 0.5.
// A box whose mask is empty is dropped, as Ultralytics drops it. The
// polygon is the outer contour of the mask's largest 8-connected
// component, traced as OpenCV's findContours (RETR_EXTERNAL,
// CHAIN_APPROX_SIMPLE) and mapped onto the picture as Masks.xy is. On
// request, the mask on the picture's pixels is the letterbox's inside
// (what Ultralytics' scale_image crops) resized to the picture
// bilinearly, in float32, over 0.5, as COCO's run-length encoding (RLE,
// its compressed string). Only the part of the
// input and of the picture that a box can reach is computed.
//
// # Answers
//
// AppendJSON writes a picture's detections, best first:
// {"label","index","score","box":{"x1","y1","x2","y2"}} with "polygon",
// "mask" and "keypoints" where they apply, numbers as the shortest decimal
// that reads back as the same float32.
package detect
