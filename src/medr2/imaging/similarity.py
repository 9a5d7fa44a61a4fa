"""How alike two images look, offline on the CPU: the structural similarity (SSIM,
:func:`medr2.imaging.physics.ssim`, the one SSIM of medr2) of the two images as grey thumbnails of one size.

A thumbnail (:data:`THUMB` pixels a side: the grey image fitted by :func:`medr2.imaging.fit.fit_image`, centred on
a black square of its longer side, so its aspect ratio is kept, then Pillow's area resampling) keeps what a glance
or a vision encoder's coarse patches see (the layout of the body, bright and dark regions) and drops the fine
detail that tells two cases apart; so two images with a high score are *look-alikes* (V12, docs/variants.md), not
the same image. The score is symmetric, 1.0 for an image and itself, and at most 1.0; it does not depend on the
images' sizes beyond what the thumbnail keeps.
"""

from __future__ import annotations

import numpy as np

from medr2.imaging.fit import fit_image

THUMB = 16  # pixels a side of the thumbnails compared (what a glance sees: docs/variants.md, V12)
DIGITS = 4  # similarity is recorded rounded (same bytes across BLAS builds)


def thumbnail(arr: np.ndarray) -> np.ndarray:
    """``arr`` (uint8, grey or RGB/RGBA) as a ``THUMB x THUMB`` grey uint8 thumbnail."""
    a = np.asarray(arr)
    grey = np.clip(np.rint(a if a.ndim == 2 else a[..., :3].astype(np.float64).mean(axis=2)), 0, 255)
    return fit_image(grey.astype(np.uint8), THUMB, THUMB, resample="box")


def look_alike(a: np.ndarray, b: np.ndarray) -> float:
    """How alike images ``a`` and ``b`` look: SSIM of their thumbnails (:func:`thumbnail`), rounded to
    :data:`DIGITS` places; either may already be a thumbnail."""
    from medr2.imaging.physics import ssim

    ta = a if a.shape == (THUMB, THUMB) and a.dtype == np.uint8 else thumbnail(a)
    tb = b if b.shape == (THUMB, THUMB) and b.dtype == np.uint8 else thumbnail(b)
    return round(ssim(ta, tb), DIGITS)
