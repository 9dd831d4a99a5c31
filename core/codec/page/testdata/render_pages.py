#!/usr/bin/python3
"""Renders the text pages of core/codec/page's real-detector test.

  render_pages.py DIR

Writes, for each page, DIR/NAME.rgb (the page, raw RGB) and DIR/NAME.det
(the page resized for the detector as DetResizeForTest does it:
limit_side_len 960, limit_type max, cv2.resize's default bilinear; raw
BGR, as PaddleOCR feeds cv2's BGR picture), and prints a JSON list of
{name, w, h, det_w, det_h}. Text is drawn with Pillow in Debian's DejaVu
fonts: several sizes and fonts, lines of different lengths, two columns,
a slightly rotated block.
"""
import json
import random
import sys

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

FONTS = "/usr/share/fonts/truetype/dejavu/"
WORDS = ("the quick brown fox jumps over lazy dog invoice total amount due "
         "svc reads pages 2026 model server batch width height line score "
         "paddle detector recogniser orientation page column text").split()


def line(r, n):
    return " ".join(r.choice(WORDS) for _ in range(n))


def page(name, w, h, seed, columns=1, angle=0.0):
    r = random.Random(seed)
    im = Image.new("RGB", (w, h), (250, 248, 240))
    d = ImageDraw.Draw(im)
    fonts = ["DejaVuSans.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf", "DejaVuSans-Bold.ttf"]
    colw = (w - 40) // columns
    for c in range(columns):
        y = 20 + r.randint(0, 10)
        while y < h - 40:
            size = r.choice([14, 18, 22, 28, 36])
            font = ImageFont.truetype(FONTS + r.choice(fonts), size)
            words = r.randint(1, max(1, colw // (size * 3)))
            d.text((20 + c * colw + r.randint(0, 12), y), line(r, words), font=font, fill=(20, 25, 40))
            y += int(size * (1.3 + r.random()))
    if angle:
        im = im.rotate(angle, resample=Image.BICUBIC, expand=False, fillcolor=(250, 248, 240))
    rgb = np.asarray(im, np.uint8)
    rgb.tofile(DIR + "/" + name + ".rgb")
    limit = 960
    ratio = float(limit) / max(h, w) if max(h, w) > limit else 1.0
    rh = max(int(round(int(h * ratio) / 32) * 32), 32)
    rw = max(int(round(int(w * ratio) / 32) * 32), 32)
    det = cv2.resize(np.ascontiguousarray(rgb[:, :, ::-1]), (rw, rh))
    det.tofile(DIR + "/" + name + ".det")
    return {"name": name, "w": w, "h": h, "det_w": rw, "det_h": rh}


DIR = sys.argv[1]
print(json.dumps([
    page("letter", 640, 800, 1),
    page("columns", 900, 640, 2, columns=2),
    page("wide", 1200, 500, 3),
    page("rotated", 700, 520, 4, angle=4.0),
    page("small", 333, 217, 5),
]))
