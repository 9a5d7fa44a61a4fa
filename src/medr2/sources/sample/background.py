"""Real backgrounds of the sample source: the decoded image plus what is known about it.

A background is loaded at a working resolution whose longest side is about 512 px and cached per
process; families with many views (volume slices, image sets) keep only the last ``VIEW_CACHE``
views, so memory stays bounded (the builder hands out cases grouped by view, see
``SampleSource.locality``). Everything a background carries is real (from
the file or its tags) or honestly derived (marked by ``method`` / ``meta``); lesions are added
later, per case, by :mod:`medr2.sources.sample.lesions`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

from medr2.registry import Registry

VIEW_CACHE = 8  # decoded views kept per background family (each holds images and masks, ~3 MB)
WORK_SIDE = 512  # longest side of the working image (and the maximum output size)
MAX_UPSCALE = 2.5


@dataclass(frozen=True, eq=False)
class StructMask:
    """A structure on the working image. ``method`` says where the mask comes from."""

    name: str
    mask: np.ndarray  # bool (H, W)
    kind: str = "organ"  # organ / region / landmark / instance
    method: str = "atlas"


@dataclass(frozen=True, eq=False)
class RealFinding:
    """A finding that is real (e.g. outlined by a DICOM overlay), not synthetic."""

    label: str
    mask: np.ndarray
    attributes: dict[str, Any]
    method: str


@dataclass(frozen=True, eq=False)
class Background:
    key: str
    file: str  # the real file (absolute path or package resource)
    images: dict[str, np.ndarray]  # display name -> float32 [0, 1] (H, W) or (H, W, 3); first is default
    modality: str
    body_region: str
    source: str
    license: str
    patient_id: str
    plane: str | None = None
    sequence: str | None = None  # for CT the display window name is used instead
    spacing_mm: float | None = None  # of the working image
    spacing_estimated: bool = False
    structures: tuple[StructMask, ...] = ()
    host: np.ndarray | None = None  # bool mask where synthetic lesions may be placed
    host_name: str | None = None  # organ named in the lesion attributes
    lesion_family: str | None = None  # key into lesions.FAMILIES
    laterality: str = "none"  # radiological / hemisphere / fixed / none
    fixed_side: str | None = None  # the real side when laterality == "fixed" or "hemisphere"
    flip_ok: bool = True
    # the image shows a cue that tells a mirror image from the original (heart, liver, a face on a sagittal
    # slice, a side marker); a symmetric view (axial brain, head CT, one shoulder or leg) has none
    lateralising: bool = False
    # every structure the view shows is labelled (hand-made instance masks of a window cutting none); derived and
    # atlas masks are not (an unlabelled structure may still be shown)
    structures_complete: bool = False
    real_findings: tuple[RealFinding, ...] = ()
    diagnosis: str | None = None  # real diagnosis (header / dataset label)
    malignancy: str | None = None
    status: str = "unknown"  # normal / abnormal / unknown (of the real image, before lesions)
    access: str = "open"
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, int]:
        first = next(iter(self.images.values()))
        return first.shape[0], first.shape[1]


@dataclass(frozen=True)
class BackgroundDef:
    """A family of views (one file, or the slices of one volume) that share a patient."""

    key: str
    views: Callable[[], int]  # number of views (cheap; 0 when unavailable)
    load: Callable[[int], Background]  # cached
    weight: float = 1.0
    unavailable_reason: Callable[[], str | None] = lambda: None
    # a prior study may be made for its cases (issue 49): lesion-capable, every finding labelled (a template)
    priors: bool = False


BACKGROUNDS: Registry[BackgroundDef] = Registry("sample background", field="--source")


def register_background(bg: BackgroundDef) -> BackgroundDef:
    """Register a background family of the sample source under its ``key`` (a taken key is refused)."""
    return BACKGROUNDS.register(bg.key, bg)


# ---------------------------------------------------------------- helpers


def window(values: np.ndarray, center: float, width: float, invert: bool = False) -> np.ndarray:
    """Linear display window to float32 [0, 1]."""
    out = np.clip((values.astype(np.float32) - (center - width / 2.0)) / max(width, 1e-6), 0.0, 1.0)
    return 1.0 - out if invert else out


def percentile_window(values: np.ndarray, lo: float = 0.5, hi: float = 99.5, invert: bool = False) -> np.ndarray:
    a, b = np.percentile(values, [lo, hi])
    return window(values, (a + b) / 2.0, max(float(b - a), 1e-6), invert)


def work_scale(h: int, w: int) -> float:
    return min(WORK_SIDE / max(h, w), MAX_UPSCALE)


def resize_float(img: np.ndarray, scale: float) -> np.ndarray:
    """Resize a float image (gray or RGB) by ``scale`` with antialiasing (Pillow)."""
    h, w = img.shape[:2]
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    if size == (w, h):
        return img.astype(np.float32)
    if img.ndim == 2:
        return np.asarray(Image.fromarray(img.astype(np.float32), mode="F").resize(size, Image.Resampling.BILINEAR))
    chans = [np.asarray(Image.fromarray(img[..., c].astype(np.float32), mode="F").resize(
        size, Image.Resampling.BILINEAR)) for c in range(img.shape[2])]
    return np.stack(chans, axis=-1)


def resize_mask(mask: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    h, w = shape
    if mask.shape == (h, w):
        return mask.astype(bool)
    f = Image.fromarray(mask.astype(np.float32), mode="F").resize((w, h), Image.Resampling.BILINEAR)
    return np.asarray(f) >= 0.5


def largest_component(mask: np.ndarray) -> np.ndarray:
    from scipy import ndimage

    lab, n = ndimage.label(mask)
    if n == 0:
        return mask.astype(bool)
    sizes = ndimage.sum(mask, lab, range(1, n + 1))
    return lab == (int(np.argmax(sizes)) + 1)


def erode(mask: np.ndarray, px: int) -> np.ndarray:
    from scipy import ndimage

    if px <= 0:
        return mask
    return ndimage.binary_erosion(mask, iterations=px)


# DICOM modality code -> the name used in Case.modality (and in questions)
MODALITY_NAMES = {"CR": "X-ray", "DX": "X-ray", "MR": "MRI", "CT": "CT", "US": "ultrasound", "NM": "nuclear medicine"}
