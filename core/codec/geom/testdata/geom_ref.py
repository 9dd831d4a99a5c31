#!/usr/bin/python3
"""OpenCV and pyclipper reference for core/codec/geom's tests.

  geom_ref.py REQ.json OUT.json

REQ.json holds cases; each names a raw w×h uint8 map file (row-major).
For each map it writes what OpenCV and pyclipper give:
  contours   cv2.findContours(map, RETR_LIST, CHAIN_APPROX_SIMPLE)
  hulls      cv2.convexHull(contour, clockwise=c, returnPoints=False)
  rects      cv2.minAreaRect(contour) as [cx, cy, w, h, angle]
  boxes      cv2.boxPoints(rect)
  offsets    PyclipperOffset().AddPath(box, JT_ROUND, ET_CLOSEDPOLYGON)
             .Execute(distance) with distance = area * 1.5 / length of
             shapely's Polygon(box), for boxes with a side of at least 1
  fills      cv2.fillPoly(zeros(h, w), [polygon], 1) for each polygon of
             the case, as a list of set pixel indices
Floats are float32 values written exactly.
"""
import json
import sys

import cv2
import numpy as np
import pyclipper
from shapely.geometry import Polygon


def f(v):
    return float(np.float32(v))


def one(c):
    w, h = c["w"], c["h"]
    m = np.fromfile(c["file"], np.uint8).reshape(h, w)
    contours, _ = cv2.findContours(m.copy(), cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    out = {"contours": [], "hulls_cw": [], "hulls_ccw": [], "rects": [], "boxes": [], "distances": [], "offsets": [], "fills": []}
    for ct in contours:
        out["contours"].append(ct.reshape(-1, 2).tolist())
        out["hulls_cw"].append(cv2.convexHull(ct, clockwise=True, returnPoints=False).reshape(-1).tolist())
        out["hulls_ccw"].append(cv2.convexHull(ct, clockwise=False, returnPoints=False).reshape(-1).tolist())
        r = cv2.minAreaRect(ct)
        out["rects"].append([f(r[0][0]), f(r[0][1]), f(r[1][0]), f(r[1][1]), f(r[2])])
        box = cv2.boxPoints(r)
        out["boxes"].append([[f(x), f(y)] for x, y in box])
        if min(r[1]) >= 1:
            poly = Polygon(box)
            d = poly.area * 1.5 / poly.length
            o = pyclipper.PyclipperOffset()
            o.AddPath(box, pyclipper.JT_ROUND, pyclipper.ET_CLOSEDPOLYGON)
            out["distances"].append(d)
            out["offsets"].append(o.Execute(d))
        else:
            out["distances"].append(None)
            out["offsets"].append(None)
    for poly in c.get("polys", []):
        mask = np.zeros((h, w), np.uint8)
        cv2.fillPoly(mask, np.array(poly, np.int32).reshape(1, -1, 2), 1)
        out["fills"].append(np.flatnonzero(mask).tolist())
    return out


def main():
    req = json.load(open(sys.argv[1]))
    json.dump([one(c) for c in req], open(sys.argv[2], "w"))


main()
