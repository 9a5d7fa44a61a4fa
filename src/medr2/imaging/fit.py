"""Fitting an image to a size: the one rule of every place that shows an image in a frame of another shape.

:func:`fit_image` letterboxes: the image is centred on a canvas of the target's aspect ratio (its longer side kept,
the margins filled with ``fill``), then that canvas is resampled to the target size. The aspect ratio is kept, so a
128 x 512 whole-body bone scan fitted to 512 x 512 stays a bone scan with dark margins beside it, never a smear
stretched four times wider (issue 40, kind 6: a swapped image the question is asked of must still show what the
question needs). Used by the render op ``fit`` (V2, V3 and V12 show another case's image in the clean item's
frame), the look-alike thumbnails (:func:`medr2.imaging.similarity.thumbnail`) and the contact sheets
(:func:`medr2.bench.contact.draw_case`); ``tests/test_image_fit.py`` finds every resampling call of the package
and holds each to this function or to a scale that keeps the aspect ratio.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RESAMPLING = ("bilinear", "box", "lanczos", "nearest")


@dataclass(frozen=True)
class Fit:
    """Where a ``width`` x ``height`` image lands when fitted: ``scale`` (target pixels per source pixel, the same
    along both axes) and the offset (``x``, ``y``) of its top-left corner in the target, in target pixels."""

    scale: float
    x: float
    y: float

    def box(self, box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
        """``box`` (x1, y1, x2, y2 in source pixels) in target pixels."""
        x1, y1, x2, y2 = box
        s = self.scale
        return (self.x + x1 * s, self.y + y1 * s, self.x + x2 * s, self.y + y2 * s)


def _canvas(width: int, height: int, target_w: int, target_h: int) -> tuple[int, int]:
    """The size of the canvas of the target's aspect that holds a ``width`` x ``height`` image (its longer side
    relative to the target kept, the other grown)."""
    if width * target_h >= height * target_w:  # wider than the target: pad rows
        return width, max(height, round(width * target_h / target_w))
    return max(width, round(height * target_w / target_h)), height


def fit_geometry(width: int, height: int, target_w: int, target_h: int) -> Fit:
    """Where :func:`fit_image` puts a ``width`` x ``height`` image in a ``target_w`` x ``target_h`` one."""
    cw, ch = _canvas(width, height, target_w, target_h)
    s = target_w / cw
    return Fit(scale=s, x=(cw - width) // 2 * s, y=(ch - height) // 2 * s)


def fit_image(arr: np.ndarray, target_w: int, target_h: int, *, fill: int | tuple[int, int, int] = 0,
              resample: str = "bilinear") -> np.ndarray:
    """``arr`` (uint8, grey or RGB) letterboxed to ``target_w`` x ``target_h``: centred on a canvas of the target's
    aspect filled with ``fill`` (its offsets rounded down), then resampled (``resample``, Pillow's filter of that
    name) to the target size. An image already of the target size is returned as a copy, unchanged."""
    from PIL import Image

    if target_w < 1 or target_h < 1:
        raise ValueError(f"target size must be positive, not {target_w}x{target_h}")
    if resample not in RESAMPLING:
        raise ValueError(f"resample must be one of {', '.join(RESAMPLING)}, not {resample!r}")
    a = np.asarray(arr)
    h, w = a.shape[:2]
    if (w, h) == (target_w, target_h):
        return a.copy()
    cw, ch = _canvas(w, h, target_w, target_h)
    canvas = np.empty((ch, cw, *a.shape[2:]), dtype=a.dtype)
    if a.ndim == 2:
        canvas[...] = fill if isinstance(fill, int) else round(sum(fill) / len(fill))
    else:
        canvas[...] = fill if isinstance(fill, tuple) else (fill,) * a.shape[2]
    y0, x0 = (ch - h) // 2, (cw - w) // 2
    canvas[y0:y0 + h, x0:x0 + w] = a
    if (cw, ch) == (target_w, target_h):
        return canvas
    filt = getattr(Image.Resampling, resample.upper())
    return np.asarray(Image.fromarray(canvas).resize((target_w, target_h), filt)).copy()
