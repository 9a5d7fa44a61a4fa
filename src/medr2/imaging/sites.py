"""Where a variant may put something on an image: the tissue, its periphery, the salient structures (issue 40).

A decoy cue (V6) must sit on normal, unremarkable tissue, and a metal insert (V11 ``ct_metal``) where metal is found
(a clip, a filling, a prosthesis at the body's edge), never at the centre of an organ. Both placements go through
the masks here, measured on the image itself or taken from the structures the case carries, the same for every
modality:

- :func:`tissue_mask`: the pixels that are not background (dark regions connected to the frame);
- :func:`periphery`: the outer band of the tissue, within :data:`PERIPHERY` of the body's depth of its edge (the
  background or, where the body fills the frame, the frame);
- :func:`salient_mask`: the pixels a reader scrutinises as a normal structure, where a decoy could be taken for
  the finding: each landmark or counted instance the case carries (kind ``landmark``/``instance``) with the zone round
  it (a landmark's as wide as its radius: the peripapillary zone round an optic disc), and the border of every
  anatomical structure whose outline the image shows (:func:`medr2.imaging.outline.outline_contrast` at least
  :data:`medr2.imaging.outline.MIN_OUTLINE_CONTRAST`): the brain's surface, a lung's edge (not a tissue class's:
  the grey/white matter border runs through the whole brain).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from scipy import ndimage

PERIPHERY = 0.15  # the outer band of the body: this fraction of its greatest depth


def tissue_mask(arr: np.ndarray) -> np.ndarray:
    """Pixels that are not background: background = dark regions connected to the image border."""
    gray = arr.astype(np.float64) if arr.ndim == 2 else arr.astype(np.float64).mean(axis=2)
    thr = max(10.0, 0.08 * float(np.percentile(gray, 99)))
    dark = ndimage.binary_opening(gray < thr, iterations=1)
    lab, _ = ndimage.label(dark)
    border = np.unique(np.concatenate([lab[0], lab[-1], lab[:, 0], lab[:, -1]]))
    background = np.isin(lab, border[border > 0])
    return ~background


def depth(tissue: np.ndarray) -> np.ndarray:
    """Each pixel's distance (pixels) to the nearest background pixel or the frame; 0 on the background."""
    padded = np.pad(np.asarray(tissue, dtype=bool), 1, constant_values=False)
    return np.asarray(ndimage.distance_transform_edt(padded))[1:-1, 1:-1]


def periphery(tissue: np.ndarray, margin: float = 0.0) -> np.ndarray:
    """The tissue's outer band: pixels at depth ``margin`` + 1 up to ``margin`` + 1 + :data:`PERIPHERY` of the
    body's greatest depth (at least 2 pixels wide); an object of radius ``margin`` centred there lies in the body,
    at its edge."""
    d = depth(tissue)
    lo = margin + 1.0
    return (d >= lo) & (d <= lo + max(2.0, PERIPHERY * float(d.max())))


def salient_mask(shape: tuple[int, int], structures: Iterable[tuple[str, np.ndarray, bool]], gap: float) -> np.ndarray:
    """The pixels a decoy must not touch (module docstring), from ``structures``: (kind, mask, outline shown) of
    each structure the case carries. ``gap``: the least distance kept from a shown outline."""
    out = np.zeros(shape, dtype=bool)
    g = max(1, int(round(gap)))
    for kind, mask, shown in structures:
        m = np.asarray(mask, dtype=bool)
        if m.shape != shape or not m.any():
            continue
        if kind in ("landmark", "instance"):
            ys, xs = np.nonzero(m)
            radius = 0.5 * max(int(ys.max() - ys.min()) + 1, int(xs.max() - xs.min()) + 1)
            zone = max(g, int(round(radius))) if kind == "landmark" else g
            out |= _within(m, zone)
        elif shown:
            edge = m & ~ndimage.binary_erosion(m, border_value=1)
            out |= _within(edge, g)
    return out


def _within(mask: np.ndarray, distance: float) -> np.ndarray:
    """The pixels within ``distance`` of ``mask``."""
    return np.asarray(ndimage.distance_transform_edt(~mask)) <= distance
