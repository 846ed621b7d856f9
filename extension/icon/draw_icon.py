"""Torch Doctor's icon, drawn from shapes: a flame (a teardrop) with a pulse line across it.

Run with any Python that has Pillow: `.venv/bin/python extension/icon/draw_icon.py`; it writes
extension/media/icon.png (128x128, the Marketplace size), drawn at 512 px and downscaled.
"""

import math
from pathlib import Path

from PIL import Image, ImageDraw

OUT = Path(__file__).resolve().parents[1] / "media" / "icon.png"

S = 512
img = Image.new("RGBA", (S, S), (0, 0, 0, 0))
d = ImageDraw.Draw(img)
d.rounded_rectangle((8, 8, S - 8, S - 8), radius=96, fill=(27, 31, 42, 255))


def teardrop(cx, cy, r, h, lean=0.0, n=200):
    """A flame outline: a circle of radius r at (cx, cy) drawn up into a point h above it."""
    pts = []
    for i in range(n + 1):
        t = math.pi * 2 * i / n
        x, y = math.sin(t), -math.cos(t)  # start at the top
        if y < 0:  # upper half: pull towards the tip
            k = -y
            px = cx + r * x * (1 - k) ** 1.2 + lean * r * k**2
            py = cy + y * (r + (h - r) * k**1.5)
        else:
            px, py = cx + r * x, cy + r * y
        pts.append((px, py))
    return pts


# Outer flame (orange-red), inner flame (amber): a vertical gradient through a mask.
for r, h, lean, top, bottom in [
    (140, 265, 0.3, (255, 120, 40), (238, 60, 40)),
    (84, 165, 0.2, (255, 214, 90), (255, 150, 50)),
]:
    mask = Image.new("L", (S, S), 0)
    ImageDraw.Draw(mask).polygon(teardrop(S / 2, 345 if r > 100 else 360, r, h, lean), fill=255)
    grad = Image.new("RGBA", (S, S))
    gd = ImageDraw.Draw(grad)
    for y in range(S):
        a = y / S
        gd.line([(0, y), (S, y)], fill=tuple(int(top[i] * (1 - a) + bottom[i] * a) for i in range(3)) + (255,))
    img.paste(grad, (0, 0), mask)

# The pulse: a white heartbeat line across the flame, with a dark outline for contrast.
pulse = [(44, 345), (172, 345), (205, 290), (245, 410), (290, 245), (325, 345), (468, 345)]
d.line(pulse, fill=(27, 31, 42, 255), width=44, joint="curve")
d.line(pulse, fill=(255, 255, 255, 255), width=22, joint="curve")
for p in (pulse[0], pulse[-1]):
    d.ellipse((p[0] - 11, p[1] - 11, p[0] + 11, p[1] + 11), fill=(255, 255, 255, 255))

img.resize((128, 128), Image.LANCZOS).save(str(OUT), optimize=True)
