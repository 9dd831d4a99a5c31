#!/usr/bin/python3
"""PaddleOCR's detection post-processing and crops, run with Debian's
OpenCV, NumPy, pyclipper and shapely: the reference of core/codec/page.

  db_ref.py REQ.json OUT.json

Each case of REQ.json names a w×h float32 probability map (raw little
endian) and the page it was computed for (dest w×h, and optionally a raw
RGB page file). The script runs the operations of PaddleOCR's
DBPostProcess (quad boxes, fast score), TextDetector.filter_tag_det_res,
sorted_boxes and get_rotate_crop_image as PaddleOCR writes them, and
DetResizeForTest.resize_image_type0 for the sizes of "sizes".
"""
import json
import sys

import cv2
import numpy as np
import pyclipper
from shapely.geometry import Polygon


def get_mini_boxes(contour):
    bounding_box = cv2.minAreaRect(contour)
    points = sorted(list(cv2.boxPoints(bounding_box)), key=lambda x: x[0])
    if points[1][1] > points[0][1]:
        index_1, index_4 = 0, 1
    else:
        index_1, index_4 = 1, 0
    if points[3][1] > points[2][1]:
        index_2, index_3 = 2, 3
    else:
        index_2, index_3 = 3, 2
    box = [points[index_1], points[index_2], points[index_3], points[index_4]]
    return box, min(bounding_box[1])


def box_score_fast(bitmap, _box):
    h, w = bitmap.shape[:2]
    box = _box.copy()
    xmin = np.clip(np.floor(box[:, 0].min()).astype("int32"), 0, w - 1)
    xmax = np.clip(np.ceil(box[:, 0].max()).astype("int32"), 0, w - 1)
    ymin = np.clip(np.floor(box[:, 1].min()).astype("int32"), 0, h - 1)
    ymax = np.clip(np.ceil(box[:, 1].max()).astype("int32"), 0, h - 1)
    mask = np.zeros((ymax - ymin + 1, xmax - xmin + 1), dtype=np.uint8)
    box[:, 0] = box[:, 0] - xmin
    box[:, 1] = box[:, 1] - ymin
    cv2.fillPoly(mask, box.reshape(1, -1, 2).astype("int32"), 1)
    return cv2.mean(bitmap[ymin:ymax + 1, xmin:xmax + 1], mask)[0]


def unclip(box, unclip_ratio):
    poly = Polygon(box)
    distance = poly.area * unclip_ratio / poly.length
    offset = pyclipper.PyclipperOffset()
    offset.AddPath(box, pyclipper.JT_ROUND, pyclipper.ET_CLOSEDPOLYGON)
    return offset.Execute(distance)


def boxes_from_bitmap(pred, bitmap, dest_width, dest_height, p):
    height, width = bitmap.shape
    contours, _ = cv2.findContours((bitmap * 255).astype(np.uint8), cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    boxes, scores = [], []
    for contour in contours[:p["max_candidates"]]:
        points, sside = get_mini_boxes(contour)
        if sside < p["min_size"]:
            continue
        points = np.array(points)
        score = box_score_fast(pred, points.reshape(-1, 2))
        if p["box_thresh"] > score:
            continue
        box = unclip(points, p["unclip_ratio"])
        if len(box) > 1:
            continue
        box = np.array(box).reshape(-1, 1, 2)
        box, sside = get_mini_boxes(box)
        if sside < p["min_size"] + 2:
            continue
        box = np.array(box)
        box[:, 0] = np.clip(np.round(box[:, 0] / width * dest_width), 0, dest_width)
        box[:, 1] = np.clip(np.round(box[:, 1] / height * dest_height), 0, dest_height)
        boxes.append(box.astype("int32"))
        scores.append(score)
    return boxes, scores


def db(pred, src_h, src_w, p):
    segmentation = pred > p["thresh"]
    if p["dilate"]:
        mask = cv2.dilate(np.array(segmentation).astype(np.uint8), np.array([[1, 1], [1, 1]]))
    else:
        mask = segmentation
    return boxes_from_bitmap(pred, mask, src_w, src_h, p)


def order_points_clockwise(pts):
    rect = np.zeros((4, 2), dtype="float32")
    s = pts.sum(axis=1)
    rect[0] = pts[np.argmin(s)]
    rect[2] = pts[np.argmax(s)]
    tmp = np.delete(pts, (np.argmin(s), np.argmax(s)), axis=0)
    diff = np.diff(np.array(tmp), axis=1)
    rect[1] = tmp[np.argmin(diff)]
    rect[3] = tmp[np.argmax(diff)]
    return rect


def clip_det_res(points, img_height, img_width):
    for pno in range(points.shape[0]):
        points[pno, 0] = int(min(max(points[pno, 0], 0), img_width - 1))
        points[pno, 1] = int(min(max(points[pno, 1], 0), img_height - 1))
    return points


def filter_tag_det_res(dt_boxes, img_height, img_width):
    out = []
    for box in dt_boxes:
        box = order_points_clockwise(box)
        box = clip_det_res(box, img_height, img_width)
        rect_width = int(np.linalg.norm(box[0] - box[1]))
        rect_height = int(np.linalg.norm(box[0] - box[3]))
        if rect_width <= 3 or rect_height <= 3:
            continue
        out.append(box)
    return np.array(out)


def sorted_boxes(dt_boxes):
    num_boxes = dt_boxes.shape[0]
    _boxes = list(sorted(dt_boxes, key=lambda x: (x[0][1], x[0][0])))
    for i in range(num_boxes - 1):
        for j in range(i, -1, -1):
            if abs(_boxes[j + 1][0][1] - _boxes[j][0][1]) < 10 and _boxes[j + 1][0][0] < _boxes[j][0][0]:
                _boxes[j], _boxes[j + 1] = _boxes[j + 1], _boxes[j]
            else:
                break
    return _boxes


def get_rotate_crop_image(img, points):
    img_crop_width = int(max(np.linalg.norm(points[0] - points[1]), np.linalg.norm(points[2] - points[3])))
    img_crop_height = int(max(np.linalg.norm(points[0] - points[3]), np.linalg.norm(points[1] - points[2])))
    pts_std = np.float32([[0, 0], [img_crop_width, 0], [img_crop_width, img_crop_height], [0, img_crop_height]])
    M = cv2.getPerspectiveTransform(points, pts_std)
    dst_img = cv2.warpPerspective(img, M, (img_crop_width, img_crop_height), borderMode=cv2.BORDER_REPLICATE, flags=cv2.INTER_CUBIC)
    dst_img_height, dst_img_width = dst_img.shape[0:2]
    if dst_img_height * 1.0 / dst_img_width >= 1.5:
        dst_img = np.rot90(dst_img)
    return dst_img


def resize_type0(h, w, limit_side_len, limit_type):
    if limit_type == "max":
        if max(h, w) > limit_side_len:
            ratio = float(limit_side_len) / h if h > w else float(limit_side_len) / w
        else:
            ratio = 1.
    elif limit_type == "min":
        if min(h, w) < limit_side_len:
            ratio = float(limit_side_len) / h if h < w else float(limit_side_len) / w
        else:
            ratio = 1.
    else:
        ratio = float(limit_side_len) / max(h, w)
    resize_h = int(h * ratio)
    resize_w = int(w * ratio)
    resize_h = max(int(round(resize_h / 32) * 32), 32)
    resize_w = max(int(round(resize_w / 32) * 32), 32)
    return [resize_h, resize_w]


def one(idx, c):
    pred = np.fromfile(c["file"], "<f4").reshape(c["h"], c["w"])
    # shape_list as DetResizeForTest writes it: float64
    shape = np.array([c["dest_h"], c["dest_w"], c["dest_h"] / c["h"], c["dest_w"] / c["w"]])
    boxes, scores = db(pred, shape[0], shape[1], c["params"])
    out = {"boxes": [b.tolist() for b in boxes], "scores": scores}
    filtered = filter_tag_det_res(boxes, c["dest_h"], c["dest_w"])
    out["filtered"] = [b.astype(int).tolist() for b in filtered]
    out["sorted"] = [b.astype(int).tolist() for b in sorted_boxes(filtered)] if len(filtered) else []
    if c.get("page"):
        img = np.fromfile(c["page"], np.uint8).reshape(c["dest_h"], c["dest_w"], 3)
        crops = []
        for q in c["quads"]:
            cr = get_rotate_crop_image(img, np.array(q, np.float32))
            crops.append({"w": cr.shape[1], "h": cr.shape[0], "file": "%s.case%d.crop%d" % (c["page"], idx, len(crops))})
            np.ascontiguousarray(cr).tofile(crops[-1]["file"])
        out["crops"] = crops
    return out


def main():
    req = json.load(open(sys.argv[1]))
    out = {"cases": [one(i, c) for i, c in enumerate(req["cases"])],
           "sizes": [resize_type0(*s) for s in req["sizes"]]}
    json.dump(out, open(sys.argv[2], "w"))


main()
