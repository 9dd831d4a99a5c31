"""Draws a small page of three lines with Pillow and DejaVu Sans (Debian's
python3-pil and fonts-dejavu-core) and writes it as PNG to the path given:
the page docs/ocr.md reads."""
import sys

from PIL import Image, ImageDraw, ImageFont

LINES = ["Invoice 2026-118", "Total due: 42.50 EUR", "Thank you!"]

font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 32)
im = Image.new("RGB", (640, 240), "white")
draw = ImageDraw.Draw(im)
for i, line in enumerate(LINES):
    draw.text((40, 30 + 64 * i), line, font=font, fill="black")
im.save(sys.argv[1])
