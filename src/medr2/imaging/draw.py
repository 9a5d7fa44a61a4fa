"""Drawing region cues on images: one style for every drawn cue in a bench.

Used by the task builder's cue items and by variants V5 (correct cue) and V6 (decoy cue), so a cue
looks the same wherever it appears. A drawn mark never covers what it marks (issue 40, kind 6: a 2-px box
drawn inside the box of a 5-px bone-scan focus painted the focus over): every line lies *outside* the region.
Kinds: ``box`` (outline drawn just outside the box, so the inner edge of the drawn pixels is the box),
``contour`` (outline just outside a mask), ``mask`` (translucent fill, outlined just outside), ``point`` (a ring
round the region's centre, its inside clear of the region's box). Output is always RGB uint8; a grayscale image
is replicated to three channels first, so the cue colour is never a gray level.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import ndimage

from medr2.records import Box, Cue

CUE_COLOR: tuple[int, int, int] = (255, 215, 0)  # a saturated yellow, never a gray level
MASK_ALPHA = 0.35
# the colours a cue may be drawn in, in order of preference (:func:`cue_color`); none is a grey level
CUE_PALETTE: tuple[tuple[int, int, int], ...] = (CUE_COLOR, (0, 255, 255), (255, 0, 255), (0, 255, 0),
                                                 (0, 64, 255), (255, 0, 0))
CUE_COLOR_FAR = 120.0  # RGB distance from every colour of the image that makes a cue colour stand out
COLOUR_LEVELS = 16  # the image's colours are counted in 16 levels per channel
MIN_COLOUR_SHARE = 0.0005  # a colour the image uses: at least this share of its pixels (noise is not a colour)


def image_colours(arr: np.ndarray) -> np.ndarray:
    """The colours ``arr`` uses (n x 3, RGB bin centres): each at least :data:`MIN_COLOUR_SHARE` of its pixels,
    counted in :data:`COLOUR_LEVELS` levels per channel (a grey image uses grey levels only)."""
    rgb = to_rgb(arr).reshape(-1, 3).astype(np.int64)
    step = 256 // COLOUR_LEVELS
    q = rgb // step
    codes = (q[:, 0] * COLOUR_LEVELS + q[:, 1]) * COLOUR_LEVELS + q[:, 2]
    counts = np.bincount(codes, minlength=COLOUR_LEVELS ** 3)
    used = np.nonzero(counts >= max(1.0, MIN_COLOUR_SHARE * len(codes)))[0]
    bins = np.stack([used // COLOUR_LEVELS ** 2, (used // COLOUR_LEVELS) % COLOUR_LEVELS, used % COLOUR_LEVELS], 1)
    return bins.astype(np.float64) * step + step / 2.0


def colour_margin(color: tuple[int, int, int] | list[int], colours: np.ndarray) -> float:
    """The RGB distance from ``color`` to the nearest of ``colours`` (infinite where there are none)."""
    if len(colours) == 0:
        return float("inf")
    return float(np.sqrt(((colours - np.asarray(color, np.float64)) ** 2).sum(axis=1)).min())


def cue_color(arr: np.ndarray | None, prefer: tuple[int, int, int] = CUE_COLOR) -> tuple[int, int, int]:
    """The colour a cue on ``arr`` is drawn in, the one rule for every drawn cue and burnt-in annotation: the first
    colour of :data:`CUE_PALETTE` at least :data:`CUE_COLOR_FAR` from every colour the image uses
    (:func:`image_colours`), else the palette colour farthest from them (never yellow on a Doppler map's yellow).
    ``None`` (no image known): the first. ``prefer``: the first colour tried (a style's own colour), in place of
    the palette's first."""
    palette = (prefer, *(c for c in CUE_PALETTE if c not in (prefer, CUE_COLOR)))
    if arr is None:
        return palette[0]
    colours = image_colours(arr)
    margins = [colour_margin(c, colours) for c in palette]
    for c, m in zip(palette, margins, strict=True):
        if m >= CUE_COLOR_FAR:
            return c
    return palette[int(np.argmax(margins))]


def line_width(width: int, height: int) -> int:
    """Outline width in pixels for an image of this size (about 0.5% of the short side, at least 2)."""
    return max(2, round(min(width, height) / 200))


def cue_style(width: int, height: int, color: tuple[int, int, int] = CUE_COLOR) -> dict[str, Any]:
    """The style stored in ``Cue.style`` for an image of this size."""
    return {"color": list(color), "line_width": line_width(width, height), "alpha": MASK_ALPHA}


def make_cue(kind: str, box: Box, width: int, height: int, *, image: np.ndarray | None, drawn: bool = True) -> Cue:
    """A cue of ``kind`` on ``box``; a drawn cue is coloured for the ``image`` it is drawn on (:func:`cue_color`,
    recorded in ``style["color"]``; every caller names the image, ``None`` only for a cue drawn on none)."""
    color = cue_color(image) if drawn and kind != "coords" else CUE_COLOR
    return Cue(kind=kind, box=tuple(float(v) for v in box),  # type: ignore[arg-type]
               style=cue_style(width, height, color), drawn=drawn)


def to_rgb(arr: np.ndarray) -> np.ndarray:
    if arr.ndim == 2:
        return np.repeat(arr[:, :, None], 3, axis=2)
    return arr.copy()


def _pixel_box(box: Box, width: int, height: int) -> tuple[int, int, int, int]:
    """Integer pixel bounds [x1, x2) x [y1, y2) covering ``box``, clipped to the image."""
    x1, y1, x2, y2 = box
    return (max(0, math.floor(x1)), max(0, math.floor(y1)), min(width, math.ceil(x2)), min(height, math.ceil(y2)))


def box_mask(box: Box, width: int, height: int) -> np.ndarray:
    x1, y1, x2, y2 = _pixel_box(box, width, height)
    m = np.zeros((height, width), bool)
    m[y1:y2, x1:x2] = True
    return m


def _outline(mask: np.ndarray, lw: int) -> np.ndarray:
    """Pixels outside ``mask`` within ``lw`` pixels of it (a line round the region that covers none of it)."""
    return ndimage.binary_dilation(mask, iterations=lw) & ~mask


def _ring(box: Box, lw: int, width: int, height: int) -> np.ndarray:
    """A ring of width ``lw`` round the centre of ``box`` whose inside holds the whole box (its half-diagonal)."""
    x1, y1, x2, y2 = box
    cx, cy = (x1 + x2) / 2.0, (y1 + y2) / 2.0
    inner = max(3.0, math.hypot(x2 - x1, y2 - y1) / 2.0 + 1.0)
    yy, xx = np.ogrid[:height, :width]
    d2 = (xx + 0.5 - cx) ** 2 + (yy + 0.5 - cy) ** 2
    return (d2 > inner * inner) & (d2 <= (inner + lw) ** 2) & ~box_mask(box, width, height)


def draw_cue(arr: np.ndarray, cue: Cue, mask: np.ndarray | None = None) -> np.ndarray:
    """Return an RGB copy of ``arr`` with ``cue`` drawn. ``mask`` (bool, image-sized) shapes
    ``contour`` and ``mask`` cues; without it they follow the box. ``coords`` cues draw nothing."""
    out = to_rgb(arr)
    if not cue.drawn or cue.kind == "coords":
        return out
    h, w = out.shape[:2]
    style = {**cue_style(w, h), **cue.style}
    color = np.array(style["color"], dtype=np.float64)
    lw = int(style["line_width"])
    region = mask if mask is not None and cue.kind in ("contour", "mask") else box_mask(cue.box, w, h)
    if cue.kind == "box":  # a rectangle just outside the box
        x1, y1, x2, y2 = cue.box
        out[box_mask((x1 - lw, y1 - lw, x2 + lw, y2 + lw), w, h) & ~region] = color.astype(np.uint8)
    elif cue.kind == "contour":
        out[_outline(region, lw)] = color.astype(np.uint8)
    elif cue.kind == "mask":
        a = float(style["alpha"])
        blended = (1.0 - a) * out[region].astype(np.float64) + a * color
        out[region] = np.clip(np.rint(blended), 0, 255).astype(np.uint8)
        out[_outline(region, max(1, lw // 2))] = color.astype(np.uint8)
    elif cue.kind == "point":
        out[_ring(cue.box, lw, w, h)] = color.astype(np.uint8)
    else:
        raise ValueError(f"unknown cue kind {cue.kind!r}")
    return out


def cue_color_mask(rgb: np.ndarray, color: tuple[int, int, int] = CUE_COLOR) -> np.ndarray:
    """Pixels painted exactly in the cue colour (for checking where a cue was drawn)."""
    if rgb.ndim != 3:
        return np.zeros(rgb.shape[:2], bool)
    return np.all(rgb == np.array(color, dtype=rgb.dtype), axis=2)


def mask_bbox(mask: np.ndarray) -> Box | None:
    """Pixel ``xyxy`` bounding box of a boolean mask (None if empty)."""
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return None
    return (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1))


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two xyxy boxes (continuous coordinates); 0 when the union is empty. The one
    IoU of the package (scoring, variants, readers)."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    area_a = max(0.0, a[2] - a[0]) * max(0.0, a[3] - a[1])
    area_b = max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])
    union = area_a + area_b - inter
    return inter / union if union > 0 else 0.0


# A wrong box shown as an answer (a misleading chain's earlier step, T8's injected step) overlaps the true box
# at most this much: far below the IoU a box needs to score correct (medr2.scoring.scorer.BOX_CORRECT_IOU, 0.5;
# a test holds the two apart), so a "wrong" box is never a right one.
WRONG_BOX_MAX_IOU = 0.1


def _placements(box: Box, width: float, height: float) -> list[Box]:
    """Same-sized places for ``box`` inside the image, in a fixed order: mirrored left-right, top-bottom and both,
    moved by its own width or height to either side, then the four corners."""
    x1, y1, x2, y2 = box
    bw, bh = x2 - x1, y2 - y1

    def at(nx: float, ny: float) -> Box:
        nx = min(max(0.0, nx), width - bw)
        ny = min(max(0.0, ny), height - bh)
        return (nx, ny, nx + bw, ny + bh)

    mx, my = width - x2, height - y2
    return [at(mx, y1), at(x1, my), at(mx, my), at(x1 - bw, y1), at(x2, y1), at(x1, y1 - bh), at(x1, y2),
            at(0, 0), at(width - bw, 0), at(0, height - bh), at(width - bw, height - bh)]


def wrong_box(box: Box, width: float, height: float) -> Box:
    """A box inside a ``width`` x ``height`` image whose IoU with ``box`` is at most :data:`WRONG_BOX_MAX_IOU`:
    the same size somewhere else where the image has room, else the size halved until one fits (a box covering
    most of the image has no same-sized wrong place). Deterministic: the first place in a fixed order."""
    if width <= 0 or height <= 0:
        raise ValueError(f"image size must be positive, got {width}x{height}")
    x1, y1, x2, y2 = box
    cur: Box = (min(max(0.0, x1), width), min(max(0.0, y1), height), min(max(0.0, x2), width),
                min(max(0.0, y2), height))
    if cur[2] - cur[0] <= 0 or cur[3] - cur[1] <= 0:  # a degenerate truth: any box a quarter of the image
        cur = (0.0, 0.0, width / 4, height / 4)
    for _ in range(64):
        for cand in _placements(cur, width, height):
            if iou(cand, box) <= WRONG_BOX_MAX_IOU:
                return cand
        cx, cy = (cur[0] + cur[2]) / 2, (cur[1] + cur[3]) / 2
        hw, hh = (cur[2] - cur[0]) / 4, (cur[3] - cur[1]) / 4
        cur = (cx - hw, cy - hh, cx + hw, cy + hh)
    raise AssertionError("unreachable: a box 2**-64 of the image overlaps nothing by more than the bound")
