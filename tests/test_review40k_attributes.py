"""Issue 40 (review 2026-12-07c, branch fix40k): a lesion's attributes are read from its rendering.

Properties of built sample benches (several seeds, clean items and the text variants that keep the image), measured on
the stored image and mask by this file's own measures (colour: the core's mean sRGB, CIELAB ΔE2000 by scikit-image;
shape: the mask's region properties), judged by the vocabulary's word rules (:mod:`medr2.vocab.appearance`):

- every item that keys a colour keys the colour word nearest the lesion's drawn colour, and offers no colour word
  within :data:`~medr2.vocab.appearance.COLOUR_APART` of it;
- every item that keys a shape keys a word the mask admits, and offers none the mask also admits;
- every size bin asked is the bin of the lesion's core and of its outer extent (halo, rim) alike;
- the entry points: every item whose question or options say a shape, colour or size word of a lesion is of a task
  that declares the clauses of this gate (``appearance_shown``, ``size_bounded``), so a new task or variant that
  writes such a word without going through it fails here.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import ndimage

from tests.sample_benches import built_benches, require_sample

SEEDS = (5151, 29, 71)
SHAPE_WORDS = ("round", "oval", "lobulated", "irregular", "spiculated")
GATED = {"s3.attribute": "appearance_shown", "s3.cue_description": "appearance_shown", "s3.size": "size_bounded"}


@pytest.fixture(scope="module")
def benches(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Any, Path]]:
    require_sample()
    return built_benches(tmp_path_factory, "r40k", "sample", SEEDS, n_cases=60, variants="T1,T6")


def _rgb(root: Path, rel: str) -> np.ndarray:
    from medr2.images import load_image

    a = load_image(root / rel).astype(np.float64)
    return np.repeat(a[..., None], 3, axis=2) if a.ndim == 2 else a


def _mask(root: Path, rel: str) -> np.ndarray:
    from medr2.images import load_image

    return load_image(root / rel, mode="L") > 127


def drawn_colour(img: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The mean sRGB (0-255) of the lesion's core: deeper than half its depth (the whole mask under 3 pixels)."""
    depth = ndimage.distance_transform_edt(mask)
    r = float(depth.max())
    core = depth > 0.5 * r if r >= 3 else mask
    return img[core].mean(axis=0)


def delta_e(rgb: np.ndarray, word: str) -> float:
    from skimage.color import deltaE_ciede2000, rgb2lab

    from medr2.vocab.appearance import COLOURS

    lab = rgb2lab(np.asarray(rgb, float).reshape(1, 1, 3) / 255.0)[0, 0]
    ref = rgb2lab(np.asarray(COLOURS[word], float).reshape(1, 1, 3) / 255.0)[0, 0]
    return float(deltaE_ciede2000(lab, ref))


def mask_features(mask: np.ndarray) -> dict[str, float]:
    """The shape features :func:`medr2.vocab.appearance.shape_words` reads, measured here on the stored mask."""
    from skimage.draw import ellipse
    from skimage.measure import regionprops

    p = regionprops(mask.astype(np.uint8))[0]
    rr, cc = ellipse(p.centroid[0], p.centroid[1], max(p.axis_major_length / 2, 0.5),
                     max(p.axis_minor_length / 2, 0.5), shape=mask.shape, rotation=p.orientation)
    fit = np.zeros_like(mask)
    fit[rr, cc] = True
    return {"diameter_px": float(p.equivalent_diameter_area),
            "ellipse_iou": float((fit & mask).sum()) / float((fit | mask).sum()),
            "solidity": float(p.solidity), "axis_ratio": float(p.axis_minor_length / p.axis_major_length)}


def _words(text: str, vocabulary: Any) -> set[str]:
    """The words of ``vocabulary`` said in ``text``, the longest first ("dark red" is not also "red")."""
    out, rest = set(), text.lower()
    for w in sorted(vocabulary, key=len, reverse=True):
        pattern = rf"(?<![\w-]){re.escape(w)}(?![\w-])"
        if re.search(pattern, rest):
            out.add(w)
            rest = re.sub(pattern, " ", rest)
    return out


def _key_text(it: Any) -> str:
    from medr2.records import letter_index

    return it.options[letter_index(it.answer)] if it.form == "mcq" else it.answer


def _target(case: Any, it: Any) -> Any:
    label = it.meta.get("target")
    found = [f for f in case.findings if f.label == label]
    return found[0] if len(found) == 1 else None


def _stripped(text: str, case: Any) -> str:
    """The item text without the names its case gives (finding labels, diagnoses, structures: "lobulated nodule",
    "white matter" are names, not attribute words said of a lesion)."""
    names = [f.label for f in case.findings] + [s.name for s in case.structures] + list(case.mimics)
    names += [n for n in (case.diagnosis, case.body_region, case.sequence) if n]
    out = text.lower()
    for n in sorted(names, key=len, reverse=True):
        out = out.replace(n.lower(), " ")
    return out


def _same_image(it: Any) -> bool:
    return it.variant == "clean" or it.variant.split("-")[0] in ("T1", "T6")


def _items(benches: list[tuple[Any, Path]]) -> Any:
    for bench, root in benches:
        cases = {c.case_id: c for c in bench.cases}
        for it in bench.items:
            if _same_image(it):
                yield root, cases[it.case_id], it


def test_every_item_saying_a_lesion_attribute_goes_through_the_gate(benches) -> None:  # type: ignore[no-untyped-def]
    from medr2.tasks.contract import task_requires
    from medr2.tasks.vocab import SIZE_LABELS
    from medr2.vocab.appearance import COLOURS

    saying: Counter[str] = Counter()
    for _root, case, it in _items(benches):
        if not case.findings:
            continue
        text = _stripped(" | ".join([it.question, *it.options]), case)
        if _words(text, SHAPE_WORDS) or _words(text, COLOURS) or _words(text, SIZE_LABELS):
            saying[it.task] += 1
            assert it.task in GATED, (it.item_id, it.task, it.variant, text)
    assert set(saying) == set(GATED), saying  # each gated task does say such words in these benches
    for task, clause in GATED.items():
        assert clause in task_requires(task), (task, task_requires(task))


def test_colour_keys_are_the_drawn_colour_and_no_option_is_near_it(benches) -> None:  # type: ignore[no-untyped-def]
    from medr2.vocab.appearance import COLOUR_APART, COLOUR_MARGIN, COLOURS

    seen = 0
    for root, case, it in _items(benches):
        f = _target(case, it) if it.task in GATED else None
        if f is None or not isinstance(f.attributes.get("intensity"), str) or f.attributes["intensity"] not in COLOURS:
            continue
        rgb = drawn_colour(_rgb(root, case.image), _mask(root, f.mask))
        nearest = min(COLOURS, key=lambda w: delta_e(rgb, w))
        assert f.attributes["intensity"] == nearest, (case.case_id, f.attributes["intensity"], nearest, rgb)
        key = _words(_stripped(_key_text(it), case), COLOURS) if it.form == "mcq" else set()
        assert key <= {nearest}, (it.item_id, key, nearest)
        far = max(COLOUR_APART, delta_e(rgb, nearest) + COLOUR_MARGIN)
        for option in it.options:
            for word in _words(_stripped(option, case), COLOURS) - {nearest}:
                assert delta_e(rgb, word) >= far, (it.item_id, word, delta_e(rgb, word), rgb)
        if it.form == "yesno" and it.answer == "no":  # T1's twin: "is the lesion <colour>?" keyed no
            for word in _words(_stripped(it.question, case), COLOURS):
                assert delta_e(rgb, word) >= far, (it.item_id, word)
        seen += 1
    assert seen >= 5, seen


def test_shape_keys_are_what_the_mask_admits_and_no_option_is(benches) -> None:  # type: ignore[no-untyped-def]
    from medr2.vocab.appearance import shape_words

    seen = 0
    for root, case, it in _items(benches):
        f = _target(case, it) if it.task in GATED else None
        if f is None or not f.mask:
            continue
        admitted = shape_words(mask_features(_mask(root, f.mask)))
        shape = f.attributes.get("shape")
        assert shape is None or shape in admitted, (case.case_id, shape, admitted)
        said = [(o, _words(_stripped(o, case), SHAPE_WORDS)) for o in it.options]
        for option, words in said:
            if not words:
                continue
            if it.form == "mcq" and option == _key_text(it):
                assert words <= admitted, (it.item_id, words, admitted)
            else:
                assert not (words - {shape}) & admitted, (it.item_id, option, words, admitted)
        if it.form == "yesno" and it.answer == "no":
            assert not _words(_stripped(it.question, case), SHAPE_WORDS) & admitted, (it.item_id, admitted)
        seen += any(w for _o, w in said)
    assert seen >= 5, seen


def _background(case: Any) -> np.ndarray:
    """The case's background before any lesion, cropped, mirrored and exposed as shown (grey, float [0, 1])."""
    from medr2.sources.sample.background import BACKGROUNDS

    bg = BACKGROUNDS[case.meta["background_key"]].load(case.meta["view"])
    x0, y0, x1, y1 = case.meta["crop_xyxy"]
    img = bg.images[case.meta["window"]][y0:y1, x0:x1].astype(np.float64)
    img = img[:, ::-1] if case.flipped else img
    img = img.mean(axis=2) if img.ndim == 3 else img
    return img * 0.92 + 0.04 if case.case_id.endswith("-prior") else img  # a prior's exposure


def _extent_mm(mask: np.ndarray, spacing: float) -> float:
    ys, xs = np.nonzero(mask)
    return float(max(np.ptp(xs) + 1, np.ptp(ys) + 1)) * spacing


def test_a_size_bin_is_the_bin_of_the_core_and_of_the_outer_extent(benches) -> None:  # type: ignore[no-untyped-def]
    """The core re-measured on the stored pixels, and the outer extent (the pixels the drawing changed, against the
    case's background, where nothing else changed them: no degradation, no extra-axial push) agree with what the
    case records, and the keyed bin is the bin of both."""
    from medr2.sources.sample.lesions import HALO_STEP, rendering
    from medr2.tasks.rendered import SIZE_EDGES_MM
    from medr2.tasks.vocab import SIZE_LABELS

    seen = remeasured = 0
    for root, case, it in _items(benches):
        f = _target(case, it) if it.task == "s3.size" else None
        if f is None:
            continue
        spacing = float(case.pixel_spacing_mm)
        recorded = f.attributes["rendered"]
        img, mask = _rgb(root, case.image) / 255.0, _mask(root, f.mask)
        assert rendering(img, mask, spacing)["core_mm"] == recorded["core_mm"], case.case_id  # the pixels shown
        if not case.meta.get("degradation") and "extra-axial" not in f.label:
            diff = np.abs(img.mean(axis=2) - _background(case)) >= HALO_STEP
            parts, _n = ndimage.label(diff | mask)
            outer = np.isin(parts, np.unique(parts[mask])) | mask
            assert abs(_extent_mm(outer, spacing) - recorded["outer_mm"]) <= 2 * spacing + 0.1, (
                case.case_id, _extent_mm(outer, spacing), recorded)
            remeasured += 1
        key = SIZE_LABELS.index(_key_text(it))
        for mm in (f.attributes["size_mm"], recorded["core_mm"], recorded["outer_mm"]):
            assert sum(1 for e in SIZE_EDGES_MM if mm > e) == key, (it.item_id, recorded, _key_text(it))
        seen += 1
    assert seen >= 3 and remeasured >= 1, (seen, remeasured)


def test_the_report_says_only_the_measured_words(benches) -> None:  # type: ignore[no-untyped-def]
    from medr2.vocab.appearance import COLOURS

    seen = 0
    for bench, _root in benches:
        for case in bench.cases:
            drawn = [f for f in case.findings if f.synthetic and isinstance(f.attributes.get("rendered"), dict)]
            if not drawn or not case.report:
                continue
            findings = _stripped(case.report.split("IMPRESSION:")[0], case)
            words = _words(findings, SHAPE_WORDS) | _words(findings, COLOURS)
            measured = {str(f.attributes.get(k)) for f in drawn for k in ("shape", "intensity")}
            assert words <= measured, (case.case_id, words, measured, case.report)
            seen += 1
    assert seen >= 10, seen


@settings(max_examples=60, deadline=None)
@given(st.tuples(*[st.integers(0, 255)] * 3))
def test_an_offered_colour_word_is_far_from_any_drawn_colour(rgb: tuple[int, int, int]) -> None:
    """For any drawn colour: the keyed word is the nearest (where one fits) and is shown; every word offered as wrong
    (not shown) is at least COLOUR_APART away and COLOUR_MARGIN farther than the keyed one, by this file's ΔE2000."""
    from medr2.vocab.appearance import COLOUR_APART, COLOUR_MARGIN, COLOURS, colour_shown, nearest_colour

    arr = np.asarray(rgb, float)
    key = nearest_colour(rgb)
    nearest = min(COLOURS, key=lambda w: delta_e(arr, w))
    assert key in (None, nearest)
    if key is not None:
        assert colour_shown(rgb, key)
    for word in COLOURS:
        if not colour_shown(rgb, word):
            assert delta_e(arr, word) >= max(COLOUR_APART, delta_e(arr, nearest) + COLOUR_MARGIN) - 1e-9
