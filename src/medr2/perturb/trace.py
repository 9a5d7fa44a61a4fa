"""What a reader sees of a removed lesion (V4): the trace an inpainted region leaves in the image.

One measure per removed region (a connected component of the pixels V4 replaced), five numbers, each against the
untouched tissue around the region (its ring, :func:`medr2.perturb.inpaint.ring_mask`, background and other lesions
left out):

- ``contrast``: the difference of the region's mean grey level and the ring's, in standard deviations of the ring
  (a patch darker or brighter than its surroundings, a smudge);
- ``texture``: how far the region's fine grain (the high-pass residual below :data:`GRAIN_SIGMA`), or its structure
  (the band-pass from there to a quarter of its radius, for a region of radius at least 4 :data:`STRUCTURE_SIGMA`),
  departs from the ring's,
  ``|log2(std inside / std ring)|``, the larger of the two (a smooth filled patch in textured or structured tissue,
  or a noisy one in smooth tissue); 1.0 = half or twice;
- ``edge``: the mean gradient magnitude along the region's border over the mean in the ring (a seam or a step
  drawn round the region);
- ``outline``: the largest deviation of a 1-pixel shell just outside the region (up to :func:`outline_reach` pixels
  out) from the ring beyond it, in standard deviations of that ring (a lesion's rim or halo left round the removed
  region: the ring outline a too-tight removal leaves);
- ``seam``: the sharpest bump of the shell profile within 2 px of the border (a thin line drawn round the region),
  over the sharpest farther out in the ring (at least :data:`MIN_SEAM` grey levels, and twice what the grain alone
  makes a shell's mean wander).

A removal passes where every number is at most its limit in :data:`LIMITS`. The limits were chosen by measurement
(the seed-5151 sample build, 80 images with lesions; docs/variants.md, V4): the same numbers
measured for regions of the removed regions' shapes placed on lesion-free tissue of the untouched images (476
controls: what tissue nobody touched measures) put each limit between their 92nd and 98.5th percentile (contrast
1.0 ≈ p96, texture 1.2 ≈ p93, edge 1.5 ≈ p97.5, outline 0.9 ≈ p98.5, seam 2.5 ≈ p98); all five together pass 85 %
of the controls (the gate errs towards skipping), 39 % of the regions V4 removes in those images (most of the rest
are smooth discs where gyri run round them: the fill cannot draw anatomy) and 12 % of the lesions left in place
(low-contrast lesions in tissue whose ring varies more than they stand out: a blind spot of a measure against the
ring, not a removal it passes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

GRAIN_SIGMA = 1.0  # px: the high-pass residual below this scale is the tissue's grain
STRUCTURE_SIGMA = 3.0  # px: the least upper scale of the structure band-pass (regions of 4x this radius and more)
GRADIENT_SIGMA = 1.0  # px: the scale at which a border's edge is measured
MIN_SD = 2.0  # grey levels: the least spread a ring's grey values are divided by (8-bit quantisation and JPEG grain)
MIN_GRAIN = 1.0  # grey levels: the least high-pass spread (a perfectly flat tissue has no grain to miss)
MIN_GRADIENT = 1.5  # grey levels per px: the least mean gradient a ring's edges are divided by

# the limit of each number (measured on the sample, see the module docstring)
LIMITS: dict[str, float] = {"contrast": 1.0, "texture": 1.2, "edge": 1.5, "outline": 0.9, "seam": 2.5}
MIN_SEAM = 1.0  # grey levels: the least bump of a shell profile a border's bump is divided by


NAMES = ("contrast", "texture", "edge", "outline", "seam")


@dataclass(frozen=True)
class Trace:
    """The trace of one removed region; ``failed`` names the numbers above their limit."""

    contrast: float
    texture: float
    edge: float
    outline: float
    seam: float

    def failed(self, limits: dict[str, float] | None = None) -> list[str]:
        lim = LIMITS if limits is None else limits
        return [k for k in NAMES if getattr(self, k) > lim[k]]

    def score(self, limits: dict[str, float] | None = None) -> float:
        """The largest number over its limit (≤ 1 passes)."""
        lim = LIMITS if limits is None else limits
        return max(getattr(self, k) / lim[k] for k in NAMES)


def gray_of(arr: np.ndarray) -> np.ndarray:
    return arr.astype(np.float64) if arr.ndim == 2 else arr.astype(np.float64).mean(axis=2)


def outline_reach(region: np.ndarray) -> int:
    """How far out (px) the outline shells of a region reach: a quarter of its equivalent radius, at least 3."""
    return int(max(3, round(0.25 * float(np.sqrt(region.sum() / np.pi)))))


def _sd(v: np.ndarray) -> float:
    return max(float(v.std()), MIN_SD)


def region_trace(gray: np.ndarray, region: np.ndarray, keep: np.ndarray) -> Trace | None:
    """The :class:`Trace` of one connected ``region`` in the grey image ``gray``; ``keep`` marks the pixels the
    surroundings may be measured on (tissue, no other lesion). None where too little tissue surrounds it to say."""
    from medr2.perturb.inpaint import ring_mask

    area = int(region.sum())
    if area == 0:
        return None
    reach = outline_reach(region)
    ring_w = int(max(4, round(0.6 * float(np.sqrt(area / np.pi)))))
    dt = ndimage.distance_transform_edt(~region)
    ring = ring_mask(region, reach + ring_w) & keep & (dt > reach)
    if ring.sum() < max(12, 0.25 * area):
        return None
    g_ring = gray[ring]
    contrast = abs(float(gray[region].mean()) - float(g_ring.mean())) / _sd(g_ring)

    smooth = ndimage.gaussian_filter(gray, GRAIN_SIGMA)
    hp = gray - smooth
    core = ndimage.binary_erosion(region, iterations=2)
    if core.sum() < 9:
        core = region
    grain_in = max(float(hp[core].std()), MIN_GRAIN)
    grain_ring = max(float(hp[ring].std()), MIN_GRAIN)
    # the same at the scale of the tissue's structure (a band-pass up to a quarter of the region's radius): a smooth
    # disc where gyri or vessels run round it has grain to spare but no structure
    texture = abs(float(np.log2(grain_in / grain_ring)))
    eq_r = float(np.sqrt(area / np.pi))
    if eq_r >= 4 * STRUCTURE_SIGMA:  # a smaller region holds too little of that scale to measure
        band = smooth - ndimage.gaussian_filter(gray, 0.25 * eq_r)
        struct_in = max(float(band[core].std()), MIN_GRAIN)
        struct_ring = max(float(band[ring].std()), MIN_GRAIN)
        texture = max(texture, abs(float(np.log2(struct_in / struct_ring))))

    grad = ndimage.gaussian_gradient_magnitude(gray, GRADIENT_SIGMA)
    border = (ndimage.binary_dilation(region, iterations=1) & ~ndimage.binary_erosion(region, iterations=1)) & \
        (keep | region)
    edge = float(grad[border].mean()) / max(float(grad[ring].mean()), MIN_GRADIENT) if border.any() else 0.0

    mean_r, sd_r = float(g_ring.mean()), _sd(g_ring)
    outline = 0.0
    for d in range(1, reach + 1):
        shell = (dt > d - 1) & (dt <= d) & keep
        if shell.sum() >= 6:
            outline = max(outline, abs(float(gray[shell].mean()) - mean_r) / sd_r)
    signed = dt - ndimage.distance_transform_edt(region)
    seam = _seam(gray, signed, keep | region, reach, ring_w, grain_ring)
    return Trace(contrast, texture, edge, outline, seam)


def _seam(gray: np.ndarray, signed: np.ndarray, where: np.ndarray, reach: int, ring_w: int, grain: float) -> float:
    """A thin line round the region's border: the sharpest bump of the mean grey level of 1-pixel shells (by signed
    distance to the border) within 2 px of it, over the sharpest in the ring farther out, at least
    :data:`MIN_SEAM` grey levels and at least twice what the tissue's ``grain`` alone makes a shell's mean wander
    (``grain / sqrt(pixels in the smallest shell)``)."""
    sizes: list[int] = []

    def shell(d: int) -> float | None:
        m = (signed > d - 1) & (signed <= d) & where
        n = int(m.sum())
        if n < 6:
            return None
        sizes.append(n)
        return float(gray[m].mean())

    prof = {d: shell(d) for d in range(-4, reach + ring_w + 1)}

    def bump(d: int) -> float:
        a, b, c = prof.get(d - 2), prof.get(d), prof.get(d + 2)
        return 0.0 if a is None or b is None or c is None else abs(b - 0.5 * (a + c))

    near = max(bump(d) for d in range(-1, 3))
    far = max((bump(d) for d in range(reach + 3, reach + ring_w - 1)), default=0.0)
    wander = 2.0 * grain / float(np.sqrt(min(sizes))) if sizes else 0.0
    return near / max(far, MIN_SEAM, wander)


def removal_traces(arr: np.ndarray, region: np.ndarray, keep: np.ndarray | None = None) -> list[Trace]:
    """The :class:`Trace` of every connected component of ``region`` in ``arr`` (uint8 (H, W) or (H, W, 3));
    ``keep``: the pixels the surroundings may be measured on (default: all outside ``region``)."""
    gray = gray_of(arr)
    lab, n = ndimage.label(region)
    keep = ~region if keep is None else (keep & ~region)
    out = []
    for i in range(1, n + 1):
        t = region_trace(gray, lab == i, keep)
        if t is not None:
            out.append(t)
    return out
