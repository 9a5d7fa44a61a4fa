"""Issue 40, kinds 7-9: what the sample keys about a lesion is what its pixels show. Measured from the rendered
pixels of a built bench, for every synthetic lesion on an image its case did not degrade: a well-defined margin is
a sharp edge and an ill-defined one a blurred edge (:func:`margin_sharpness`), a rim lesion's wall stands out from
its core and from its surroundings (:func:`ring_prominence`); a prior study shows the same lesion at the same
site, and the course it takes is one its diagnosis takes (``LesionClass.courses``)."""

from __future__ import annotations

import numpy as np
from scipy import ndimage

SHARP = 0.4  # a one-pixel step of at least this share of the lesion's contrast: a well-defined edge
RING = 0.05  # a wall at least this far (of [0, 1]) above its core and above its surroundings: a ring shows
MIN_DEPTH = 4.0  # a lesion at least this many pixels deep has edge shells to measure


def gray(arr: np.ndarray) -> np.ndarray:
    a = arr.astype(np.float64) / 255.0
    return a.mean(axis=2) if a.ndim == 3 else a


def _depth(mask: np.ndarray) -> np.ndarray:
    """Signed distance to the lesion's edge: depth inside (> 0), minus the distance outside."""
    return np.where(mask, ndimage.distance_transform_edt(mask), -ndimage.distance_transform_edt(~mask))


def _profile(img: np.ndarray, depth: np.ndarray, lo: float, hi: float) -> list[tuple[float, float]]:
    """(centre, mean) of the one-pixel shells of ``depth`` from ``lo`` to ``hi``."""
    out = []
    for a in np.arange(np.floor(lo), np.ceil(hi)):
        m = (depth > a) & (depth <= a + 1)
        if m.any():
            out.append((a + 0.5, float(img[m].mean())))
    return out


def margin_sharpness(img: np.ndarray, mask: np.ndarray) -> float | None:
    """The largest one-pixel step of the radial profile across the lesion's edge (three shells either side) as a
    share of the lesion's contrast (the most any inside shell differs from the tissue beyond any oedema, 0.3 to
    0.3 radii + 6 pixels out); None for a lesion too small to measure."""
    depth = _depth(mask)
    r = float(depth.max())
    if r < MIN_DEPTH:
        return None
    edge = [v for _, v in _profile(img, depth, -3, 3)]
    far = (depth <= -(0.3 * r + 3)) & (depth > -(0.3 * r + 6))
    inside = _profile(img, depth, 0, r)
    if len(edge) < 5 or not far.any():
        return None
    contrast = max(abs(v - float(img[far].mean())) for _, v in inside)
    return float(np.abs(np.diff(edge)).max() / contrast) if contrast > 0 else None


def ring_prominence(img: np.ndarray, mask: np.ndarray) -> tuple[float, float]:
    """A rim lesion's wall: the inside shell farthest from its core's signal (the wall's sign is the core's
    opposite); how far it stands above the core (deeper than 0.6 radii) and above the lowest shell outside it (to
    0.4 radii + 3 pixels out), in the wall's sign."""
    depth = _depth(mask)
    r = float(depth.max())
    core = float(img[depth > 0.6 * r].mean())
    prof = _profile(img, depth, -(0.4 * r + 3), r)
    sign = 1.0 if core < float(np.mean([v for _, v in prof])) else -1.0  # the wall is brighter than a dark core
    walls = [(x, sign * v) for x, v in prof if x > 0]
    at, peak = max(walls, key=lambda p: p[1])
    outside = [sign * v for x, v in prof if x < at and x < 0]
    return peak - sign * core, peak - (min(outside) if outside else peak)


def _lesions(bench, root):  # type: ignore[no-untyped-def]
    """(case, finding, grey image, mask) of every synthetic lesion of the bench."""
    from medr2.images import load_image

    for case in bench.cases:
        img = None
        for f in case.findings:
            if not f.synthetic or not f.mask:
                continue
            img = gray(load_image(root / case.image)) if img is None else img
            yield case, f, img, load_image(root / f.mask) > 0


def test_margins_and_rims_keyed_as_drawn(sample_bench, sample_bench_dir) -> None:  # type: ignore[no-untyped-def]
    """Every measurable lesion on an undegraded image: its keyed margin (where one is keyed: none where a crisp core
    sits in a soft halo, :func:`medr2.vocab.appearance.margin_words`) is the edge its pixels show; a lesion keyed
    with a rim shows a wall brighter (or darker) than both its core and its surroundings."""
    measured = rims = 0
    for case, f, img, mask in _lesions(sample_bench, sample_bench_dir):
        if case.meta.get("degradation"):
            continue
        sharp = margin_sharpness(img, mask)
        if sharp is not None and f.attributes.get("margin") is not None:  # no margin keyed: nothing to check
            measured += 1
            if f.attributes["margin"] == "ill-defined":
                assert sharp < SHARP, (case.case_id, f.label, sharp)
            else:
                assert sharp >= SHARP, (case.case_id, f.label, f.attributes["margin"], sharp)
        if f.attributes["texture"] == "rim" and float(ndimage.distance_transform_edt(mask).max()) >= MIN_DEPTH:
            over_core, over_outside = ring_prominence(img, mask)
            assert over_core >= RING and over_outside >= RING, (case.case_id, f.label, over_core, over_outside)
            rims += 1
    assert measured >= 10 and rims >= 3, (measured, rims)


def _prior_pairs(tmp_path):  # type: ignore[no-untyped-def]
    """(current, prior, store root) of the prior-capable backgrounds' cases (template brains, fundus)."""
    from medr2.images import ImageStore
    from medr2.sources.sample.source import PRIOR_SUFFIX, SampleSource

    src = SampleSource("mni152-axial,mni152-coronal,mni152-sagittal,fundus")
    store = ImageStore(tmp_path)
    cases = {c.case_id: c for c in (src.realize(s, store) for s in src.plan(40, 48))}
    return [(cases[k.removesuffix(PRIOR_SUFFIX)], c) for k, c in cases.items() if k.endswith(PRIOR_SUFFIX)], store.root


def test_priors_follow_one_lesion_on_a_course_its_diagnosis_takes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Kind 9: a prior keyed "grown" or "unchanged" shows each lesion of its current study at the same site (its
    centre within two pixels; an extra-axial dome, cut to the brain's outline, within the current's box), smaller
    for "grown"; kind 8: every prior's course is one its lesion class declares
    (a glioblastoma never resolves, a naevus never appears)."""
    from medr2.sources.sample.lesions import FAMILIES

    classes = {c.key: c for family in FAMILIES.values() for c in family}
    pairs, _root = _prior_pairs(tmp_path)
    followed = 0
    for current, prior in pairs:
        change = prior.meta["prior_change"]
        cls = prior.meta["lesion_class"] or current.meta["lesion_class"]
        if cls is not None:
            assert change in classes[cls].courses, (prior.case_id, cls, change)
        else:
            assert change == "unchanged" and not current.findings and not prior.findings
        if change not in ("grown", "unchanged"):
            continue
        assert len(prior.findings) == len(current.findings) > 0
        for before, now in zip(prior.findings, current.findings, strict=True):
            if classes[str(cls)].placement == "surface":  # cut to the organ's outline at one centre on its
                # surface: the prior's smaller dome lies within the current's, on the same base (fix40h)
                assert all(before.box[k] >= now.box[k] - 2 for k in (0, 1)) and \
                    all(before.box[k] <= now.box[k] + 2 for k in (2, 3)), (prior.case_id, before.box, now.box)
            else:
                c0 = np.array([(before.box[0] + before.box[2]) / 2, (before.box[1] + before.box[3]) / 2])
                c1 = np.array([(now.box[0] + now.box[2]) / 2, (now.box[1] + now.box[3]) / 2])
                assert np.abs(c0 - c1).max() <= 2.0, (prior.case_id, before.box, now.box)
            smaller = before.area_px < now.area_px
            assert smaller if change == "grown" else abs(before.area_px - now.area_px) <= 0.1 * now.area_px
            followed += 1
    assert followed >= 3 and len(pairs) >= 8, (followed, len(pairs))
