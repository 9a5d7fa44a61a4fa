"""Physics-true degradations (V11) for CT, MRI and X-ray at graded severities (1 mild .. 3 severe).

Each kind simulates the acquisition where its artefact arises, on the grey image taken as the object:

- ``ct_lowdose``: a lower simulated dose. The image is taken as attenuation, projected (Radon transform,
  ``skimage.transform.radon``), the transmitted photon counts ``N0·exp(-p)`` drawn Poisson at a lower ``N0``
  per severity, log-converted, and the projection-domain noise reconstructed by filtered back-projection
  (``iradon``, ramp filter) and added to the image. FBP is linear, so this is exactly the reconstruction of the
  noisy sinogram minus that of the clean one: the noise has CT's streaky, correlated texture, while the image is
  the stored one (not an FBP of it). Approximation: monoenergetic, parallel beam, no electronic noise.
- ``ct_metal``: a small metal insert (a dense disc placed at a seeded point) whose rays are photon-starved and
  beam-hardened in the sinogram; the error on those rays, reconstructed by FBP, gives the dark and bright streaks.
- ``mr_ghost``: motion between phase-encoding lines: seeded rows of k-space get a phase error (a rigid shift of
  the object during those lines), which ghosts along the phase-encoding direction.
- ``mr_gibbs``: k-space truncated to a central fraction (sharp window): ringing at edges.
- ``mr_bias``: a smooth multiplicative bias field (receive-coil inhomogeneity).
- ``mr_undersample``: phase-encoding lines left out at random (a fully sampled centre kept), zero-filled: aliasing.
- ``xray_exposure``: under-exposure, quantum noise: Poisson counts at a lower exposure through the object.
- ``xray_grid``: a stationary anti-scatter grid's line pattern (fine stripes).

Every kind is a pure function of ``(arr, severity, rng)``; the draws of ``rng`` do not depend on the severity
(the same metal position, the same moved lines), so for one seed a higher severity is the same artefact, stronger.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from medr2.registry import Registry

SEVERITIES = (1, 2, 3)
PhysicsFn = Callable[[np.ndarray, int, np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class PhysicsKind:
    """A degradation kind: the modalities (``Case.modality``) it is physical for and its function on a float
    grey image in [0, 255]."""

    name: str
    modalities: frozenset[str]
    fn: PhysicsFn


PHYSICS: Registry[PhysicsKind] = Registry("physics degradation")
# the artefact a reader names for each kind (what a report of the degraded image says limits it)
ARTEFACT_LABELS: dict[str, str] = {
    "ct_lowdose": "low-dose noise", "ct_metal": "metal streak", "mr_ghost": "ghosting", "mr_gibbs": "Gibbs ringing",
    "mr_bias": "bias field", "mr_undersample": "undersampling", "xray_exposure": "under-exposure",
    "xray_grid": "grid line",
}


def register_physics(name: str, *modalities: str, artefact_label: str | None = None
                     ) -> Callable[[PhysicsFn], PhysicsFn]:
    """Decorator: register a physics degradation for ``modalities``; ``artefact_label``: what a report of the
    degraded image names it (default: the kind)."""
    def deco(fn: PhysicsFn) -> PhysicsFn:
        PHYSICS.register(name, PhysicsKind(name, frozenset(modalities), fn))
        ARTEFACT_LABELS.setdefault(name, artefact_label or name.replace("_", " "))
        return fn

    return deco


def kinds_for(modality: str | None) -> list[str]:
    """The kinds that are physical for ``modality`` (registration order)."""
    return [k for k in PHYSICS.names() if modality in PHYSICS[k].modalities]


# --------------------------------------------------------------------------- CT (projection domain)
def _angles(n: int) -> np.ndarray:
    return np.linspace(0.0, 180.0, max(90, min(360, n)), endpoint=False)


def _fbp(sino: np.ndarray, theta: np.ndarray, size: int) -> np.ndarray:
    from skimage.transform import iradon

    return np.asarray(iradon(sino, theta=theta, output_size=size, filter_name="ramp", circle=False))


def _square(img: np.ndarray) -> tuple[np.ndarray, int]:
    """``img`` zero-padded to a square (the Radon transform's domain) and its side."""
    h, w = img.shape
    n = max(h, w)
    out = np.zeros((n, n), dtype=np.float64)
    out[(n - h) // 2:(n - h) // 2 + h, (n - w) // 2:(n - w) // 2 + w] = img
    return out, n


def _crop(sq: np.ndarray, h: int, w: int) -> np.ndarray:
    n = sq.shape[0]
    return sq[(n - h) // 2:(n - h) // 2 + h, (n - w) // 2:(n - w) // 2 + w]


MU_PER_PX = 0.02  # attenuation of a white pixel per pixel of path (a 256-px head: line integrals of a few units)


@register_physics("ct_lowdose", "CT")
def _ct_lowdose(img: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    from skimage.transform import radon

    n0 = (1.0e6, 2.5e5, 6.0e4)[severity - 1]  # photons per ray (the clean image: noise-free)
    h, w = img.shape
    sq, n = _square(img / 255.0 * MU_PER_PX)
    theta = _angles(n)
    p = radon(sq, theta=theta, circle=False)
    z = rng.standard_normal(p.shape)  # one draw per ray, scaled per severity (same pattern, stronger)
    counts = n0 * np.exp(-p)
    noisy = np.maximum(counts + np.sqrt(counts) * z, 1.0)  # Poisson by its normal limit (counts >> 1)
    err = -np.log(noisy / n0) - p
    return img + _crop(_fbp(err, theta, n), h, w) / MU_PER_PX * 255.0


@register_physics("ct_metal", "CT")
def _ct_metal(img: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    from skimage.transform import radon

    h, w = img.shape
    cy, cx = rng.uniform(0.3, 0.7) * h, rng.uniform(0.3, 0.7) * w
    r = max(2.0, 0.025 * min(h, w))
    yy, xx = np.mgrid[0:h, 0:w]
    disc = ((yy - cy) ** 2 + (xx - cx) ** 2) <= r * r
    sq, n = _square(disc.astype(np.float64))
    theta = _angles(n)
    m = radon(sq, theta=theta, circle=False)  # path length through metal per ray
    strength = (0.15, 0.35, 0.7)[severity - 1]
    # beam hardening (a deficit growing with the square of the metal path) and photon starvation (noise)
    err = -strength * 0.02 * m**2 + strength * 0.5 * (m > 0) * rng.standard_normal(m.shape)
    streaks = _crop(_fbp(err, theta, n), h, w)
    scale = max(float(np.percentile(np.abs(streaks[~disc]), 99)), 1e-9)  # the streaks, not the insert itself
    out = img + streaks / scale * 60.0 * strength
    out[disc] = 255.0
    return out


# --------------------------------------------------------------------------- MRI (k-space)
def _kspace(img: np.ndarray) -> np.ndarray:
    return np.fft.fftshift(np.fft.fft2(img))


def _image(k: np.ndarray) -> np.ndarray:
    return np.abs(np.fft.ifft2(np.fft.ifftshift(k)))


@register_physics("mr_ghost", "MRI")
def _mr_ghost(img: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    h, w = img.shape
    k = _kspace(img)
    frac = (0.15, 0.3, 0.5)[severity - 1]
    order = rng.permutation(h)  # which phase-encoding rows move first; the same for every severity
    moved = order[: int(frac * h)]
    shift = rng.uniform(0.5, 1.0) * 0.02 * h * (1 + severity)  # pixels moved along the phase-encoding axis
    ky = (np.arange(h) - h // 2)[moved]
    k[moved, :] *= np.exp(-2j * np.pi * ky * shift / h)[:, None]
    return _image(k)


@register_physics("mr_gibbs", "MRI")
def _mr_gibbs(img: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    h, w = img.shape
    keep = (0.45, 0.25, 0.12)[severity - 1]
    k = _kspace(img)
    mask = np.zeros((h, w), bool)
    kh, kw = max(2, int(keep * h / 2)), max(2, int(keep * w / 2))
    mask[h // 2 - kh:h // 2 + kh, w // 2 - kw:w // 2 + kw] = True
    return _image(k * mask)


@register_physics("mr_bias", "MRI")
def _mr_bias(img: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    h, w = img.shape
    coarse = rng.standard_normal((4, 4))
    field = ndimage.zoom(coarse, (h / 4, w / 4), order=3)[:h, :w]
    field = (field - field.mean()) / max(float(field.std()), 1e-9)
    amp = (0.15, 0.3, 0.5)[severity - 1]
    return img * np.exp(amp * field)


@register_physics("mr_undersample", "MRI")
def _mr_undersample(img: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Phase-encoding lines left out at random (a fully sampled centre kept), zero-filled with density compensation
    (each kept outer line weighted by 1 / the fraction kept, as a reconstruction of randomly undersampled k-space
    does): incoherent aliasing that grows as fewer lines are kept. The lines kept at a higher severity are a subset
    of those kept at a lower one (one seeded order). Without the compensation the image only lost energy, and SSIM
    rose with severity on 41 of 240 phantom draws (a smoother, darker image); with it, on none."""
    h, w = img.shape
    keep = (0.6, 0.4, 0.25)[severity - 1]
    k = _kspace(img)
    c = max(1, int(0.04 * h))
    centre = np.zeros(h, bool)
    centre[h // 2 - c:h // 2 + c] = True
    outer = np.flatnonzero(~centre)[rng.permutation(int((~centre).sum()))]
    weight = centre.astype(np.float64)
    weight[outer[: int(keep * len(outer))]] = 1.0 / keep
    return _image(k * weight[:, None])


# --------------------------------------------------------------------------- X-ray
@register_physics("xray_exposure", "X-ray")
def _xray_exposure(img: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    n0 = (3.0e3, 8.0e2, 2.0e2)[severity - 1]  # photons per pixel without the object
    a = 3.0 * img / 255.0  # bright = attenuating (a radiograph shows attenuation)
    counts = n0 * np.exp(-a)
    noisy = np.maximum(counts + np.sqrt(counts) * rng.standard_normal(img.shape), 0.5)
    return -np.log(noisy / n0) / 3.0 * 255.0


@register_physics("xray_grid", "X-ray")
def _xray_grid(img: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    h, w = img.shape
    period = rng.uniform(3.0, 5.0)
    amp = (4.0, 9.0, 18.0)[severity - 1]
    stripes = np.sin(2 * np.pi * np.arange(w) / period)[None, :]
    return img + amp * stripes


# --------------------------------------------------------------------------- entry points
def degrade_physics(arr: np.ndarray, kind: str, severity: int, rng: np.random.Generator) -> np.ndarray:
    """A degraded uint8 copy of ``arr`` (L or RGB; an RGB image is degraded as its grey and returned grey in RGB)."""
    if kind not in PHYSICS:
        raise ValueError(f"unknown physics degradation {kind!r}; known: {', '.join(PHYSICS.names())}")
    if severity not in SEVERITIES:
        raise ValueError(f"severity must be one of {SEVERITIES}, got {severity}")
    if arr.dtype != np.uint8 or not (arr.ndim == 2 or (arr.ndim == 3 and arr.shape[2] == 3)):
        raise ValueError(f"expected uint8 (H, W) or (H, W, 3), got {arr.dtype} {arr.shape}")
    grey = arr.astype(np.float64) if arr.ndim == 2 else arr.astype(np.float64).mean(axis=2)
    out = np.clip(np.rint(PHYSICS[kind].fn(grey, severity, rng)), 0, 255).astype(np.uint8)
    return out if arr.ndim == 2 else np.repeat(out[..., None], 3, axis=2)


def ssim(a: np.ndarray, b: np.ndarray, box: tuple[float, float, float, float] | None = None) -> float:
    """SSIM (``skimage.metrics.structural_similarity``, data range 255) of two uint8 images of one shape, as grey;
    within ``box`` (x1, y1, x2, y2 pixels) where given (at least 7 px a side, else the whole image)."""
    from skimage.metrics import structural_similarity

    ga = a.astype(np.float64) if a.ndim == 2 else a.astype(np.float64).mean(axis=2)
    gb = b.astype(np.float64) if b.ndim == 2 else b.astype(np.float64).mean(axis=2)
    if box is not None:
        x1, y1, x2, y2 = (int(round(v)) for v in box)
        x1, y1 = max(0, x1), max(0, y1)
        if x2 - x1 >= 7 and y2 - y1 >= 7:
            ga, gb = ga[y1:y2, x1:x2], gb[y1:y2, x1:x2]
    return float(structural_similarity(ga, gb, data_range=255.0))


MIN_EVIDENCE_SSIM = 0.5  # below it, the lesion evidence of a degraded image is taken as lost
SSIM_DIGITS = 4  # SSIM is recorded rounded (same bytes across BLAS builds)


def evidence_ssim(degraded: np.ndarray, reference: np.ndarray,
                  boxes: list[tuple[float, float, float, float]]) -> tuple[float, float]:
    """(whole-image SSIM, the lowest SSIM within ``boxes``; the whole image's where there are none) of a degraded
    image to the image it was made from, rounded: the one measure of whether lesion evidence survives a degradation
    (the variants V8/V11 and a source's own degradation alike)."""
    whole = round(ssim(degraded, reference), SSIM_DIGITS)
    return whole, min((round(ssim(degraded, reference, b), SSIM_DIGITS) for b in boxes), default=whole)
