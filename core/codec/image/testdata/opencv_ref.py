#!/usr/bin/python3
"""OpenCV reference for core/codec/image's tests and benchmark.

  opencv_ref.py make DIR        writes fixtures that Go cannot encode itself
                                (from DIR/photo.png): progressive and CMYK
                                JPEG, WebP lossy and lossless, 16-bit,
                                palette, alpha and grey PNG, GIF, BMP, grey
                                JPEG, and text lines rendered with DejaVu Sans
  opencv_ref.py ref REQ.json    preprocesses each case of the request with
                                cv2 (imdecode IMREAD_COLOR, resize, crop/pad,
                                normalise, layout) into case["out"] as raw
                                little-endian float32
  opencv_ref.py time REQ.json   times the same steps single-threaded; prints
                                JSON {name: ms per image}
"""
import json
import math
import sys
import time

import cv2
import numpy as np

INTERP = {"nearest": cv2.INTER_NEAREST, "bilinear": cv2.INTER_LINEAR,
          "bicubic": cv2.INTER_CUBIC, "area": cv2.INTER_AREA}


def make(d):
    from PIL import Image, ImageDraw, ImageFont
    photo = cv2.imread(d + "/photo.png", cv2.IMREAD_COLOR)
    cv2.imwrite(d + "/progressive.jpg", photo, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1, cv2.IMWRITE_JPEG_QUALITY, 92])
    cv2.imwrite(d + "/baseline.jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, 92])
    grey = cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY)
    cv2.imwrite(d + "/grey.jpg", grey)
    cv2.imwrite(d + "/grey.png", grey)
    cv2.imwrite(d + "/lossy.webp", photo, [cv2.IMWRITE_WEBP_QUALITY, 90])
    cv2.imwrite(d + "/lossless.webp", photo, [cv2.IMWRITE_WEBP_QUALITY, 101])
    cv2.imwrite(d + "/deep.png", photo.astype(np.uint16) * 257 + np.uint16(77))
    alpha = np.dstack([photo, (np.arange(photo.shape[1]) % 256).astype(np.uint8)[None, :].repeat(photo.shape[0], 0)])
    cv2.imwrite(d + "/alpha.png", alpha)
    cv2.imwrite(d + "/photo.bmp", photo)
    rgb = Image.fromarray(photo[:, :, ::-1])
    rgb.convert("CMYK").save(d + "/cmyk.jpg", quality=95)
    pal = rgb.quantize(colors=200)
    pal.save(d + "/palette.png")
    pal.save(d + "/photo.gif")
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 30)
    for name, text, size in [("line-short", "svc reads 0123", (320, 48)),
                             ("line-long", "The quick brown fox jumps over the lazy dog, 42 times.", (900, 40))]:
        im = Image.new("RGB", size, (250, 248, 240))
        ImageDraw.Draw(im).text((6, 4), text, font=font, fill=(20, 30, 60))
        im.save(d + "/" + name + ".png")


def prepare(c, data):
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if c["color"] == "grey":
        img = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)[:, :, None]
    elif c["color"] == "rgb":
        img = img[:, :, ::-1]
    h, w = img.shape[:2]
    H, W = c["H"], c["W"]
    interp = INTERP[c["interp"]]
    ox = oy = 0
    mode = c["resize"]
    if mode == "cover":
        s = max(W / w, H / h)
        rw, rh = max(W, math.floor(w * s + 0.5)), max(H, math.floor(h * s + 0.5))
    elif mode == "fit":
        s = min(W / w, H / h)
        rw, rh = min(max(round(w * s), 1), W), min(max(round(h * s), 1), H)  # LetterBox's new_unpad
        ox, oy = (W - rw) // 2, (H - rh) // 2
    elif mode == "height":
        rw, rh = min(max(math.ceil(H * (w / h)), 1), c["cap"]), H
    else:
        rw, rh = W, H
    r = cv2.resize(np.ascontiguousarray(img), (rw, rh), interpolation=interp).reshape(rh, rw, img.shape[2])
    if mode == "cover":
        x0, y0 = (rw - W) // 2, (rh - H) // 2
        r = r[y0:y0 + H, x0:x0 + W]
    return r, ox, oy


def normalise(c, r, ox, oy):
    H, W = c["H"], c["W"]
    mean, std = np.array(c["mean"], np.float64), np.array(c["std"], np.float64)
    out = np.empty((H, W, r.shape[2]), np.float64)
    out[:] = (c["pad"] * c["scale"] - mean) / std
    out[oy:oy + r.shape[0], ox:ox + r.shape[1]] = (r.astype(np.float64) * c["scale"] - mean) / std
    out = out.astype(np.float32)
    if c["layout"] == "nchw":
        out = out.transpose(2, 0, 1)
    return np.ascontiguousarray(out)


def ref(path):
    for c in json.load(open(path)):
        data = open(c["file"], "rb").read()
        normalise(c, *prepare(c, data)).astype("<f4").tofile(c["out"])


def timing(path):
    cv2.setNumThreads(1)
    res = {}
    for c in json.load(open(path)):
        data = open(c["file"], "rb").read()
        normalise(c, *prepare(c, data))
        n, t0 = 0, time.perf_counter()
        while n < 3 or time.perf_counter() - t0 < 1.0:
            normalise(c, *prepare(c, data))
            n += 1
        res[c["name"]] = (time.perf_counter() - t0) / n * 1000
    print(json.dumps(res))


if __name__ == "__main__":
    {"make": make, "ref": ref, "time": timing}[sys.argv[1]](sys.argv[2])
