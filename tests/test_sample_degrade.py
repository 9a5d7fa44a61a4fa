"""Degradations: clipping (never wrapping uint8), shape/dtype, and severities ordered by PSNR."""

from __future__ import annotations

import numpy as np
import pytest

from medr2.imaging.degrade import DEGRADATIONS, SEVERITIES, degrade, psnr


def _real_gray() -> np.ndarray:
    from skimage import data

    return np.asarray(data.camera())[::2, ::2].copy()


def _real_rgb() -> np.ndarray:
    from skimage import data

    return np.asarray(data.immunohistochemistry())[::2, ::2].copy()


def test_noise_clips_instead_of_wrapping() -> None:
    bright = np.full((64, 64), 250, np.uint8)
    dark = np.full((64, 64), 5, np.uint8)
    rng = np.random.default_rng(0)
    b = degrade(bright, "noise", 3, rng)
    d = degrade(dark, "noise", 3, rng)
    # wrapping would turn +10 on 250 into ~4 and -10 on 5 into ~251
    assert b.min() > 120 and (b == 255).mean() > 0.3
    assert d.max() < 135 and (d == 0).mean() > 0.3


@pytest.mark.parametrize("kind", sorted(DEGRADATIONS))
@pytest.mark.parametrize("make", [_real_gray, _real_rgb])
def test_severities_are_ordered_by_psnr(kind: str, make: object) -> None:
    img = make()  # type: ignore[operator]
    values = []
    for sev in SEVERITIES:
        out = degrade(img, kind, sev, np.random.default_rng(7))
        assert out.shape == img.shape and out.dtype == np.uint8
        values.append(psnr(img, out))
    assert values[0] > values[1] > values[2], (kind, values)
    assert values[0] < float("inf")


def test_same_rng_same_bytes_and_bad_arguments() -> None:
    img = _real_gray()
    a = degrade(img, "motion", 2, np.random.default_rng(3))
    b = degrade(img, "motion", 2, np.random.default_rng(3))
    assert a.tobytes() == b.tobytes()
    assert psnr(img, img) == float("inf")
    with pytest.raises(ValueError):
        degrade(img, "nonsense", 1, np.random.default_rng(0))
    with pytest.raises(ValueError):
        degrade(img, "blur", 4, np.random.default_rng(0))
    with pytest.raises(ValueError):
        degrade(img.astype(np.float32), "blur", 1, np.random.default_rng(0))
