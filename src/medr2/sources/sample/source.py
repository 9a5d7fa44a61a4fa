"""The ``sample`` source: real bundled images, synthetic lesions, graded degradations, flips."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from scipy import ndimage

from medr2.errors import BadInput
from medr2.images import ImageRef, ImageStore
from medr2.imaging.degrade import ARTEFACT_LABELS, QUALITY_BY_SEVERITY, degrade
from medr2.imaging.physics import evidence_ssim
from medr2.records import Case, Companion, Finding, Structure
from medr2.sources.sample import (  # noqa: F401  (register backgrounds)
    bg_brain,
    bg_dicom,
    bg_labelled,
    bg_nuclei,
    bg_photo,
)
from medr2.sources.sample.background import BACKGROUNDS, VIEW_CACHE, Background, StructMask
from medr2.sources.sample.lesions import (
    MIN_CONTRAST,
    LesionClass,
    candidate_centres,
    cavity,
    changed_by,
    classes_for,
    intensity_word,
    lesion_contrast,
    placeable,
    placed_where_it_may,
    render_one,
    rendering,
    shown_texture,
    tissue_shown,
    told_apart,
)
from medr2.sources.sample.report import make_report
from medr2.vocab import anatomical_location, conflicts, mimics as known_mimics, not_a_structure
from medr2.vocab.appearance import margin_key, nearest_colour, shape_key
from medr2.vocab.differential import compatible_mimics, malignancy_decidable

DEFAULT_N = 200
CASE_ARTEFACTS = ("noise", "blur", "motion", "low_contrast", "compression")
P_NORMAL = 0.25  # share of lesion-capable cases left without a lesion
P_DEGRADED = 0.4
P_FLIP = 0.15
P_PRIOR = 0.5  # share of the cases of a prior-capable background given a prior study (issue 49)
# a prior of a case with a lesion: one of its class's courses (LesionClass.courses) but "resolved"; of a case
# without one: "resolved" where a class of the family resolves, else an unchanged normal study
GROWN_SCALE = 0.6  # the prior's lesion size / the current's, for "grown"
PRIOR_INTERVAL_DAYS = (30, 730)  # the synthetic interval between prior and current study
PRIOR_SUFFIX = "-prior"
MIN_STRUCT_PX = 40
# the location of a lesion in no named structure, by host; None: none is given (a brain lesion outside every
# labelled region may lie in the brainstem or the cerebellum as well as a cerebral hemisphere)
HOST_LOCATION_WORDS: dict[str, str | None] = {"brain": None}


@dataclass(frozen=True)
class SampleSpec:
    case_id: str
    index: int
    seed: int
    background: str
    view: int
    # issue 49: a current case's prior (its case id and the days between) / a prior's own seed (its rng)
    prior_id: str | None = None
    prior_interval: int | None = None
    prior_seed: int | None = None


def case_seed(seed: int, index: int) -> int:
    """Per-case seed from a stable hash (independent of process and iteration order)."""
    return int.from_bytes(hashlib.sha256(f"medr2-sample:{seed}:{index}".encode()).digest()[:8], "little")


def available_backgrounds() -> dict[str, int]:
    """Background key -> number of views, for the backgrounds installed here (cheap)."""
    return {k: d.views() for k, d in sorted(BACKGROUNDS.items()) if d.views() > 0}


def unavailable_backgrounds() -> dict[str, str]:
    """Background key -> why it is skipped (e.g. an optional package is not installed)."""
    out = {}
    for k, d in sorted(BACKGROUNDS.items()):
        if d.views() == 0:
            out[k] = d.unavailable_reason() or "not available"
    return out


class SampleSource:
    name = "sample"

    def __init__(self, arg: str | None = None) -> None:
        if arg:
            keys = [k.strip() for k in arg.split(",") if k.strip()]
            unknown = [k for k in keys if k not in BACKGROUNDS]
            if unknown:
                raise BadInput(f"unknown sample backgrounds {unknown}; known: {', '.join(sorted(BACKGROUNDS))}",
                               field="--source")
            self.only: tuple[str, ...] | None = tuple(keys)
        else:
            self.only = None

    def unavailable(self) -> dict[str, str]:
        return unavailable_backgrounds()

    def plan(self, seed: int, n: int | None) -> list[SampleSpec]:
        n = DEFAULT_N if n is None else n
        avail = available_backgrounds()
        if self.only is not None:
            avail = {k: v for k, v in avail.items() if k in self.only}
        if not avail:
            raise BadInput("no sample background is available (install medr2[sample])", field="--source")
        slots = [k for k in avail for _ in range(max(1, round(BACKGROUNDS[k].weight * 2)))]
        rng = np.random.default_rng(case_seed(seed, -1) % (2**63))
        specs: list[SampleSpec] = []
        order: list[str] = []
        for i in range(n):
            if not order:
                order = list(rng.permutation(slots))
            key = str(order.pop())
            view = int(rng.integers(avail[key]))
            specs.append(SampleSpec(f"sample-s{seed}-{i:06d}", i, case_seed(seed, i), key, view))
        return with_priors(specs, seed)

    def locality(self, spec: SampleSpec) -> tuple[str, int]:
        """Cases of one background view are best realized together (the decoded view stays cached)."""
        return spec.background, spec.view

    def realize(self, spec: SampleSpec, images: ImageStore) -> Case:
        if spec.background not in BACKGROUNDS:
            raise BadInput(f"unknown background {spec.background!r}", record=spec.case_id, field="background")
        bg = BACKGROUNDS[spec.background].load(spec.view)
        if spec.prior_seed is not None:  # a prior study: made beside its current case (same crop and flip)
            current = realize_case(_current_of(spec), bg, images)
            return realize_case(spec, bg, images, prior_flip=bool(current.flipped))
        case = realize_case(spec, bg, images)
        if spec.prior_id is None:
            return case
        link = Companion(case_id=spec.prior_id, role="prior", interval_days=spec.prior_interval)
        return case.model_copy(update={"companions": [link]})


def with_priors(specs: list[SampleSpec], seed: int) -> list[SampleSpec]:
    """The planned cases, some of a prior-capable background (:attr:`BackgroundDef.priors`) linked to a prior study
    planned after all of them (issue 49): drawn by an rng of their own, so every planned case keeps its seed, its
    index and its bytes; the prior replays its current case's crop and lesions with a change (new, unchanged,
    grown; resolved where the current has no lesion)."""
    rng = np.random.default_rng(case_seed(seed, -2) % (2**63))
    out: list[SampleSpec] = []
    priors: list[SampleSpec] = []
    for spec in specs:
        draw, days = float(rng.random()), int(rng.integers(*PRIOR_INTERVAL_DAYS))
        if not BACKGROUNDS[spec.background].priors or draw >= P_PRIOR:
            out.append(spec)
            continue
        prior_id = spec.case_id + PRIOR_SUFFIX
        out.append(dataclasses.replace(spec, prior_id=prior_id, prior_interval=days))
        priors.append(dataclasses.replace(spec, case_id=prior_id, prior_seed=case_seed(seed, -3 - spec.index)))
    return out + priors


def _current_of(prior: SampleSpec) -> SampleSpec:
    return dataclasses.replace(prior, case_id=prior.case_id.removesuffix(PRIOR_SUFFIX), prior_seed=None)


def _factory(arg: str | None) -> SampleSource:
    return SampleSource(arg)


# ---------------------------------------------------------------- realize


def _box(mask: np.ndarray) -> tuple[float, float, float, float]:
    ys = np.nonzero(mask.any(axis=1))[0]
    xs = np.nonzero(mask.any(axis=0))[0]
    return float(xs[0]), float(ys[0]), float(xs[-1] + 1), float(ys[-1] + 1)


def _crop_box(bg: Background, rng: np.random.Generator) -> tuple[int, int, int, int]:
    """A random crop (x0, y0, x1, y1) that keeps the tissue of interest whole."""
    h, w = bg.shape
    keep = bg.host if bg.host is not None and bg.host.any() else None
    if keep is None:
        masks = [s.mask for s in bg.structures if s.mask.any()] + [f.mask for f in bg.real_findings]
        keep = np.logical_or.reduce(masks) if masks else None
    if keep is None:
        kx0, ky0, kx1, ky1 = int(w * 0.15), int(h * 0.15), int(w * 0.85), int(h * 0.85)
    else:
        bx = _box(keep)
        kx0, ky0, kx1, ky1 = int(bx[0]), int(bx[1]), int(bx[2]), int(bx[3])
    for f in bg.real_findings:  # never cut a real finding
        fb = _box(f.mask)
        kx0, ky0, kx1, ky1 = min(kx0, int(fb[0])), min(ky0, int(fb[1])), max(kx1, int(fb[2])), max(ky1, int(fb[3]))
    if rng.random() < 0.3:
        return 0, 0, w, h
    x0 = int(rng.integers(0, max(1, min(kx0, int(w * 0.15)) + 1)))
    y0 = int(rng.integers(0, max(1, min(ky0, int(h * 0.15)) + 1)))
    x1 = w - int(rng.integers(0, max(1, min(w - kx1, int(w * 0.15)) + 1)))
    y1 = h - int(rng.integers(0, max(1, min(h - ky1, int(h * 0.15)) + 1)))
    return x0, y0, x1, y1


@functools.lru_cache(maxsize=VIEW_CACHE)
def _host_dt(key: str, view: int) -> np.ndarray:
    """Distance to the nearest non-host pixel on the full working image (cached per background view)."""
    bg = BACKGROUNDS[key].load(view)
    assert bg.host is not None
    return ndimage.distance_transform_edt(bg.host).astype(np.float32)


@functools.lru_cache(maxsize=512)
def _midline_x(key: str, view: int) -> float:
    """Patient midline (x on the working image): centroid of the host / first structure (derived)."""
    bg = BACKGROUNDS[key].load(view)
    src = bg.host if bg.host is not None and bg.host.any() else next(
        (s.mask for s in bg.structures if s.mask.any()), None)
    return bg.shape[1] / 2.0 if src is None else float(np.nonzero(src)[1].mean())


@functools.lru_cache(maxsize=VIEW_CACHE)
def _organ_dt(key: str, view: int) -> np.ndarray:
    """Distance to the outside of the host organ itself (its own structure, e.g. the whole "brain", not the
    eroded host where lesions are placed), cached per background view: where an extra-axial lesion sits."""
    bg = BACKGROUNDS[key].load(view)
    organ = next((s.mask for s in bg.structures if s.name == bg.host_name and s.mask.any()), bg.host)
    assert organ is not None
    return ndimage.distance_transform_edt(organ).astype(np.float32)


def _crop_dt(key: str, view: int, crop: tuple[int, int, int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distance to the host edge or the crop edge, whichever is nearer; distance to the organ's own surface;
    distance to the crop edge."""
    x0, y0, x1, y1 = crop
    dt = _host_dt(key, view)[y0:y1, x0:x1]
    h, w = dt.shape
    ys = np.minimum(np.arange(h), np.arange(h)[::-1]).astype(np.float32)[:, None] + 1
    xs = np.minimum(np.arange(w), np.arange(w)[::-1]).astype(np.float32)[None, :] + 1
    edge = np.minimum(ys, xs)
    return np.minimum(dt, edge), _organ_dt(key, view)[y0:y1, x0:x1], np.broadcast_to(edge, dt.shape)


PLACE_TRIES = 8  # candidate sites tried per lesion for one that lies where its class may and reads


@dataclass(frozen=True, eq=False)
class PlacedLesion:
    """A lesion drawn on a case's image: its mask, shape, nominal size (mm), the texture it shows
    (:func:`~medr2.sources.sample.lesions.shown_texture`) and its contrast to the tissue round it
    (:func:`~medr2.sources.sample.lesions.lesion_contrast`), both measured on the pixels drawn, and how many sites
    were tried and left before it (issue 40: a site where its class cannot lie, or where it would not read)."""

    mask: np.ndarray
    shape: str
    size_mm: float
    texture: str
    contrast: float
    relocated: int
    # the pixels its drawing changed (:func:`~medr2.sources.sample.lesions.changed_by`): its mask and any halo,
    # oedema or blurred edge round it, the outer extent its size is also read at (issue 40)
    reach: np.ndarray


def _tangent(organ_dt: np.ndarray, cy: int, cx: int) -> float:
    """The direction (radians, x towards y) along the organ's surface at (cy, cx): across its distance map's
    gradient, smoothed over a few pixels."""
    y0, y1, x0, x1 = max(0, cy - 6), cy + 7, max(0, cx - 6), cx + 7
    patch = ndimage.gaussian_filter(organ_dt[y0:y1, x0:x1].astype(np.float64), 2.0)
    gy, gx = np.gradient(patch)
    j, i = cy - y0, cx - x0
    return float(np.arctan2(gy[j, i], gx[j, i]) + np.pi / 2)


def _place_lesions(img: np.ndarray, dts: tuple[np.ndarray, np.ndarray, np.ndarray], cls: LesionClass,
                   spacing: float, modality: str, rng: np.random.Generator,
                   scale: float = 1.0) -> list[PlacedLesion]:
    """Place 1..n lesions of ``cls`` where ``dts`` (:func:`_crop_dt`) allow (:class:`PlacedLesion` each).

    Each lesion tries up to :data:`PLACE_TRIES` candidate sites, each rendered on a scratch copy and measured
    (issue 40): the first where it lies where its class may
    (:func:`~medr2.sources.sample.lesions.placed_where_it_may`) and stands at least
    :data:`~medr2.sources.sample.lesions.MIN_CONTRAST` from the tissue round it is kept; else the site that lies
    where it may with the highest contrast (its contrast recorded: the case then says its lesion evidence does not
    read); a size with no such site is shrunk and tried again.
    ``scale``: each lesion drawn this times its size at the same site (a prior study's smaller lesion,
    issue 40: the prior shows the same lesion, not another one placed elsewhere): where each goes and how it is
    shaped is drawn and tried at its full size, from ``rng`` draws that do not depend on ``scale``, so the current
    study and its prior, replaying one rng, put each lesion at one centre."""
    count = int(rng.integers(cls.count[0], cls.count[1] + 1))
    host, surface = dts[0] > 0, cls.placement == "surface"
    # the cavity the organ fills: its mask with the sulci that cut into it closed (an extra-axial mass overlies
    # them; a lesion cut to the mask itself would show them as notches)
    organ = cavity(dts[1] > 0) if surface else dts[1] > 0
    # what the image shows round the organ (issue 40): an extra-axial mass lies in tissue the image shows, never on
    # the void round a skull-stripped brain (:func:`placeable`: no such class is drawn on an image without it)
    shown = tissue_shown(img) if surface else None
    if shown is not None:  # its outline smoothed over a few pixels (the mass's base follows no pixel's stair)
        organ = (ndimage.gaussian_filter((organ & shown).astype(np.float32), 2.0) > 0.5) & organ & shown
    within = organ if surface else None
    tissue = organ if surface else host
    # a surface lesion is centred on the cavity's surface (not in a sulcus's mouth, where a smaller prior would
    # lie below the surface its current reaches)
    organ_dt = ndimage.distance_transform_edt(organ).astype(np.float32) if surface else dts[1]
    taken: list[tuple[float, float, float]] = []
    placed: list[PlacedLesion] = []
    for _ in range(count):
        size_mm = float(rng.uniform(*cls.size_mm))
        shape = str(cls.shapes[int(rng.integers(len(cls.shapes)))])
        for _attempt in range(5):
            radius = max(2.5, size_mm / spacing / 2.0)
            cands = candidate_centres(dts[0], radius, cls.placement, taken, surface=(organ_dt, dts[2]))
            if len(cands):
                order = rng.permutation(len(cands))[:PLACE_TRIES]
                seed = int(rng.integers(2**63))  # the lesion's own draws (shape, texture)
                best: tuple[float, int, int, float | None, int] | None = None
                for tried, k in enumerate(order):
                    cy, cx = int(cands[k][0]), int(cands[k][1])
                    orient = _tangent(organ_dt, cy, cx) if surface else None
                    trial = img.copy()
                    m = render_one(trial, cls, shape, float(cx), float(cy), radius, modality,
                                   np.random.default_rng(seed), within=within, orient=orient)
                    if not m.any() or not placed_where_it_may(cls, m, host, organ if surface else None):
                        continue
                    c = lesion_contrast(trial, m, tissue)
                    if best is None or c > best[0]:
                        best = (c, cy, cx, orient, tried)
                    if c >= MIN_CONTRAST:
                        break
                if best is not None:
                    _c, cy, cx, orient, tried = best
                    drawn = max(2.5, size_mm * scale / spacing / 2.0)
                    before = img.copy()
                    mask = render_one(img, cls, shape, float(cx), float(cy), drawn, modality,
                                      np.random.default_rng(seed), within=within, orient=orient)
                    placed.append(PlacedLesion(mask, shape, size_mm * scale, shown_texture(cls, img, mask),
                                               lesion_contrast(img, mask, tissue), tried,
                                               changed_by(before, img, mask)))
                    taken.append((float(cy), float(cx), radius * 1.35 + 2))
                    break
            size_mm = max(cls.size_mm[0] * 0.5, size_mm * 0.75)
    return placed


def _side(x: float, midline: float, width: int) -> str:
    if abs(x - midline) < 0.03 * width:
        return "midline"
    return "right" if x < midline else "left"  # radiological display: image left = patient right


def _quadrant(x: float, y: float, w: int, h: int) -> str:
    return ("upper" if y < h / 2 else "lower") + " " + ("left" if x < w / 2 else "right")


def _lung_zone(y: float, lung: np.ndarray | None) -> str:
    if lung is None or not lung.any():
        return ""
    ys = np.nonzero(lung.any(axis=1))[0]
    frac = (y - ys[0]) / max(1, ys[-1] - ys[0])
    return "upper zone" if frac < 1 / 3 else "mid zone" if frac < 2 / 3 else "lower zone"


def put_mask(images: ImageStore, mask: np.ndarray) -> ImageRef:
    """Store a bool mask as a 1-bit PNG (decodes to 0/255 grayscale); deterministic bytes."""
    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(mask, dtype=bool)).save(buf, format="PNG", compress_level=6, optimize=False)
    return images.put_png_bytes(buf.getvalue(), mask.shape[1], mask.shape[0])


def _to_uint8(img: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(img * 255.0), 0, 255).astype(np.uint8)


def realize_case(spec: SampleSpec, bg: Background, images: ImageStore, *, prior_flip: bool | None = None) -> Case:
    """One case; for a prior study (``spec.prior_seed``) the current case's draws are replayed through the lesions
    (same window, crop and lesion class), the lesions changed as its own rng says, no degradation, and the
    current's flip (``prior_flip``)."""
    rng = np.random.default_rng(spec.seed)
    own = np.random.default_rng(spec.prior_seed) if spec.prior_seed is not None else None
    change: str | None = None
    # 1. display window (CT: one of several named windows, which becomes the "sequence" label)
    names = list(bg.images)
    window = names[int(rng.integers(len(names)))] if len(names) > 1 else names[0]
    sequence = window if len(names) > 1 else bg.sequence
    # 2. crop (no resampling: the working image already has longest side <= 512)
    x0, y0, x1, y1 = _crop_box(bg, rng)
    img = bg.images[window][y0:y1, x0:x1].copy()
    h, w = img.shape[:2]
    spacing = bg.spacing_mm
    structs = [StructMask(s.name, s.mask[y0:y1, x0:x1], s.kind, s.method) for s in bg.structures]
    midline = _midline_x(bg.key, spec.view) - x0
    # 3. lesions
    cls: LesionClass | None = None
    lesions: list[PlacedLesion] = []
    options = classes_for(bg.lesion_family) if bg.lesion_family and bg.host is not None else ()
    dts = _crop_dt(bg.key, spec.view, (x0, y0, x1, y1)) if options else None
    if dts is not None:
        options = placeable(options, img, dts[1] > 0)
    if options and spacing and dts is not None and rng.random() >= P_NORMAL:
        cls = options[int(rng.integers(len(options)))]
        if own is not None:  # the prior's course: one this diagnosis takes (issue 40), the lesion still there now
            courses = [c for c in cls.courses if c != "resolved"]
            change = courses[int(own.integers(len(courses)))]
        if change == "new":  # the lesion is new on the current study: none on its prior
            cls = None
        else:
            lesions = _place_lesions(img, dts, cls, spacing, bg.modality, rng,
                                     scale=GROWN_SCALE if change == "grown" else 1.0)
        if cls is not None and not lesions:
            raise BadInput(f"no room for a {cls.key} lesion in the tissue mask", file=bg.file, record=spec.case_id,
                           field="findings")
    elif own is not None and options and spacing:  # the current has no lesion: one that resolves, or none before
        resolving = [c for c in options if "resolved" in c.courses]
        change = "resolved" if resolving else "unchanged"
        cls = resolving[int(own.integers(len(resolving)))] if resolving else None
        if cls is not None and dts is not None:
            lesions = _place_lesions(img, dts, cls, spacing, bg.modality, own)
        if cls is not None and not lesions:
            raise BadInput(f"no room for a {cls.key} lesion in the tissue mask", file=bg.file, record=spec.case_id,
                           field="findings")
    if own is not None:  # another acquisition of the same anatomy: a slightly different exposure
        img = img * 0.92 + 0.04
    # 4. degradation
    arr = _to_uint8(img)
    kind: str | None = None
    severity = 0
    evidence: float | None = None  # the lowest SSIM within a lesion after the case's own degradation
    if own is None and rng.random() < P_DEGRADED:
        kind = CASE_ARTEFACTS[int(rng.integers(len(CASE_ARTEFACTS)))]
        severity = int(rng.integers(1, 4))
        undegraded = arr
        arr = degrade(arr, kind, severity, rng)
        boxes = [_box(p.mask) for p in lesions] + [_box(rf.mask[y0:y1, x0:x1]) for rf in bg.real_findings
                                                      if rf.mask[y0:y1, x0:x1].sum() >= 4]
        evidence = evidence_ssim(arr, undegraded, boxes)[1]
    # 5. flip
    flipped = bool(prior_flip) if own is not None else bool(bg.flip_ok and rng.random() < P_FLIP)
    if flipped:
        arr = np.ascontiguousarray(arr[:, ::-1])

    def disp(mask: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(mask[:, ::-1]) if flipped else mask

    def shown_x(x: float) -> float:
        return w - x if flipped else x

    ref = images.put_array(arr)
    shown = arr.astype(np.float32) / 255.0  # the image the model gets: its lesions' attributes are read from it
    # structures
    structures: list[Structure] = []
    for s in structs:
        m = disp(s.mask)
        area = int(m.sum())
        if area < MIN_STRUCT_PX:
            continue
        mref = put_mask(images, m)
        structures.append(Structure(name=s.name, kind=s.kind, box=_box(m), mask=mref.path,  # type: ignore[arg-type]
                                    area_px=float(area)))  # kind: validated by the record
    lung_masks = {s.name: s.mask for s in structs if s.name.endswith("lung")}
    # findings
    findings: list[Finding] = []
    attr_list: list[dict[str, Any]] = []
    for p in lesions:
        assert cls is not None and spacing is not None
        mask = p.mask
        findings_attrs = _attributes(bg, cls, mask, p.shape, spacing, midline, w, h, structs, lung_masks, flipped,
                                     shown_x, p.texture)
        m = disp(mask)
        findings_attrs = _as_rendered(findings_attrs, cls, rendering(shown, m, spacing, disp(p.reach)))
        mref = put_mask(images, m)
        findings.append(Finding(label=cls.label, box=_box(m), mask=mref.path, area_px=float(m.sum()),
                                attributes=findings_attrs, synthetic=True))
        attr_list.append(findings_attrs)
    for rf in bg.real_findings:
        mask = rf.mask[y0:y1, x0:x1]
        if mask.sum() < 4:
            continue
        m = disp(mask)
        mref = put_mask(images, m)
        ys, xs = np.nonzero(mask)
        attrs = dict(rf.attributes)
        if spacing:
            attrs["size_mm"] = round(float(max(np.ptp(xs) + 1, np.ptp(ys) + 1)) * spacing, 1)
        cx = float(xs.mean())
        if bg.laterality == "radiological":
            attrs["laterality"] = _side(cx, midline, w)
        attrs["image_side"] = "left" if shown_x(cx) < w / 2 else "right"
        attrs["quadrant"] = _quadrant(shown_x(cx), float(ys.mean()), w, h)
        attrs["source"] = rf.method
        findings.append(Finding(label=rf.label, box=_box(m), mask=mref.path, area_px=float(m.sum()),
                                attributes=attrs, synthetic=False))
    # diagnosis and labels
    synthetic = ["quality", "artefact", "artefact_severity"]
    if bg.flip_ok:
        synthetic.append("flipped")
    if len(names) > 1:
        synthetic.append("sequence")
    if bg.spacing_estimated:
        synthetic.append("pixel_spacing_mm")
    artefact = ARTEFACT_LABELS[kind] if kind else "none"
    quality = QUALITY_BY_SEVERITY[severity]
    diagnosis, malignancy, mimics, report = bg.diagnosis, bg.malignancy, [], None
    discriminable: list[str] = []
    # what the source knows: a background's findings are complete only where it says so (a normal template, a
    # file named normal); an unlabelled real image may show anything (cr-chest shows round masses)
    exhaustive = bg.meta.get("findings_complete") is True and not bg.real_findings
    if cls is not None:
        diagnosis, malignancy, mimics = cls.diagnosis, cls.malignancy, list(cls.mimics)
        # told apart by the rendering and no mimic: a diagnosis the class lists as its mimic (or one the vocabulary
        # relates to a mimic: bone metastases beside a solitary bone metastasis) is clinically consistent with what
        # the image shows (cotton-wool spots occur in diabetic retinopathy too), however the generator draws it
        # (the vocabulary's differential of the diagnosis too: medr2.vocab.mimics)
        differential = [*cls.mimics, *known_mimics(cls.diagnosis)]
        discriminable = sorted(c.diagnosis for c in options if c is not cls and told_apart(cls, c)
                               and not any(conflicts(c.diagnosis, m) for m in differential))
        synthetic += ["findings", "diagnosis", "malignancy", "mimics", "report"]
    elif options:  # a lesion-capable background left without a lesion: declared normal
        diagnosis, malignancy = "no abnormality", None
        synthetic += ["findings", "diagnosis", "report"]
    else:
        exhaustive = exhaustive and bg.diagnosis is None and bg.status == "normal"
    meta: dict[str, Any] = dict(bg.meta)
    meta.update({
        "background_key": bg.key, "view": spec.view, "crop_xyxy": [x0, y0, x1, y1], "window": window,
        "lesion_class": cls.key if cls else None, "degradation": {"kind": kind, "severity": severity} if kind else None,
        "background_status": bg.status, "findings_complete": exhaustive,
        "structures_complete": bg.structures_complete,
        "lateralising": bg.lateralising,
        "discriminable": discriminable,
        "structure_methods": {s.name: s.method for s in structs},
        "laterality_convention": "patient side; radiological display (image left = patient right) for chest, "
                                 "axial and coronal views; image_side is where it appears in the shown image",
    })
    if change is not None:  # a prior study: the change its current case shows since (the generator's intent)
        meta.update({"prior_of": spec.case_id.removesuffix(PRIOR_SUFFIX), "prior_change": change})
    if evidence is not None:  # the case's own degradation: how much of the lesion evidence it left (the contract)
        meta["evidence_ssim"] = evidence
    if lesions:  # how far the faintest lesion stands from the tissue round it, as drawn (the contract: readable
        # at MIN_CONTRAST), and how many sites were left for one where each lies where its class may and reads
        meta["lesion_contrast"] = round(min(p.contrast for p in lesions), 3)
        meta["lesion_relocations"] = sum(p.relocated for p in lesions)
    if bg.laterality in ("fixed", "hemisphere") and bg.fixed_side:
        meta["side"] = bg.fixed_side
    case = Case(
        case_id=spec.case_id, image=ref.path, image_sha256=ref.sha256, width=ref.width, height=ref.height,
        modality=bg.modality, plane=bg.plane, sequence=sequence, body_region=bg.body_region, quality=quality,
        artefact=artefact, artefact_severity=severity, flipped=flipped if bg.flip_ok else None,
        pixel_spacing_mm=round(spacing, 5) if spacing else None, structures=structures, findings=findings,
        diagnosis=diagnosis, severity=None, malignancy=malignancy, mimics=mimics, report=report,
        source=bg.source, license=bg.license, access=bg.access, patient_id=bg.patient_id,
        synthetic_fields=sorted(set(synthetic)), background=portable_file(bg.file), meta=meta,
    )
    if cls is not None or options:
        # the report says "malignant appearance" only where the image decides it (the gate of every malignancy
        # claim, medr2.vocab.differential.malignancy_decidable; a glioblastoma's abscess mimic leaves it undecided)
        report = make_report(modality=bg.modality, plane=bg.plane, body_region=bg.body_region,
                             findings=attr_list, label=cls.label if cls else None, diagnosis=diagnosis,
                             malignancy=malignancy if malignancy_decidable(case) else None, artefact=artefact,
                             quality=quality, differential=tuple(compatible_mimics(case)))
        case = case.model_copy(update={"report": report})
    return case


def portable_file(file: str) -> str:
    """The background's file as a bench may carry it: an absolute path (the machine that built the bench) is
    reduced to its file name; a package resource name is kept."""
    return Path(file).name if Path(file).is_absolute() else file


def _as_rendered(attrs: dict[str, Any], cls: LesionClass, drawn: dict[str, Any]) -> dict[str, Any]:
    """A drawn lesion's attributes with its appearance words read from its rendering (issue 40, review 2026-12-07c):
    its shape the word its mask admits (:func:`medr2.vocab.appearance.shape_key`; none where the mask shows no
    shape, or more than one word and not the drawn one), its colour the nearest colour word to its core's drawn
    colour (:func:`medr2.vocab.appearance.nearest_colour`), its margin the word its drawn edge admits
    (:func:`medr2.vocab.appearance.margin_key`: none between sharp and soft); the measurement itself under ``rendered``
    (:func:`~medr2.sources.sample.lesions.rendering`), read by the tasks' gate of attribute words
    (:mod:`medr2.tasks.rendered`)."""
    out = {**attrs, "rendered": drawn}
    out["shape"] = shape_key(drawn, str(attrs["shape"]))
    out["margin"] = margin_key(drawn, attrs.get("margin"))
    if cls.color_name:
        out["intensity"] = nearest_colour(drawn["rgb"])
    return out


def _attributes(bg: Background, cls: LesionClass, mask: np.ndarray, shape: str, spacing: float, midline: float,
                w: int, h: int, structs: list[StructMask], lung_masks: dict[str, np.ndarray], flipped: bool,
                shown_x: Any, texture: str) -> dict[str, Any]:
    ys, xs = np.nonzero(mask)
    cx, cy = float(xs.mean()), float(ys.mean())
    size_mm = round(float(max(np.ptp(xs) + 1, np.ptp(ys) + 1)) * spacing, 1)
    if bg.laterality == "radiological":
        side: str | None = _side(cx, midline, w)
    elif bg.laterality in ("fixed", "hemisphere"):
        side = bg.fixed_side
    else:
        side = None
    # location, in words a radiologist signs (medr2.vocab.anatomical_location: no tissue class, a side only
    # where the structure has one): the class's compartment (an extra-axial mass lies outside every brain
    # region), else the most overlapped specific structure, else the host organ where it says where
    best, best_n = None, 0
    for s in structs:
        if s.name in (bg.host_name, "brain", "body", "retina") or s.kind == "region" or not_a_structure(s.name):
            continue
        n = int((s.mask & mask).sum())
        if n > best_n:
            best, best_n = s.name, n
    own_side = side if side in ("left", "right") else None
    location: str | None
    if bg.lesion_family == "lung":
        lung = next((m for name, m in lung_masks.items() if side and name.startswith(side)), None)
        location = f"{side} {_lung_zone(cy, lung)}".strip() if side in ("right", "left") else "lung"
    elif cls.compartment:
        location = anatomical_location(cls.compartment, own_side)
    elif best:
        location = anatomical_location(best, own_side)
    else:
        organ = HOST_LOCATION_WORDS.get(str(bg.host_name), str(bg.host_name))
        location = anatomical_location(organ, own_side) if organ else None
    return {
        "size_mm": size_mm, "shape": shape, "margin": cls.margin, "intensity": intensity_word(cls, bg.modality),
        "texture": texture, "laterality": side, "image_side": "left" if shown_x(cx) < w / 2 else "right",
        "location": location, "quadrant": _quadrant(shown_x(cx), cy, w, h), "organ": bg.host_name,
        "lesion_class": cls.key,
    }
