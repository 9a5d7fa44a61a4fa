"""Acquisition-like degradations at graded severities (1 mild .. 3 severe).

Every kind works on uint8 grayscale (H, W) or RGB (H, W, 3) arrays, computes in float and clips
back to [0, 255] (never wrapping). Parameters are chosen so that, for a given image, the PSNR
against the clean image falls as the severity rises (checked in ``tests/test_sample_degrade.py``).
"""

from __future__ import annotations

import io
from collections.abc import Callable

import numpy as np
from PIL import Image
from scipy import ndimage

from medr2.registry import Registry

SEVERITIES = (1, 2, 3)

# the artefact label (Case.artefact / s1.artefact vocabulary) of each kind
ARTEFACT_LABELS: dict[str, str] = {
    "noise": "noise",
    "blur": "blur",
    "motion": "motion",
    "low_contrast": "low contrast",
    "compression": "compression",
    "downsample": "low resolution",
    "window": "contrast shift",
}

# the image quality (Case.quality / s1.quality vocabulary) at each degradation severity (0: none)
QUALITY_BY_SEVERITY: dict[int, str] = {0: "good", 1: "usable", 2: "usable", 3: "reject"}

Degrader = Callable[[np.ndarray, int, np.random.Generator], np.ndarray]
DEGRADATIONS: Registry[Degrader] = Registry("degradation")


def register_degradation(kind: str, artefact_label: str | None = None) -> Callable[[Degrader], Degrader]:
    """Decorator: register ``fn(arr, severity, rng) -> arr`` as a degradation kind (V8 and the sample source
    use every registered kind); ``artefact_label`` is its ``s1.artefact`` answer (default: the kind)."""
    def deco(fn: Degrader) -> Degrader:
        DEGRADATIONS.register(kind, fn)
        ARTEFACT_LABELS.setdefault(kind, artefact_label or kind.replace("_", " "))
        return fn

    return deco


_register = register_degradation


def _to_uint8(x: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(x), 0, 255).astype(np.uint8)


def _per_channel(arr: np.ndarray, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    if arr.ndim == 2:
        return fn(arr)
    return np.stack([fn(arr[..., c]) for c in range(arr.shape[2])], axis=-1)


@_register("noise")
def _noise(arr: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    sigma = (6.0, 14.0, 30.0)[severity - 1]
    return _to_uint8(arr.astype(np.float32) + rng.normal(0.0, sigma, arr.shape).astype(np.float32))


@_register("blur")
def _blur(arr: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    sigma = (1.0, 2.0, 4.0)[severity - 1]
    return _per_channel(arr, lambda ch: _to_uint8(ndimage.gaussian_filter(ch.astype(np.float32), sigma)))


@_register("motion")
def _motion(arr: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Directional smear along a random image axis plus a faint ghost (MR-style motion)."""
    length = (5, 11, 21)[severity - 1]
    ghost = (0.10, 0.18, 0.28)[severity - 1]
    axis = int(rng.integers(0, 2))
    shift = max(2, arr.shape[axis] // 10)

    def one(ch: np.ndarray) -> np.ndarray:
        f = ndimage.uniform_filter1d(ch.astype(np.float32), size=length, axis=axis, mode="nearest")
        g = np.roll(f, shift, axis=axis)
        return _to_uint8((1.0 - ghost) * f + ghost * g)

    return _per_channel(arr, one)


@_register("low_contrast")
def _low_contrast(arr: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    factor = (0.6, 0.35, 0.15)[severity - 1]
    a = arr.astype(np.float32)
    mean = float(a.mean())
    return _to_uint8(mean + (a - mean) * factor)


@_register("compression")
def _compression(arr: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    quality = (30, 10, 3)[severity - 1]
    img = Image.fromarray(arr, mode="L" if arr.ndim == 2 else "RGB")
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=quality, subsampling=2 if arr.ndim == 3 else 0)
    buf.seek(0)
    with Image.open(buf) as back:
        return np.asarray(back.convert(img.mode)).copy()


@_register("downsample")
def _downsample(arr: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    factor = (2, 4, 8)[severity - 1]
    h, w = arr.shape[:2]
    img = Image.fromarray(arr, mode="L" if arr.ndim == 2 else "RGB")
    small = img.resize((max(1, w // factor), max(1, h // factor)), Image.Resampling.BOX)
    return np.asarray(small.resize((w, h), Image.Resampling.BILINEAR)).copy()


@_register("window")
def _window(arr: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """A wrong display window: gain around a shifted level, clipped (detail lost at the ends)."""
    gain = (1.3, 1.8, 2.6)[severity - 1]
    sign = 1.0 if rng.random() < 0.5 else -1.0
    offset = sign * (10.0, 25.0, 45.0)[severity - 1]
    a = arr.astype(np.float32)
    mean = float(a.mean())
    return _to_uint8((a - mean) * gain + mean + offset)


def degrade(arr: np.ndarray, kind: str, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Return a degraded uint8 copy of ``arr`` (same shape); ``severity`` in 1..3."""
    if kind not in DEGRADATIONS:
        raise ValueError(f"unknown degradation {kind!r}; known: {', '.join(sorted(DEGRADATIONS))}")
    if severity not in SEVERITIES:
        raise ValueError(f"severity must be one of {SEVERITIES}, got {severity}")
    if arr.dtype != np.uint8 or not (arr.ndim == 2 or (arr.ndim == 3 and arr.shape[2] == 3)):
        raise ValueError(f"expected uint8 (H, W) or (H, W, 3), got {arr.dtype} {arr.shape}")
    out = DEGRADATIONS[kind](arr, severity, rng)
    assert out.shape == arr.shape and out.dtype == np.uint8
    return out


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """Peak signal-to-noise ratio in dB of two uint8 images (inf if identical)."""
    if a.shape != b.shape:
        raise ValueError(f"shape mismatch {a.shape} vs {b.shape}")
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return float("inf") if mse == 0.0 else 10.0 * float(np.log10(255.0**2 / mse))
