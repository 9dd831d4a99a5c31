#!/usr/bin/python3
"""Renders the pages of make ocr-bench (build/bench-ocr.sh).

  pages.py DIR

Writes DIR/NAME.png for each page and prints a JSON list of
{name, w, h, lines: [{text, box: [x0, y0, x1, y1], column}]}: each line's
text and where it was drawn (from its ink's left to its right, from the
font's ascent to its descent, in the page's pixels), as
core/pipeline/testdata/render_ocr.py writes its pages: Pillow, Debian's
DejaVu fonts in several faces and sizes. Two pages of each kind, from
different seeds: a letter, two columns, a wide page, short lines.
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


def page(name, w, h, seed, columns=1, sizes=(16, 20, 24, 30, 36), max_words=8):
    r = random.Random(seed)
    im = Image.new("RGB", (w, h), BG)
    d = ImageDraw.Draw(im)
    colw = (w - 40) // columns
    lines = []
    for c in range(columns):
        lines += draw_lines(d, r, 20 + c * colw, colw, 20 + r.randint(0, 10), h - 20, c, sizes, max_words)
    im.save(DIR + "/" + name + ".png")
    return {"name": name, "w": w, "h": h, "lines": lines}


DIR = sys.argv[1]
pages = []
for k, seed in enumerate((11, 12)):
    pages += [
        page("letter%d" % k, 800, 1000, seed),
        page("columns%d" % k, 1100, 800, seed + 10, columns=2, sizes=(16, 20, 24), max_words=5),
        page("wide%d" % k, 1400, 520, seed + 20, sizes=(20, 28, 36), max_words=12),
        page("short%d" % k, 700, 800, seed + 30, sizes=(24, 30, 36), max_words=2),
    ]
print(json.dumps(pages))
