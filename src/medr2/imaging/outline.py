"""Whether the image shows a structure's outline: the step in grey level across its mask's border (issue 40).

A structure label (an atlas parcel, a segmentation's organ) says where the structure is; whether a reader can see
its extent is a property of the image. :func:`outline_contrast` measures it on the pixels a model is shown. At each
pixel of the mask's border it compares the structure's pixels within :data:`BAND` pixels with the pixels outside it
in the same window: the difference of their mean grey levels over the pooled standard deviation of the two (a
contrast-to-noise ratio of the edge against the texture each side of it; a floor of :data:`TEXTURE_FLOOR` of the
image's spread stands for the texture of a flat region, so a faint step on a flat background is not taken for an
edge). The outline's contrast is the :data:`BORDER_QUANTILE` quantile of that ratio over the border: the edge
three quarters of the border show at least. A structure counts as outlined only where most of its border shows
an edge, not one side of it (a cortical parcel whose outer border is the brain's surface and whose other borders
run through cortex of one intensity).

The threshold :data:`MIN_OUTLINE_CONTRAST` (1.0: over three quarters of the border the step is at least the
texture's standard deviation) separates, on a built sample bench (seed 5151, 200 cases; docs/tasks.md, "Outline
visible"), every atlas parcel of a template brain (165 of 165 measure below it; median 0.5, maximum 0.99) from
most whole-structure masks against their surroundings (brain, skull, intracranial space, lungs, grey and white
matter, the optic disc; 295 of 323 measure 1.0 or more, median about 2).
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

BAND = 3  # pixels each side of the border whose grey levels are compared
BORDER_QUANTILE = 0.25  # the edge three quarters of the border show at least
TEXTURE_FLOOR = 0.02  # of the image's spread (99th minus 1st percentile): the least texture a region is taken to have
MIN_OUTLINE_CONTRAST = 1.0  # below it the image does not show the structure's outline (module docstring)
SOFT_OUTLINE_CONTRAST = 2.0  # below it the outline is soft: a comparison of areas asks a larger ratio
MIN_SIDE = 0.05  # a border pixel is measured where each side fills at least this fraction of its window


def gray_of(arr: np.ndarray) -> np.ndarray:
    """The image as float grey levels (the mean of its channels)."""
    a = arr.astype(np.float64)
    return a.mean(axis=2) if a.ndim == 3 else a


def outline_contrast(image: np.ndarray, mask: np.ndarray) -> float:
    """The contrast of ``mask``'s outline on ``image`` (module docstring): 0.0 for an empty mask, one filling the
    image, a mask of another shape or a flat image."""
    gray = gray_of(image)
    m = np.asarray(mask, dtype=bool)
    if m.shape != gray.shape or not m.any() or m.all():
        return 0.0
    lo, hi = np.percentile(gray, (1, 99))
    spread = float(hi - lo)
    border = m & ~ndimage.binary_erosion(m, border_value=1)  # the frame is no border
    if spread <= 0 or not border.any():
        return 0.0
    size = 2 * BAND + 1
    inside = m.astype(np.float64)
    n_in = ndimage.uniform_filter(inside, size, mode="nearest")
    n_out = 1.0 - n_in
    ok = border & (n_in > MIN_SIDE) & (n_out > MIN_SIDE)
    if not ok.any():
        return 0.0
    sums = [ndimage.uniform_filter(v, size, mode="nearest")[ok]
            for v in (gray * inside, gray * (1 - inside), gray * gray * inside, gray * gray * (1 - inside))]
    mean_in, mean_out = sums[0] / n_in[ok], sums[1] / n_out[ok]
    var_in = np.maximum(sums[2] / n_in[ok] - mean_in**2, 0.0)
    var_out = np.maximum(sums[3] / n_out[ok] - mean_out**2, 0.0)
    cnr = np.abs(mean_in - mean_out) / np.sqrt((var_in + var_out) / 2 + (TEXTURE_FLOOR * spread) ** 2)
    return float(np.quantile(cnr, BORDER_QUANTILE))


def outline_visible(contrast: float | None) -> bool:
    """Whether a measured outline contrast shows the structure's outline (unmeasured: not shown)."""
    return contrast is not None and contrast >= MIN_OUTLINE_CONTRAST
