#!/usr/bin/python3
"""Renders the pages of make ocr-bench (build/bench-ocr.sh).

  pages.py DIR

Writes DIR/NAME.png for each page and prints a JSON list of
{name, w, h, lines: [{text, box: [x0, y0, x1, y1], column}]}: each line's
text and where it was drawn (from its ink's left to its right, from the
font's ascent to its descent, in the page's pixels), with
core/pipeline/testdata/render_ocr.py's page(): Pillow, Debian's DejaVu
fonts in several faces and sizes. Two pages of each kind, from
different seeds: a letter, two columns, a wide page, short lines.
"""
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the repository
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "core", "pipeline", "testdata"))
from render_ocr import page  # noqa: E402

out = sys.argv[1]
pages = []
for k, seed in enumerate((11, 12)):
    pages += [
        page(out, "letter%d" % k, 800, 1000, seed),
        page(out, "columns%d" % k, 1100, 800, seed + 10, columns=2, sizes=(16, 20, 24), max_words=5),
        page(out, "wide%d" % k, 1400, 520, seed + 20, sizes=(20, 28, 36), max_words=12),
        page(out, "short%d" % k, 700, 800, seed + 30, sizes=(24, 30, 36), max_words=2),
    ]
print(json.dumps(pages))
