"""Fluorescence nuclei with real instance masks, from the ``stardist`` wheel (read by path, never imported).

``stardist/data/images/img2d.tif`` is a 512x512 fluorescence image of the 2018 Data Science Bowl
(Caicedo et al. 2019, BBBC038, CC0) and ``mask2d.tif`` its hand-made instance labels (125 nuclei).
Each view is a window of the image that holds 0 to 5 whole nuclei and cuts none, upscaled to a
working size: the nuclei are real ``instance`` structures, so "how many nuclei" has an exact answer.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from medr2.errors import BadInput
from medr2.sources.sample.background import (
    VIEW_CACHE,
    Background,
    BackgroundDef,
    StructMask,
    register_background,
    resize_float,
    resize_mask,
)
from medr2.sources.sample.bg_labelled import package_dir

STARDIST = ("stardist", "stardist")
WINDOWS = (64, 80, 96, 112, 128)  # window sides in source pixels
STEP = 16
MAX_COUNT = 5
PER_COUNT = 8  # windows kept per nucleus count (0..5), spread over the image
OUT_SIDE = 320  # working size of a view (longest side)


def _files() -> tuple[Path, Path] | None:
    root = package_dir(*STARDIST)
    if root is None:
        return None
    img, mask = root / "data/images/img2d.tif", root / "data/images/mask2d.tif"
    return (img, mask) if img.is_file() and mask.is_file() else None


@functools.cache
def _data() -> tuple[np.ndarray, np.ndarray]:
    files = _files()
    if files is None:
        raise BadInput("the stardist wheel (pip install --no-deps stardist==0.9.2) is not installed",
                       file="stardist/data/images/img2d.tif", field="background")
    try:
        import tifffile

        img = np.asarray(tifffile.imread(files[0]), dtype=np.float32)
        mask = np.asarray(tifffile.imread(files[1]), dtype=np.int32)
    except Exception as e:  # a truncated or unreadable TIFF
        raise BadInput(f"cannot read TIFF: {e}", file=str(files[0]), field="background") from e
    if img.shape != mask.shape or img.ndim != 2:
        raise BadInput(f"image {img.shape} and mask {mask.shape} differ", file=str(files[1]), field="mask")
    return img, mask


@functools.cache
def _windows() -> tuple[tuple[int, int, int, int, int], ...]:
    """Windows (x0, y0, x1, y1, count) that cut no nucleus, PER_COUNT per count, deterministic."""
    _, mask = _data()
    h, w = mask.shape
    ids = np.unique(mask[mask > 0])
    boxes = {}
    for i in ids:
        ys, xs = np.nonzero(mask == i)
        boxes[int(i)] = (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)
    found: dict[int, list[tuple[int, int, int, int, int]]] = {n: [] for n in range(MAX_COUNT + 1)}
    for side in WINDOWS:
        for y0 in range(0, h - side + 1, STEP):
            for x0 in range(0, w - side + 1, STEP):
                x1, y1 = x0 + side, y0 + side
                inside = np.unique(mask[y0:y1, x0:x1])
                inside = inside[inside > 0]
                cut = any(not (boxes[int(i)][0] >= x0 and boxes[int(i)][1] >= y0 and boxes[int(i)][2] <= x1
                               and boxes[int(i)][3] <= y1) for i in inside)
                n = len(inside)
                if not cut and n <= MAX_COUNT:
                    found[n].append((x0, y0, x1, y1, n))
    out: list[tuple[int, int, int, int, int]] = []
    for n in range(MAX_COUNT + 1):
        cands = found[n]
        if cands:  # evenly spaced picks over the scan order: spread over the image, no RNG needed
            idx = np.linspace(0, len(cands) - 1, min(PER_COUNT, len(cands))).round().astype(int)
            out.extend(cands[i] for i in sorted(set(idx.tolist())))
    return tuple(out)


def _n_views() -> int:
    if _files() is None:
        return 0
    try:
        return len(_windows())
    except BadInput:
        return 0


@functools.lru_cache(maxsize=VIEW_CACHE)
def _view(view: int) -> Background:
    img, mask = _data()
    x0, y0, x1, y1, n = _windows()[view]
    crop = img[y0:y1, x0:x1]
    lo, hi = np.percentile(img, [0.5, 99.8])
    disp = np.clip((crop - lo) / max(float(hi - lo), 1e-6), 0.0, 1.0)
    scale = OUT_SIDE / max(crop.shape)
    work = resize_float(disp, scale)
    labels = mask[y0:y1, x0:x1]
    structs = tuple(
        StructMask("nucleus", resize_mask(labels == i, work.shape[:2]), "instance", "hand-made instance label (real)")
        for i in sorted(int(v) for v in np.unique(labels) if v > 0)
    )
    files = _files()
    assert files is not None
    return Background(
        key="nuclei", file=str(files[0]), images={"default": work}, modality="fluorescence microscopy",
        body_region="cell nuclei", sequence="nuclear stain", structures=structs, source="sample/stardist",
        license="CC0-1.0 (2018 Data Science Bowl, BBBC038; via the stardist wheel, BSD-3-Clause)",
        patient_id="dsb2018-img2d", flip_ok=True, status="unknown", structures_complete=True,
        meta={"window_xyxy": [x0, y0, x1, y1], "nuclei": n, "note": "window cuts no nucleus"},
    )


def _reason() -> str | None:
    return None if _files() is not None else "stardist wheel not installed (pip install --no-deps stardist==0.9.2)"


register_background(BackgroundDef("nuclei", _n_views, _view, 1.0, _reason))
