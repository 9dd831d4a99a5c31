"""The reference of TestUltralytics: Ultralytics' post-processing, written
from its published algorithm (ultralytics/utils/ops.py, the predictors of
detect, segment, pose and RT-DETR, YOLOv5's non_max_suppression and
process_mask) in numpy, with OpenCV for the letterbox and the contours.

    python3 ultralytics_ref.py CASES.json ANSWERS.json OUT.json

CASES.json lists the cases the Go test wrote (each output tensor in a raw
little-endian float32 file); ANSWERS.json is what svc answered for each.
For each case it writes the reference's detections and, for each of svc's
masks and polygons, its IoU with the reference's.
"""
import json
import sys

import cv2
import numpy as np

MAX_WH = 7680
MAX_NMS = 30000


def letterbox(h, w, H, W):
    """LetterBox(new_shape=(H, W), auto=False, center=True) on an h×w
    picture: the size it is resized to and the padding on the top and
    left, from the padded picture OpenCV makes."""
    r = min(H / h, W / w)
    new_unpad = int(round(w * r)), int(round(h * r))
    dw, dh = (W - new_unpad[0]) / 2, (H - new_unpad[1]) / 2
    img = np.zeros((h, w), np.uint8)
    if (w, h) != new_unpad:
        img = cv2.resize(img, new_unpad, interpolation=cv2.INTER_LINEAR)
    top, bottom = int(round(dh - 0.1)), int(round(dh + 0.1))
    left, right = int(round(dw - 0.1)), int(round(dw + 0.1))
    img = cv2.copyMakeBorder(img, top, bottom, left, right, cv2.BORDER_CONSTANT, value=114)
    assert img.shape == (H, W), (img.shape, H, W)
    return new_unpad, top, left


def ratio_pad(h, w, H, W):
    """scale_boxes' gain and pad (ratio_pad None), after ultralytics#23967."""
    gain = min(H / h, W / w)
    pad_x = round((W - round(w * gain)) / 2 - 0.1)
    pad_y = round((H - round(h * gain)) / 2 - 0.1)
    return gain, pad_x, pad_y


def xywh2xyxy(x):
    y = np.empty_like(x)
    dw, dh = x[..., 2] / np.float32(2), x[..., 3] / np.float32(2)
    y[..., 0] = x[..., 0] - dw
    y[..., 1] = x[..., 1] - dh
    y[..., 2] = x[..., 0] + dw
    y[..., 3] = x[..., 1] + dh
    return y


def nms(boxes, scores, iou_thres):
    """torchvision.ops.nms on the CPU: a stable sort by score, greedy, in
    float32 (each kept box against the later ones at once)."""
    order = np.argsort(-scores, kind="stable")
    b = boxes[order]
    x1, y1, x2, y2 = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    areas = (x2 - x1) * (y2 - y1)
    suppressed = np.zeros(len(b), bool)
    keep = []
    for i in range(len(b)):
        if suppressed[i]:
            continue
        keep.append(order[i])
        w = np.maximum(np.float32(0), np.minimum(x2[i], x2[i + 1:]) - np.maximum(x1[i], x1[i + 1:]))
        h = np.maximum(np.float32(0), np.minimum(y2[i], y2[i + 1:]) - np.maximum(y1[i], y1[i + 1:]))
        inter = w * h
        ovr = inter / (areas[i] + areas[i + 1:] - inter)
        suppressed[i + 1:] |= ovr.astype(np.float64) > iou_thres
    return np.array(keep, dtype=np.int64)


def class_filter(cls, classes):
    if classes is None:
        return np.ones(len(cls), bool)
    return np.isin(cls.astype(np.int64), np.array(classes, np.int64))


def suppress(x, p):
    """The end of non_max_suppression: x rows are (x1, y1, x2, y2, conf,
    cls, extra...), already filtered by confidence and class."""
    if len(x) == 0:
        return x
    if len(x) > MAX_NMS:
        x = x[np.argsort(-x[:, 4], kind="stable")[:MAX_NMS]]
    c = x[:, 5:6] * np.float32(0 if p["agnostic"] else MAX_WH)
    boxes = x[:, :4] + c
    i = nms(boxes, x[:, 4], p["iou"])[: p["max_det"]]
    return x[i]


def yolov8(pred, nc, p):
    """non_max_suppression on [4+nc+extra, anchors]."""
    pred = pred.T.copy()  # anchors × values
    scores = pred[:, 4:4 + nc]
    xc = scores.max(1) > p["conf"]  # amax propagates NaN: NaN > conf is False
    x = pred[xc]
    box = xywh2xyxy(x[:, :4])
    conf = x[:, 4:4 + nc].max(1, keepdims=True)
    j = x[:, 4:4 + nc].argmax(1)[:, None].astype(np.float32)
    x = np.concatenate((box, conf, j, x[:, 4 + nc:]), 1)[conf.reshape(-1) > p["conf"]]
    x = x[class_filter(x[:, 5], p["classes"])]
    return suppress(x, p)


def yolov5(pred, nc, p):
    """YOLOv5's non_max_suppression on [anchors, 5+nc+extra]: every column
    after the objectness, the mask coefficients included, times it."""
    x = pred[pred[:, 4] > p["conf"]].copy()
    x[:, 5:] *= x[:, 4:5]
    box = xywh2xyxy(x[:, :4])
    conf = x[:, 5:5 + nc].max(1, keepdims=True)
    j = x[:, 5:5 + nc].argmax(1)[:, None].astype(np.float32)
    x = np.concatenate((box, conf, j, x[:, 5 + nc:]), 1)[conf.reshape(-1) > p["conf"]]
    x = x[class_filter(x[:, 5], p["classes"])]
    return suppress(x, p)


def best_first(x, p):
    return x[np.argsort(-x[:, 4], kind="stable")][: p["max_det"]]


def end2end(pred, p):
    x = pred[pred[:, 4] > p["conf"]]
    x = x[class_filter(x[:, 5], p["classes"])]
    return best_first(x, p)


def rtdetr(pred, nc, p, w, h):
    """RTDETRPredictor.postprocess (the picture stretched to the input:
    the normalised boxes times the picture's size), best first."""
    bbox = xywh2xyxy(pred[:, :4])
    score = pred[:, 4:]
    max_score = score.max(-1, keepdims=True)
    cls = score.argmax(-1)[:, None].astype(np.float32)
    idx = (max_score.reshape(-1) > p["conf"]) & class_filter(cls[:, 0], p["classes"])
    x = np.concatenate((bbox, max_score, cls), -1)[idx]
    x[:, [0, 2]] *= np.float32(w)
    x[:, [1, 3]] *= np.float32(h)
    return best_first(x, p)


def scale_boxes(b, gain, px, py, w, h):
    b = b.copy()
    b[:, [0, 2]] -= np.float32(px)
    b[:, [1, 3]] -= np.float32(py)
    b /= np.float32(gain)
    b[:, [0, 2]] = b[:, [0, 2]].clip(0, w)
    b[:, [1, 3]] = b[:, [1, 3]].clip(0, h)
    return b


def scale_coords(xy, gain, px, py, w, h):
    xy = xy.astype(np.float32).copy()
    xy[..., 0] -= np.float32(px)
    xy[..., 1] -= np.float32(py)
    xy[..., :2] /= np.float32(gain)
    xy[..., 0] = xy[..., 0].clip(0, w)
    xy[..., 1] = xy[..., 1].clip(0, h)
    return xy


def taps(n_out, n_in):
    """upsample_bilinear2d's source indices and weights (align_corners
    False) for each output index."""
    s = np.float32(n_in) / np.float32(n_out)
    src = s * (np.arange(n_out, dtype=np.float32) + np.float32(0.5)) - np.float32(0.5)
    src = np.maximum(src, np.float32(0))
    i0 = src.astype(np.int64)
    i1 = np.where(i0 < n_in - 1, i0 + 1, i0)
    l1 = np.clip(src - i0.astype(np.float32), 0, 1).astype(np.float32)
    return i0, i1, np.float32(1) - l1, l1


def upsample(m, H, W):
    """F.interpolate(mode='bilinear', align_corners=False) of one map, in
    float32: along x, then y. Only the output rows and columns whose taps
    reach m's non-zero part are computed: the others are 0."""
    out = np.zeros((H, W), np.float32)
    ys, xs = np.nonzero(m)
    if len(ys) == 0:
        return out
    y0, y1, ly0, ly1 = taps(H, m.shape[0])
    x0, x1, lx0, lx1 = taps(W, m.shape[1])
    rows = np.nonzero((y1 >= ys.min()) & (y0 <= ys.max()))[0]
    cols = np.nonzero((x1 >= xs.min()) & (x0 <= xs.max()))[0]
    a, b = m[y0[rows]], m[y1[rows]]
    top = a[:, x0[cols]] * lx0[cols] + a[:, x1[cols]] * lx1[cols]
    bottom = b[:, x0[cols]] * lx0[cols] + b[:, x1[cols]] * lx1[cols]
    out[np.ix_(rows, cols)] = top * ly0[rows, None] + bottom * ly1[rows, None]
    return out


def process_mask(protos, coefs, box, H, W):
    """YOLOv5 and Ultralytics' process_mask(upsample=True), sigmoid
    first: the mask on the input's pixels, 0 or 1."""
    c, mh, mw = protos.shape
    with np.errstate(over="ignore"):
        m = 1 / (1 + np.exp(-(coefs @ protos.reshape(c, -1)).astype(np.float64)))
    m = m.astype(np.float32).reshape(mh, mw)
    b = box * np.array([mw / W, mh / H, mw / W, mh / H], np.float32)
    r = np.arange(mw, dtype=np.float32)[None, :]
    cc = np.arange(mh, dtype=np.float32)[:, None]
    m = m * ((r >= b[0]) & (r < b[2]) & (cc >= b[1]) & (cc < b[3]))
    return (upsample(m, H, W) > 0.5).astype(np.uint8)


def polygon(mask):
    """The outer contour of the mask's largest 8-connected component."""
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    if n < 2:
        return None
    areas = stats[1:, cv2.CC_STAT_AREA]
    big = 1 + int(np.argmax(areas))
    one = (labels == big).astype(np.uint8)
    contours, _ = cv2.findContours(one, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    return contours[0].reshape(-1, 2)


def scale_image(mask, top, left, new_unpad, w, h):
    """The letterbox's inside, as scale_image crops it, resized to the
    picture bilinearly, over 0.5."""
    rw, rh = new_unpad
    return (upsample(mask[top:top + rh, left:left + rw].astype(np.float32), h, w) > 0.5).astype(np.uint8)


def rle_decode(size, counts):
    """COCO's compressed RLE string (pycocotools' rleFrString) into a
    mask."""
    cnts, p, m = [], 0, 0
    while p < len(counts):
        x, k, more = 0, 0, True
        while more:
            c = ord(counts[p]) - 48
            x |= (c & 0x1F) << (5 * k)
            more = bool(c & 0x20)
            p += 1
            k += 1
            if not more and (c & 0x10):
                x |= -1 << (5 * k)
        if m > 2:
            x += cnts[m - 2]
        cnts.append(x)
        m += 1
    h, w = size
    flat = np.zeros(h * w, np.uint8)
    pos, v = 0, 0
    for n in cnts:
        flat[pos:pos + n] = v
        pos += n
        v ^= 1
    return flat.reshape(w, h).T


def iou(a, b):
    union = np.logical_or(a, b).sum()
    return 1.0 if union == 0 else float(np.logical_and(a, b).sum() / union)


def fill(points, w, h):
    canvas = np.zeros((h, w), np.uint8)
    pts = np.round(np.asarray(points, np.float64)).astype(np.int32).reshape(-1, 1, 2)
    cv2.fillPoly(canvas, [pts], 1)
    cv2.polylines(canvas, [pts], True, 1)
    return canvas


def decode(c):
    raw = np.fromfile(c["file"], dtype="<f4").reshape(c["shape"])[0]
    p = c["params"]
    nc, nm, nk, kd = c["classes"], c["masks"], c["keypoints"], c["kdims"]
    layout = c["layout"]
    if layout == "yolov8":
        x = yolov8(raw, nc, p)
    elif layout == "yolov5":
        x = yolov5(raw, nc, p)
    elif layout == "end2end":
        x = end2end(raw, p)
    else:
        x = rtdetr(raw, nc, p, c["w"], c["h"])
    return x, nm, nk, kd


def reference(c, answer):
    w, h, W, H = c["w"], c["h"], c["W"], c["H"]
    x, nm, nk, kd = decode(c)
    if c["layout"] == "rtdetr":
        boxes = x[:, :4].copy()
        for col, lim in ((0, w), (1, h), (2, w), (3, h)):
            boxes[:, col] = boxes[:, col].clip(0, lim)
        out = [{"box": b.tolist(), "score": float(s), "class": int(k)} for b, s, k in zip(boxes, x[:, 4], x[:, 5])]
        return out
    new_unpad, top, left = letterbox(h, w, H, W)
    gain, px, py = ratio_pad(h, w, H, W)
    assert (px, py) == (left, top), ((px, py), (left, top))
    boxes = scale_boxes(x[:, :4], gain, px, py, w, h)
    out = []
    protos = None
    if nm:
        protos = np.fromfile(c["protos"], dtype="<f4").reshape(c["protos_shape"])[0]
    for k, row in enumerate(x):
        d = {"box": boxes[k].tolist(), "score": float(row[4]), "class": int(row[5])}
        if nk:
            kp = row[6:6 + nk * kd].reshape(nk, kd)
            xy = scale_coords(kp[:, :2], gain, px, py, w, h)
            d["keypoints"] = xy.tolist()
        if nm:
            m = process_mask(protos, row[6:6 + nm], row[:4], H, W)
            if m.sum() == 0:
                continue  # construct_result keeps the boxes with a mask
            d["mask"] = m
        out.append(d)
    if nm:
        compare_masks(c, out, answer, gain, px, py, top, left, new_unpad)
    return out


def compare_masks(c, out, answer, gain, px, py, top, left, new_unpad):
    """Each of svc's masks and polygons against the reference's, as IoU."""
    w, h = c["w"], c["h"]
    for k, d in enumerate(out):
        m = d.pop("mask")
        if k >= len(answer):
            continue
        a = answer[k]
        ref_pic = scale_image(m, top, left, new_unpad, w, h)
        if "mask" in a:
            got = rle_decode(a["mask"]["size"], a["mask"]["counts"])
            d["mask_iou"] = iou(got, ref_pic)
        ref_poly = scale_coords(polygon(m), gain, px, py, w, h)
        d["polygon_iou"] = iou(fill(a["polygon"], w, h), fill(ref_poly, w, h))


def main():
    cases = json.load(open(sys.argv[1]))
    answers = json.load(open(sys.argv[2]))
    out = [reference(c, a) for c, a in zip(cases, answers)]
    json.dump(out, open(sys.argv[3], "w"))


if __name__ == "__main__":
    main()
