"""Physics-true degradations (V11) for CT, MRI and X-ray at graded severities (1 mild .. 3 severe).

Each kind simulates the acquisition where its artefact arises, on the grey image taken as the object:

- ``ct_lowdose``: a lower simulated dose. The image is taken as attenuation, projected (Radon transform,
  ``skimage.transform.radon``), the transmitted photon counts ``N0·exp(-p)`` taken Poisson at a lower ``N0``
  per severity, log-converted, and the projection-domain noise reconstructed by filtered back-projection
  (``iradon``, ramp filter) and added to the image. FBP is linear, so this is exactly the reconstruction of the
  noisy sinogram minus that of the clean one: the noise has CT's streaky, correlated texture, while the image is
  the stored one (not an FBP of it). The log noise is taken to first order, ``-z·exp(p/2)/sqrt(N0)`` (counts >> 1;
  a ray is taken as seen by at least ``MIN_COUNTS`` photons at the lowest dose), so the FBP of the unit noise is
  computed once per image and scaled per severity. Approximation: monoenergetic, parallel beam, no electronic noise.
- ``ct_metal``: a small metal insert (a dense disc placed at a seeded point) whose rays are photon-starved and
  beam-hardened in the sinogram; the error on those rays, reconstructed by FBP, gives the dark and bright streaks.
  The metal path per ray is the disc's chord in closed form (no Radon transform), and the error is linear in the
  severity's strength, so one FBP serves every severity.

CT is projected at most ``PROJECTION_MAX`` (256) pixels a side: a larger image is resized down (bilinear, with
anti-aliasing) for the projection domain, keeping its line integrals, and the reconstructed error is resized back
up (bilinear); the low-dose noise is scaled to the level an FBP gives at the image's own pixel size and angle count
(variance as 1 / (angles x pixel size³)). The severity-independent part of a kind (its draws included) is computed
once per image and held in a small per-process cache (:func:`per_image`): a worker renders one image's
severities one after another, and the output is byte-identical whether the cache is hit or not.
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

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

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


# --------------------------------------------------------------------------- per-image part, cached
CACHE_SIZE = 8  # per-image parts kept per process (a worker renders one image's severities one after another)
_CACHE: OrderedDict[tuple[str, str, str], tuple[tuple[np.ndarray, ...], Mapping[str, Any]]] = OrderedDict()
_CACHE_LOCK = threading.Lock()  # a reader may render from threads (medr2 view)
PartFn = Callable[[np.ndarray, np.random.Generator], tuple[np.ndarray, ...]]


def clear_cache() -> None:
    """Forget every cached per-image part (:func:`per_image`)."""
    with _CACHE_LOCK:
        _CACHE.clear()


def per_image(kind: str, img: np.ndarray, rng: np.random.Generator, part: PartFn) -> tuple[np.ndarray, ...]:
    """``part(img, rng)``: the severity-independent part of ``kind`` on ``img`` (its draws of ``rng`` included),
    from a small per-process cache keyed by (``kind``, the pixels, ``rng``'s state before the draws). On a hit
    ``rng`` is left where ``part`` would have left it, so a kind computes the same operations on the same values
    whether the cache is hit or not (its output is byte-identical either way)."""
    key = (kind, hashlib.blake2b(repr(img.shape).encode() + img.tobytes(), digest_size=16).hexdigest(),
           json.dumps(rng.bit_generator.state, sort_keys=True))
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
    if hit is not None:
        rng.bit_generator.state = hit[1]
        return hit[0]
    arrays = part(img, rng)
    for a in arrays:
        a.setflags(write=False)
    with _CACHE_LOCK:
        _CACHE[key] = (arrays, rng.bit_generator.state)
        while len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    return arrays


# --------------------------------------------------------------------------- CT (projection domain)
PROJECTION_MAX = 256  # the largest side of the projection domain (a larger image is projected resized down)


@dataclass(frozen=True)
class _Grid:
    """The projection domain of an ``h`` x ``w`` image: the image resized to ``hp`` x ``wp`` (at most
    :data:`PROJECTION_MAX` a side; a smaller image keeps its size), zero-padded to an ``n`` square, ``f`` projection
    pixels per image pixel."""

    h: int
    w: int
    hp: int
    wp: int

    @property
    def n(self) -> int:
        return max(self.hp, self.wp)

    @property
    def f(self) -> float:
        return self.n / max(self.h, self.w)

    @property
    def theta(self) -> np.ndarray:
        return np.linspace(0.0, 180.0, max(90, min(360, self.n)), endpoint=False)

    @property
    def offset(self) -> tuple[int, int]:
        """Where the resized image sits in the ``n`` square (row, column)."""
        return (self.n - self.hp) // 2, (self.n - self.wp) // 2


def _grid(h: int, w: int) -> _Grid:
    f = min(1.0, PROJECTION_MAX / max(h, w))
    return _Grid(h, w, max(1, round(h * f)), max(1, round(w * f)))


def _project(img: np.ndarray, g: _Grid) -> np.ndarray:
    """``img`` resized to the projection domain and zero-padded to its square."""
    from skimage.transform import resize

    small = img if (g.hp, g.wp) == (g.h, g.w) else resize(img, (g.hp, g.wp), order=1, anti_aliasing=True,
                                                           preserve_range=True)
    out = np.zeros((g.n, g.n), dtype=np.float64)
    r0, c0 = g.offset
    out[r0:r0 + g.hp, c0:c0 + g.wp] = small
    return out


def _fbp(sino: np.ndarray, g: _Grid) -> np.ndarray:
    """The filtered back-projection (ramp filter) of ``sino``, cropped to the image and resized back up to it
    (bilinear)."""
    from skimage.transform import iradon, resize

    sq = np.asarray(iradon(sino, theta=g.theta, output_size=g.n, filter_name="ramp", circle=False))
    r0, c0 = g.offset
    small = sq[r0:r0 + g.hp, c0:c0 + g.wp]
    return small if (g.hp, g.wp) == (g.h, g.w) else np.asarray(
        resize(small, (g.h, g.w), order=1, anti_aliasing=False, preserve_range=True))


def _chord(g: _Grid, cy: float, cx: float, r: float) -> np.ndarray:
    """The sinogram (``skimage.transform.radon``'s layout, ``circle=False``) of a disc of radius ``r`` centred at
    (``cy``, ``cx``) image pixels, in closed form: the chord 2·sqrt(r² - (s - s0(θ))²) in image pixels, s0 the
    centre's projection."""
    pad = int(np.ceil(np.sqrt(2) * g.n - g.n))
    c = (g.n + pad) // 2  # radon's rotation centre in the padded square
    before = c - g.n // 2
    r0, c0 = g.offset
    x = (cx + 0.5) * g.wp / g.w - 0.5 + c0 + before - c  # the centre in the padded square, about c
    y = (cy + 0.5) * g.hp / g.h - 0.5 + r0 + before - c
    t = np.deg2rad(g.theta)
    s0 = c + np.cos(t) * x - np.sin(t) * y
    d = (np.arange(g.n + pad, dtype=np.float64)[:, None] - s0[None, :]) / g.f
    return 2.0 * np.sqrt(np.maximum(r * r - d * d, 0.0))


MU_PER_PX = 0.02  # attenuation of a white pixel per pixel of path (a 256-px head: line integrals of a few units)
LOWDOSE_N0 = (1.0e6, 2.5e5, 6.0e4)  # photons per ray per severity (the clean image: noise-free)
MIN_COUNTS = 100.0  # a ray is taken as seen by at least this many photons at the lowest dose (the noise's first order)


def _lowdose_unit(img: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """The low-dose noise at one photon per ray, in grey levels: the FBP of the projection-domain noise
    -z·exp(p/2) (to first order, the log of Poisson counts N0·exp(-p) is off by -z/sqrt(counts)), which a dose of
    N0 photons per ray scales by 1/sqrt(N0)."""
    from skimage.transform import radon

    g = _grid(*img.shape)
    mu = MU_PER_PX / g.f  # per projection pixel: the line integrals do not depend on the projection size
    p = radon(_project(img / 255.0 * mu, g), theta=g.theta, circle=False)
    z = rng.standard_normal(p.shape)  # one draw per ray, scaled per severity (same pattern, stronger)
    p_max = float(np.log(min(LOWDOSE_N0) / MIN_COUNTS))
    noise = _fbp(-z * np.exp(np.minimum(p, p_max) / 2.0), g) / mu * 255.0
    # an FBP's noise variance at a fixed dose per ray goes as 1 / (angles x pixel size³): scaled to the level it
    # has at the image's own pixel size and angle count
    full = _grid(max(img.shape), max(img.shape))
    return (noise * np.sqrt(len(g.theta) / (len(full.theta) * g.f**3)),)


@register_physics("ct_lowdose", "CT")
def _ct_lowdose(img: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    (unit,) = per_image("ct_lowdose", img, rng, _lowdose_unit)
    return img + unit / np.sqrt(LOWDOSE_N0[severity - 1])


def metal_radius(h: int, w: int) -> float:
    """The metal insert's radius on an ``h`` x ``w`` image (pixels)."""
    return max(2.0, 0.025 * min(h, w))


def metal_site(img: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """Where the metal insert's centre goes: a pixel drawn from the body's periphery
    (:func:`medr2.imaging.sites.periphery` of the image's tissue, the insert lying inside the body at its edge, as
    a clip, a dental filling or a prosthesis at the body wall does; issue 40: a disc at the centre of the brain is
    metal no patient carries); on an image without such a band (no tissue), the tissue's deepest pixel."""
    from medr2.imaging.sites import depth, periphery, tissue_mask

    tissue = tissue_mask(np.clip(img, 0, 255))
    band = periphery(tissue, metal_radius(*img.shape))
    ys, xs = np.nonzero(band)
    if len(ys) == 0:
        cy, cx = np.unravel_index(int(np.argmax(depth(tissue))), img.shape)
        return float(cy), float(cx)
    i = int(rng.integers(len(ys)))
    return float(ys[i]), float(xs[i])


def _metal_unit(img: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """The insert at the body's periphery (:func:`metal_site`); :func:`_metal_part`."""
    return _metal_part(img, rng, metal_site(img, rng))


def _metal_unit_v1(img: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """The insert of benches built before issue 40 (physics spec version 1, their pinned renders): anywhere in the
    image's central 40 %, whatever lies there."""
    h, w = img.shape
    return _metal_part(img, rng, (rng.uniform(0.3, 0.7) * h, rng.uniform(0.3, 0.7) * w))


def _metal_part(img: np.ndarray, rng: np.random.Generator, centre: tuple[float, float]) -> tuple[np.ndarray, ...]:
    """(the metal streaks scaled to their 99th percentile outside the insert, the insert's mask): beam hardening
    (a deficit growing with the square of the metal path) and photon starvation (noise) on the rays through the
    insert centred at ``centre`` (row, column), reconstructed by FBP; both are linear in the severity's strength, so
    one FBP serves every severity."""
    h, w = img.shape
    cy, cx = centre
    r = metal_radius(h, w)
    yy, xx = np.mgrid[0:h, 0:w]
    disc = ((yy - cy) ** 2 + (xx - cx) ** 2) <= r * r
    g = _grid(h, w)
    m = _chord(g, cy, cx, r)  # path length through metal per ray (image pixels)
    err = -0.02 * m**2 + 0.5 * (m > 0) * rng.standard_normal(m.shape)
    streaks = _fbp(err, g)
    scale = max(float(np.percentile(np.abs(streaks[~disc]), 99)), 1e-9)  # the streaks, not the insert itself
    return streaks / scale, disc


@register_physics("ct_metal", "CT")
def _ct_metal(img: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    return _metal(img, severity, per_image("ct_metal", img, rng, _metal_unit))


def _ct_metal_v1(img: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    return _metal(img, severity, per_image("ct_metal@1", img, rng, _metal_unit_v1))


def _metal(img: np.ndarray, severity: int, part: tuple[np.ndarray, ...]) -> np.ndarray:
    unit, disc = part
    out = img + unit * (60.0 * (0.15, 0.35, 0.7)[severity - 1])
    out[disc] = 255.0
    return out


# the physics spec's version (RenderSpec params "v"; a spec without one is version 1): a kind whose rendering
# changed keeps its earlier function here, so that a bench built before renders its deferred images to their pinned
# bytes (version 2, issue 40: the metal insert at the body's periphery)
PHYSICS_VERSION = 2
EARLIER: dict[tuple[str, int], PhysicsFn] = {("ct_metal", 1): _ct_metal_v1}


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
def degrade_physics(arr: np.ndarray, kind: str, severity: int, rng: np.random.Generator, *,
                    version: int = PHYSICS_VERSION) -> np.ndarray:
    """A degraded uint8 copy of ``arr`` (L or RGB; an RGB image is degraded as its grey and returned grey in RGB);
    ``version``: the physics spec's (:data:`EARLIER`: a kind as an earlier version drew it)."""
    if kind not in PHYSICS:
        raise ValueError(f"unknown physics degradation {kind!r}; known: {', '.join(PHYSICS.names())}")
    if severity not in SEVERITIES:
        raise ValueError(f"severity must be one of {SEVERITIES}, got {severity}")
    if arr.dtype != np.uint8 or not (arr.ndim == 2 or (arr.ndim == 3 and arr.shape[2] == 3)):
        raise ValueError(f"expected uint8 (H, W) or (H, W, 3), got {arr.dtype} {arr.shape}")
    grey = arr.astype(np.float64) if arr.ndim == 2 else arr.astype(np.float64).mean(axis=2)
    fn = next((EARLIER[(kind, v)] for v in range(version, PHYSICS_VERSION) if (kind, v) in EARLIER), PHYSICS[kind].fn)
    out = np.clip(np.rint(fn(grey, severity, rng)), 0, 255).astype(np.uint8)
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
# below it (of [0, 1]: the median of a lesion's core against that of the tissue round it, as drawn), a lesion is
# drawn below readable contrast (issue 40: a dark sarcoma in dark T1 muscle); a source declares it per case
# (``meta["lesion_contrast"]``)
MIN_LESION_CONTRAST = 0.1
SSIM_DIGITS = 4  # SSIM is recorded rounded (same bytes across BLAS builds)


def evidence_ssim(degraded: np.ndarray, reference: np.ndarray,
                  boxes: list[tuple[float, float, float, float]]) -> tuple[float, float]:
    """(whole-image SSIM, the lowest SSIM within ``boxes``; the whole image's where there are none) of a degraded
    image to the image it was made from, rounded: the one measure of whether lesion evidence survives a degradation
    (the variants V8/V11 and a source's own degradation alike)."""
    whole = round(ssim(degraded, reference), SSIM_DIGITS)
    return whole, min((round(ssim(degraded, reference, b), SSIM_DIGITS) for b in boxes), default=whole)
