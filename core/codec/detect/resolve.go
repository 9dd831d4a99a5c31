package detect

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/core/tensor"
)

// Spec is what is known of a detection output before any request.
type Spec struct {
	// Shape is the output's (nil: unknown rank; -1: a dynamic dimension).
	Shape []int64
	Task  Task
	// Layout is the one declared, "" to tell it from the shape and the
	// metadata.
	Layout Layout
	// Classes is the number of labels known (0: none).
	Classes int
	// Masks is segment's mask coefficients; Keypoints and KeypointDims
	// pose's.
	Masks, Keypoints, KeypointDims int
	// Metadata is the model's.
	Metadata map[string]string
}

// accepted lists the layouts and their shapes, for messages.
func (s Spec) accepted() string {
	e := ""
	switch {
	case s.Masks > 0:
		e = fmt.Sprintf("+%d", s.Masks)
	case s.Keypoints > 0:
		e = fmt.Sprintf("+%d", s.Keypoints*s.KeypointDims)
	}
	return fmt.Sprintf("yolov8 [N, 4+classes%s, anchors], yolov5 [N, anchors, 5+classes%s], end2end [N, boxes, 6%s], rtdetr [N, queries, 4+classes]", e, e, e)
}

// Resolve tells the output's layout and number of classes from its shape,
// the declared layout, the labels and the metadata: Ultralytics writes
// end2end models' metadata with end2end (or their arguments with nms), and
// names RT-DETR in the description. Its error names the shape and the
// layouts accepted.
func Resolve(s Spec) (Head, error) {
	h := Head{Task: s.Task, Layout: s.Layout, Classes: s.Classes, Masks: s.Masks, Keypoints: s.Keypoints, KeypointDims: s.KeypointDims}
	bad := func(why string) (Head, error) {
		return Head{}, fmt.Errorf("has shape %s: %s; %s takes %s (set layout: to name one)", tensor.FormatShape(s.Shape), why, s.Task, s.accepted())
	}
	if len(s.Shape) != 3 {
		if s.Shape == nil && s.Layout != "" && s.Classes > 0 {
			return h, nil // checked at each request
		}
		return bad("not of rank 3")
	}
	d1, d2 := s.Shape[1], s.Shape[2]
	if h.Layout == "" {
		h.Layout = guess(s, d1, d2)
		if h.Layout == "" {
			return bad("cannot tell its layout")
		}
	}
	if h.Layout == RTDETR && (s.Masks > 0 || s.Keypoints > 0) {
		return bad("rtdetr has no masks or keypoints")
	}
	// The dimension a box's values take, and the classes it implies.
	rowDim := d2
	if h.Layout == YOLOv8 {
		rowDim = d1
	}
	if rowDim < 0 {
		if h.Classes == 0 && h.Layout != End2End {
			return bad("its dimension of box values is dynamic and no labels give the classes")
		}
		return h, nil
	}
	if h.Layout != End2End {
		h.Classes = int(rowDim) - h.Width() + h.Classes
		if h.Classes < 1 {
			return bad(fmt.Sprintf("%d values per box leave no class scores", rowDim))
		}
		if s.Classes > h.Classes {
			return Head{}, fmt.Errorf("has %d classes (shape %s, %s), fewer than its %d labels", h.Classes, tensor.FormatShape(s.Shape), h.Layout, s.Classes)
		}
	}
	if int64(h.Width()) != rowDim {
		return bad(fmt.Sprintf("%s wants %d values per box", h.Layout, h.Width()))
	}
	return h, nil
}

// guess tells the layout of a rank-3 output [N, d1, d2] ("" when it
// cannot).
func guess(s Spec, d1, d2 int64) Layout {
	meta := s.Metadata
	extra := int64(s.Masks + s.Keypoints*s.KeypointDims)
	switch {
	case truthy(meta["end2end"]) || strings.Contains(meta["args"], "'nms': True"):
		return End2End
	case strings.Contains(strings.ToLower(strings.ReplaceAll(meta["description"], "-", "")), "rtdetr"):
		return RTDETR
	}
	if nc := int64(s.Classes); nc > 0 {
		switch {
		case d1 == 4+nc+extra && d2 != d1:
			return YOLOv8
		case d2 == 5+nc+extra && d1 != d2:
			return YOLOv5
		case d2 == 6+extra && d1 != d2:
			return End2End
		case d2 == 4+nc && extra == 0:
			return RTDETR
		}
		return ""
	}
	switch {
	case d1 >= 0 && (d2 < 0 || d1 < d2) && d1 > 4+extra:
		return YOLOv8
	case d2 == 6+extra && d1 >= 0:
		return End2End
	}
	return ""
}

func truthy(v string) bool {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	return err == nil && b
}

// KeypointShape reads Ultralytics' kpt_shape metadata, "[17, 3]".
func KeypointShape(meta map[string]string) (n, dims int, ok bool) {
	n, dims, ok = intPair(meta["kpt_shape"])
	if !ok || n < 1 || dims != 2 && dims != 3 {
		return 0, 0, false
	}
	return n, dims, true
}

// InputSize reads Ultralytics' imgsz metadata, "[640, 640]" (height,
// width).
func InputSize(meta map[string]string) (h, w int, ok bool) {
	h, w, ok = intPair(meta["imgsz"])
	if !ok || h < 1 || w < 1 {
		return 0, 0, false
	}
	return h, w, true
}

// intPair reads metadata's "[a, b]" (or "(a, b)"): two integers.
func intPair(v string) (a, b int, ok bool) {
	x, y, found := strings.Cut(strings.Trim(strings.TrimSpace(v), "[]()"), ",")
	if !found {
		return 0, 0, false
	}
	a, err1 := strconv.Atoi(strings.TrimSpace(x))
	b, err2 := strconv.Atoi(strings.TrimSpace(y))
	return a, b, err1 == nil && err2 == nil
}
