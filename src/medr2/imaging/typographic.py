"""Text burnt into an image (V10, typographic injection): a label or an instruction drawn in the styles of
scanner overlays and reading-room annotations, with Pillow's bundled default font (no font file is read).

:func:`layout` decides where the text goes (a corner whose text box overlaps no box to keep clear, e.g. the
lesions, so the evidence stays visible) and at what size; :func:`burn_text` draws it. Both are pure functions
of their arguments, so a render spec (``medr2.renders``) made of their parameters gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

# style -> corners tried in order (tl, tr, bl, br), text colour (RGB; grey level for an L image), boxed or not
TEXT_STYLES: dict[str, dict[str, Any]] = {
    # the burnt-in text of a scanner / PACS overlay: small white text in a corner, outlined, no box
    "overlay": {"corners": ("tl", "tr", "bl", "br"), "fill": (255, 255, 255), "box": False, "scale": 24},
    # a reading-room annotation: a boxed yellow label (white on a grey image)
    "annotation": {"corners": ("bl", "br", "tl", "tr"), "fill": (255, 230, 0), "box": True, "scale": 20},
    # an instruction addressed to the reader
    "instruction": {"corners": ("br", "bl", "tr", "tl"), "fill": (255, 255, 255), "box": True, "scale": 22},
}
MIN_FONT = 8
Box = tuple[float, float, float, float]


@lru_cache(maxsize=64)
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled default font at ``size`` pixels."""
    return ImageFont.load_default(size=size)


def _text_size(text: str, size: int) -> tuple[int, int]:
    x1, y1, x2, y2 = ImageDraw.Draw(Image.new("L", (1, 1))).multiline_textbbox((0, 0), text, font=font(size),
                                                                             stroke_width=1)
    return int(x2 - min(x1, 0)), int(y2 - min(y1, 0))


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def layout(width: int, height: int, text: str, style: str, avoid: Sequence[Box] = ()) -> dict[str, Any] | None:
    """Where and how large ``text`` is drawn in ``style`` on a ``width`` x ``height`` image: ``{"xy", "size",
    "corner"}``, the first corner of the style whose padded text box fits and overlaps none of ``avoid``; the
    font shrinks (to :data:`MIN_FONT`) until the text fits the width. ``None`` where no corner is free."""
    st = TEXT_STYLES[style]
    size = max(MIN_FONT, height // int(st["scale"]))
    while True:
        tw, th = _text_size(text, size)
        if tw + 8 <= width or size <= MIN_FONT:
            break
        size -= 1
    pad = max(2, size // 4)
    bw, bh = tw + 2 * pad, th + 2 * pad
    if bw > width or bh > height:
        return None
    margin = max(2, min(width, height) // 50)
    for corner in st["corners"]:
        x = margin if corner[1] == "l" else width - margin - bw
        y = margin if corner[0] == "t" else height - margin - bh
        box = (float(x), float(y), float(x + bw), float(y + bh))
        fits = x >= 0 and y >= 0 and x + bw <= width and y + bh <= height
        if fits and not any(_overlaps(box, a) for a in avoid):
            return {"xy": [int(x), int(y)], "size": size, "corner": corner, "box": [x, y, x + bw, y + bh]}
    return None


def ink(arr: np.ndarray, style: str) -> tuple[int, int, int]:
    """The colour ``style``'s text is drawn in on ``arr``: a coloured style's colour where it stands out from the
    image's colours, else another (:func:`medr2.imaging.draw.cue_color`, the one colour rule of drawn cues); white
    styles and grey images keep the style's own (text on a black box or stroke, as a scanner writes it)."""
    from medr2.imaging.draw import cue_color

    fill = tuple(TEXT_STYLES[style]["fill"])
    if arr.ndim == 2 or fill == (255, 255, 255):
        return fill  # type: ignore[return-value]
    return cue_color(arr, prefer=fill)  # type: ignore[arg-type]


def burn_text(arr: np.ndarray, text: str, style: str, xy: Sequence[int], size: int,
              fill_rgb: Sequence[int] | None = None) -> np.ndarray:
    """``arr`` (uint8 L or RGB) with ``text`` drawn in ``style`` at ``xy`` (the top left of its padded box);
    ``fill_rgb``: the text colour on an RGB image where it is not the style's (:func:`ink`)."""
    st = TEXT_STYLES[style]
    grey = arr.ndim == 2
    img = Image.fromarray(arr, mode="L" if grey else "RGB")
    draw = ImageDraw.Draw(img)
    fill: Any = (255 if st["fill"] == (255, 255, 255) else 230) if grey else tuple(fill_rgb or st["fill"])
    black: Any = 0 if grey else (0, 0, 0)
    pad = max(2, size // 4)
    x, y = int(xy[0]), int(xy[1])
    tw, th = _text_size(text, size)
    if st["box"]:
        draw.rectangle((x, y, x + tw + 2 * pad - 1, y + th + 2 * pad - 1), fill=black, outline=fill)
    draw.multiline_text((x + pad, y + pad), text, font=font(size), fill=fill, stroke_width=1, stroke_fill=black)
    return np.asarray(img).copy()
