#!/usr/bin/python3
"""Renders lines of text as pictures, for the image tests of svc.

Usage: render_lines.py OUT_DIR FONT < lines.txt

For each input line i it writes OUT_DIR/i.jpg, i.png and i.webp (upright,
dark text on a light background, with a margin) and i-180.jpg, i-180.png and
i-180.webp (the same picture turned by 180 degrees). Sizes, colours and
margins vary with i, deterministically, so the pictures are not all alike.
"""
import os
import sys

from PIL import Image, ImageDraw, ImageFont


def render(text, font_path, i):
    size = 28 + (i * 7) % 17           # 28..44 px
    font = ImageFont.truetype(font_path, size)
    left, top, right, bottom = font.getbbox(text)
    margin_x = 6 + (i * 5) % 13
    margin_y = 4 + (i * 3) % 9
    w = right - left + 2 * margin_x
    h = bottom - top + 2 * margin_y
    bg = 255 - (i * 11) % 40           # 216..255
    fg = (i * 13) % 60                 # 0..59
    img = Image.new("RGB", (w, h), (bg, bg, max(bg - 10, 0)))
    ImageDraw.Draw(img).text((margin_x - left, margin_y - top), text, font=font, fill=(fg, fg, fg + 20))
    return img


def main():
    out, font_path = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for i, line in enumerate(sys.stdin.read().splitlines()):
        if not line:
            continue
        img = render(line, font_path, i)
        for suffix, pic in (("", img), ("-180", img.rotate(180))):
            base = os.path.join(out, f"{i}{suffix}")
            pic.save(base + ".jpg", quality=90)
            pic.save(base + ".png")
            pic.save(base + ".webp", quality=90)


if __name__ == "__main__":
    main()
