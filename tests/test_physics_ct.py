"""V11's CT simulation made cheap (issue 44): the severity-independent part of a kind is computed once per image
(``medr2.imaging.physics.per_image``) and the projection domain is at most ``PROJECTION_MAX`` a side, while what
the degradation means stays: the output is byte-identical whether the per-image cache is hit or not (for every
kind, seed and severity order), the closed-form metal sinogram is the Radon transform of the insert, the
first-order low-dose noise is the reconstruction of the Poisson-limit counts, and a large image's noise keeps the
level it has at its own pixel size."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st
from skimage.transform import iradon, radon

from medr2.imaging import physics
from medr2.imaging.physics import LOWDOSE_N0, MU_PER_PX, PHYSICS, PROJECTION_MAX, SEVERITIES, degrade_physics

sys.path.insert(0, str(Path(__file__).parent))
from perturb_fixtures import _resize, real_backgrounds  # noqa: E402


def _image(seed: int, h: int, w: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w] / max(h, w)
    img = np.where(((yy - 0.5 * h / max(h, w)) / 0.4) ** 2 + ((xx - 0.5 * w / max(h, w)) / 0.35) ** 2 <= 1,
                   rng.uniform(60, 150), 0.0)
    return np.clip(img + rng.normal(0, 8, (h, w)), 0, 255).astype(np.uint8)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(PHYSICS.names())), st.integers(0, 2**32 - 1), st.permutations(SEVERITIES),
       st.integers(40, 120), st.integers(40, 120))
def test_output_and_rng_do_not_depend_on_the_cache(kind: str, seed: int, order: list[int], h: int, w: int) -> None:
    """Every kind, any seed, any order of severities: a render with a cold per-image cache and one that hits it
    give the same bytes and leave the generator in the same state."""
    arr = _image(seed % 1000, h, w)
    for severity in order:
        physics.clear_cache()
        cold_rng = np.random.default_rng(seed)
        cold = degrade_physics(arr, kind, severity, cold_rng)
        for other in order:  # the cache now holds this image's part (where the kind has one)
            degrade_physics(arr, kind, other, np.random.default_rng(seed))
        warm_rng = np.random.default_rng(seed)
        warm = degrade_physics(arr, kind, severity, warm_rng)
        assert np.array_equal(cold, warm), (kind, severity)
        assert cold_rng.bit_generator.state == warm_rng.bit_generator.state


def test_cache_is_bounded_and_keyed_by_pixels_and_seed() -> None:
    physics.clear_cache()
    arr = _image(1, 64, 64)
    for seed in range(physics.CACHE_SIZE + 3):
        degrade_physics(arr, "ct_lowdose", 1, np.random.default_rng(seed))
    assert len(physics._CACHE) == physics.CACHE_SIZE
    physics.clear_cache()
    a = degrade_physics(arr, "ct_lowdose", 3, np.random.default_rng(0))
    b = degrade_physics(arr, "ct_lowdose", 3, np.random.default_rng(1))
    other = arr.copy()
    other[0, 0] ^= 1
    degrade_physics(other, "ct_lowdose", 3, np.random.default_rng(0))
    degrade_physics(arr, "ct_metal", 3, np.random.default_rng(0))
    assert len(physics._CACHE) == 4  # one entry per (kind, pixels, generator state)
    assert not np.array_equal(a, b)


def test_projection_domain_is_bounded() -> None:
    assert physics._grid(512, 512).n == PROJECTION_MAX
    assert (physics._grid(300, 600).hp, physics._grid(300, 600).wp) == (128, 256)
    assert physics._grid(200, 96) == physics._Grid(200, 96, 200, 96)  # a small image keeps its size
    out = degrade_physics(_image(2, 600, 300), "ct_metal", 2, np.random.default_rng(0))
    assert out.shape == (600, 300)


def test_closed_form_metal_path_is_the_radon_transform_of_the_insert() -> None:
    """The chord sinogram of a disc against ``radon`` of the drawn disc (same layout): the same rays, the centre
    of each projection within a fraction of a pixel, the lengths within the disc's pixelation."""
    for h, w, cy, cx, r in ((96, 96, 40.3, 55.7, 4.0), (120, 80, 70.2, 30.1, 6.0), (300, 400, 100.0, 250.0, 7.5)):
        g = physics._grid(h, w)
        yy, xx = np.mgrid[0:h, 0:w]
        disc = (((yy - cy) ** 2 + (xx - cx) ** 2) <= r * r).astype(np.float64)
        ref = radon(physics._project(disc, g), theta=g.theta, circle=False) / g.f
        got = physics._chord(g, cy, cx, r)
        assert got.shape == ref.shape
        s = np.arange(got.shape[0])[:, None]
        centre = (got * s).sum(0) / got.sum(0)
        assert np.abs(centre - (ref * s).sum(0) / ref.sum(0)).max() < 0.3
        assert np.abs(got.sum(0) - ref.sum(0)).max() < 0.05 * ref.sum(0).max()  # the disc's area per angle


def test_first_order_lowdose_noise_is_the_poisson_limit_reconstruction() -> None:
    """At a size that is projected as is, the noise added is (to first order) the FBP of the log of the
    Poisson-limit counts N0·exp(-p) + sqrt(counts)·z minus the clean line integrals, with the same draws."""
    arr = real_backgrounds()["ct"]
    img = arr.astype(np.float64)
    g = physics._grid(*img.shape)
    assert g.f == 1.0
    for severity in SEVERITIES:
        physics.clear_cache()
        seed = 11 + severity
        got = physics.PHYSICS["ct_lowdose"].fn(img, severity, np.random.default_rng(seed)) - img
        p = radon(physics._project(img / 255.0 * MU_PER_PX, g), theta=g.theta, circle=False)
        z = np.random.default_rng(seed).standard_normal(p.shape)
        n0 = LOWDOSE_N0[severity - 1]
        counts = n0 * np.exp(-p)
        err = -np.log(np.maximum(counts + np.sqrt(counts) * z, 1.0) / n0) - p
        exact = np.asarray(iradon(err, theta=g.theta, output_size=g.n, filter_name="ramp", circle=False))
        exact = exact / MU_PER_PX * 255.0
        assert np.corrcoef(got.ravel(), exact.ravel())[0, 1] > 0.99, severity
        assert abs(got.std() / exact.std() - 1) < 0.03, severity


def test_large_image_noise_keeps_its_level_at_its_own_pixel_size() -> None:
    """A 512-px image projected at 256 px gets low-dose noise of the level a full-size FBP gives it (measured
    against that FBP, computed here once): the severities mean what they meant before the projection shrank."""
    arr = _resize(real_backgrounds()["ct"], (512, 512))
    img = arr.astype(np.float64)
    physics.clear_cache()
    got = physics.PHYSICS["ct_lowdose"].fn(img, 1, np.random.default_rng(0)) - img
    theta = np.linspace(0.0, 180.0, 360, endpoint=False)
    p = radon(img / 255.0 * MU_PER_PX, theta=theta, circle=False)
    z = np.random.default_rng(0).standard_normal(p.shape)
    full = np.asarray(iradon(-z * np.exp(p / 2) / np.sqrt(LOWDOSE_N0[0]), theta=theta, output_size=512,
                             filter_name="ramp", circle=False)) / MU_PER_PX * 255.0
    assert abs(got.std() / full.std() - 1) < 0.1


def test_large_images_still_degrade_monotonically() -> None:
    """Above ``PROJECTION_MAX`` (resized for the projection, the error resized back) SSIM still falls and the
    error still grows with severity, for both CT kinds and a non-square image."""
    for arr in (_resize(real_backgrounds()["ct"], (512, 512)), _resize(real_backgrounds()["ct"], (300, 420))):
        for kind in ("ct_lowdose", "ct_metal"):
            for seed in (0, 1):
                out = [degrade_physics(arr, kind, s, np.random.default_rng(seed)) for s in SEVERITIES]
                scores = [physics.ssim(o, arr) for o in out]
                errors = [float(np.mean((o.astype(np.float64) - arr) ** 2)) for o in out]
                assert scores[0] > scores[1] > scores[2] and scores[0] < 1.0, (kind, arr.shape, scores)
                assert errors[0] < errors[1] < errors[2], (kind, arr.shape, errors)
