#!/usr/bin/python3
"""Renders the pages of core/pipeline's accuracy test.

  render_ocr.py DIR

Writes DIR/NAME.png for each page and prints a JSON list of
{name, w, h, lines: [{text, box: [x0, y0, x1, y1], column}]}: each line's
text and where it was drawn (from its ink's left to its right, from the
font's ascent to its descent, in the page's pixels; on the upside-down
page, where it lies once turned). Text is drawn
with Pillow in Debian's DejaVu fonts: several fonts and sizes, lines of
different lengths, a page of two columns, an upside-down page of short
lines, and a blank and a tiny page with no text. build/ocrpeer/pages.py
renders the OCR benchmark's pages with its page().
"""
import json
import random
import sys

from PIL import Image, ImageDraw, ImageFont

FONTS = "/usr/share/fonts/truetype/dejavu/"
FACES = ["DejaVuSans.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf", "DejaVuSans-Bold.ttf",
         "DejaVuSansCondensed.ttf", "DejaVuSerif-Bold.ttf"]
WORDS = ("the quick brown fox jumps over lazy dog invoice total amount due "
         "reads pages 2026 model server batch width height line score "
         "paddle detector orientation page column text number 42 order "
         "shipping address customer price 19.99 tax paid account").split()
BG, INK = (250, 248, 240), (20, 25, 40)


def text_line(r, n):
    return " ".join(r.choice(WORDS) for _ in range(n))


def draw_lines(d, r, x0, colw, y, bottom, column, sizes, max_words):
    lines = []
    while True:
        size = r.choice(sizes)
        font = ImageFont.truetype(FONTS + r.choice(FACES), size)
        n = r.randint(1, max_words)
        s = text_line(r, n)
        while n > 1 and font.getlength(s) > colw - 20:
            n -= 1
            s = text_line(r, n)
        x = x0 + r.randint(0, 12)
        ink = d.textbbox((x, y), s, font=font)
        ascent, descent = font.getmetrics()
        box = (ink[0], y, ink[2], y + ascent + descent)
        if box[3] > bottom:
            return lines
        d.text((x, y), s, font=font, fill=INK)
        lines.append({"text": s, "box": list(box), "column": column})
        y += int(size * (1.5 + 0.5 * r.random()))


def page(out, name, w, h, seed, columns=1, sizes=(16, 20, 24, 30, 36), max_words=8, upside=False):
    """Draws page NAME into the folder out and returns its line list."""
    r = random.Random(seed)
    im = Image.new("RGB", (w, h), BG)
    d = ImageDraw.Draw(im)
    colw = (w - 40) // columns
    lines = []
    for c in range(columns):
        lines += draw_lines(d, r, 20 + c * colw, colw, 20 + r.randint(0, 10), h - 20, c, sizes, max_words)
    if upside:
        im = im.rotate(180)
        for ln in lines:
            x0, y0, x1, y1 = ln["box"]
            ln["box"] = [w - x1, h - y1, w - x0, h - y0]
    im.save(out + "/" + name + ".png")
    return {"name": name, "w": w, "h": h, "lines": lines}


def main(out):
    pages = [
        page(out, "letter", 800, 1000, 1),
        page(out, "columns", 1100, 800, 2, columns=2, sizes=(16, 20, 24), max_words=5),
        page(out, "wide", 1400, 520, 3, sizes=(20, 28, 36), max_words=12),
        page(out, "upside", 700, 800, 4, sizes=(24, 30, 36), max_words=2, upside=True),
    ]
    Image.new("RGB", (640, 480), BG).save(out + "/blank.png")
    Image.new("RGB", (5, 3), INK).save(out + "/tiny.png")
    pages += [{"name": "blank", "w": 640, "h": 480, "lines": []}, {"name": "tiny", "w": 5, "h": 3, "lines": []}]
    print(json.dumps(pages))


if __name__ == "__main__":
    main(sys.argv[1])
