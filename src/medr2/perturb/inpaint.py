"""Evidence removal for V4: fill a region from the surrounding tissue.

The region (:func:`medr2.perturb.visual.lesion_removal_region`) covers each lesion's halo as measured on the image
(:func:`halo_px`). Two parts: a harmonic fill (the solution of Laplace's equation inside the region with the pixels
around it as boundary values, i.e. the smoothest surface that meets the surroundings) carries the
low-frequency shading across; a texture layer copied from nearby tissue (a patch of the high-pass
residual whose mean and spread match a ring around the region) restores the grain, so the fill is
neither a flat patch nor a blur. Pixels outside the region are returned unchanged.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage, sparse
from scipy.sparse.linalg import splu

TEXTURE_SIGMA = 2.0  # px: the residual below this scale is the "grain" that is transplanted
CANDIDATES = 96  # texture patch offsets tried
HALO_REACH = 0.6  # equivalent radii: how far beyond its mask a lesion's halo is looked for
HALO_TOL = 0.15  # standard deviations of the tissue beyond (at least HALO_MIN_GREY): a shell closer is flat
HALO_MIN_GREY = 2.0  # grey levels


def _harmonic(channels: list[np.ndarray], region: np.ndarray) -> list[np.ndarray]:
    """Solve the discrete Laplace equation on ``region`` (Dirichlet values from the pixels around it)."""
    h, w = region.shape
    ys, xs = np.nonzero(region)
    n = len(ys)
    index = -np.ones((h, w), np.int64)
    index[ys, xs] = np.arange(n)
    rows, cols, vals = [np.arange(n)], [np.arange(n)], [np.zeros(n)]
    diag = np.zeros(n)
    rhs = [np.zeros(n) for _ in channels]
    for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        ny, nx = ys + dy, xs + dx
        inside = (ny >= 0) & (ny < h) & (nx >= 0) & (nx < w)
        diag[inside] += 1.0
        nyi, nxi, src = ny[inside], nx[inside], np.nonzero(inside)[0]
        nb = index[nyi, nxi]
        unknown = nb >= 0
        rows.append(src[unknown])
        cols.append(nb[unknown])
        vals.append(-np.ones(int(unknown.sum())))
        known = ~unknown
        for r, ch in zip(rhs, channels, strict=True):
            np.add.at(r, src[known], ch[nyi[known], nxi[known]])
    vals[0] = diag
    a = sparse.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))
    lu = splu(a)
    out = []
    for r, ch in zip(rhs, channels, strict=True):
        filled = ch.copy()
        filled[ys, xs] = lu.solve(r)
        out.append(filled)
    return out


def _residual(ch: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """High-pass residual ``ch - smooth(ch)``, the smoothing ignoring pixels outside ``valid``."""
    v = valid.astype(np.float64)
    num = ndimage.gaussian_filter(ch * v, TEXTURE_SIGMA)
    den = ndimage.gaussian_filter(v, TEXTURE_SIGMA)
    smooth = np.divide(num, den, out=ch.copy(), where=den > 1e-6)
    return ch - smooth


def ring_mask(region: np.ndarray, width: int | None = None) -> np.ndarray:
    """The band of pixels around ``region`` used as its surroundings."""
    if width is None:
        eq_radius = float(np.sqrt(region.sum() / np.pi))
        width = int(max(4, round(0.6 * eq_radius)))
    return ndimage.binary_dilation(region, iterations=width) & ~region


def _texture_offset(gray: np.ndarray, region: np.ndarray, ring: np.ndarray, avoid: np.ndarray,
                    rng: np.random.Generator) -> tuple[int, int] | None:
    """An offset (dy, dx) such that ``region`` shifted by it lies on tissue that looks like the ring."""
    h, w = region.shape
    ys, xs = np.nonzero(region)
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    size = max(y1 - y0, x1 - x0)
    ring_mean, ring_std = float(gray[ring].mean()), float(gray[ring].std()) + 1e-6
    best: tuple[float, tuple[int, int]] | None = None
    for _ in range(CANDIDATES):
        dist = rng.uniform(1.2, 4.0) * size
        ang = rng.uniform(0, 2 * np.pi)
        dy, dx = round(dist * np.sin(ang)), round(dist * np.cos(ang))
        if not (y0 + dy >= 0 and y1 + dy <= h and x0 + dx >= 0 and x1 + dx <= w):
            continue
        sy, sx = ys + dy, xs + dx
        if avoid[sy, sx].any():
            continue
        vals = gray[sy, sx]
        cost = abs(float(vals.mean()) - ring_mean) / ring_std + abs(float(vals.std()) / ring_std - 1.0)
        if best is None or cost < best[0]:
            best = (cost, (dy, dx))
    return None if best is None else best[1]


def halo_px(gray: np.ndarray, lesion: np.ndarray, keep: np.ndarray) -> int:
    """How far (px) a rendered lesion shows beyond its annotated ``lesion`` mask, measured on the image ``gray``:
    the mean grey level of 1-pixel shells outside the mask is compared with the tissue farther out (a band beyond
    :data:`HALO_REACH` equivalent radii); the halo ends at the first two consecutive shells that are back within
    :data:`HALO_TOL` standard deviations of it (at least :data:`HALO_MIN_GREY`) or from which the profile has
    levelled off (next shells within half that: a neighbouring structure, not the lesion), at most
    :data:`HALO_REACH` equivalent radii + 3 px. A rim's oedema, an ill-defined margin's tail or a blur round a box
    all show there; a lesion whose shells are flat at once has no halo (0). ``keep``: the pixels that may be
    measured (tissue, no other lesion)."""
    area = int(lesion.sum())
    if area == 0:
        return 0
    eq_r = float(np.sqrt(area / np.pi))
    reach = int(np.ceil(HALO_REACH * eq_r)) + 3
    dt = ndimage.distance_transform_edt(~lesion)
    far = (dt > reach) & (dt <= reach + max(4, round(0.4 * eq_r))) & keep
    if far.sum() < 12:
        return 0
    ref, tol = float(gray[far].mean()), max(HALO_TOL * float(gray[far].std()), HALO_MIN_GREY)
    prof: list[float | None] = []
    for d in range(1, reach + 3):
        shell = (dt > d - 1) & (dt <= d) & keep
        prof.append(float(gray[shell].mean()) if shell.sum() >= 6 else None)

    def flat(i: int) -> bool:  # shell i+1 is back to the tissue, or the profile has levelled off from it on
        p0 = prof[i]
        if p0 is None or abs(p0 - ref) <= tol:
            return True
        nxt = prof[i + 1:i + 3]
        if len(nxt) < 2 or any(v is None for v in nxt):  # the profile's end: no two shells left to level off
            return False
        return abs(nxt[0] - p0) <= tol / 2 and abs(nxt[1] - nxt[0]) <= tol / 2  # type: ignore[operator]

    for i in range(reach):
        if flat(i) and flat(i + 1):
            return i
    return reach


def inpaint(arr: np.ndarray, region: np.ndarray, rng: np.random.Generator,
            avoid: np.ndarray | None = None) -> np.ndarray:
    """Return a copy of uint8 ``arr`` (H, W) or (H, W, 3) with ``region`` (bool) filled from its
    surroundings. ``avoid`` marks pixels (e.g. other lesions) never used as texture or context."""
    if region.shape != arr.shape[:2]:
        raise ValueError(f"region shape {region.shape} does not match image {arr.shape[:2]}")
    if not region.any():
        return arr.copy()
    avoid = region if avoid is None else (avoid | region)
    chans = [arr.astype(np.float64)] if arr.ndim == 2 else [arr[..., c].astype(np.float64) for c in range(3)]
    smooth = _harmonic(chans, region)
    ring = ring_mask(region) & ~avoid
    if not ring.any():
        ring = ~ndimage.binary_dilation(avoid, iterations=1)
    gray = chans[0] if len(chans) == 1 else np.mean(chans, axis=0)
    guard = ndimage.binary_dilation(avoid, iterations=2)
    offset = _texture_offset(gray, region, ring, guard, rng)
    ys, xs = np.nonzero(region)
    out = arr.copy()
    for c, (ch, fill) in enumerate(zip(chans, smooth, strict=True)):
        res = _residual(ch, ~guard)
        target_std = float(res[ring].std())
        if offset is not None:
            noise = res[ys + offset[0], xs + offset[1]]
        else:  # no clean patch of that shape: draw the grain from the ring itself
            noise = rng.choice(res[ring], size=len(ys), replace=True)
        sd = float(noise.std())
        if sd > 1e-9:
            noise = (noise - float(noise.mean())) * (target_std / sd)
        vals = np.clip(np.rint(fill[ys, xs] + noise), 0, 255).astype(np.uint8)
        if arr.ndim == 2:
            out[ys, xs] = vals
        else:
            out[ys, xs, c] = vals
    return out
