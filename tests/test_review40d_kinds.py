"""Issue 40's kinds left by the fourth blind review (docs/reviews/review-2026-12-07d.md), as properties of built
benches, of the vocabulary and of generated orientations, never a list of reviewed items:

1. (kind 6) every misleading premise, whatever frames it (T3, T9, T10, V10's burnt-in impression), states something
   false of its case: "no abnormality" only of an image the one definition of normal
   (:func:`medr2.tasks.contract.abnormal_state`) calls abnormal, a stated finding only of one it calls normal, any
   other fact never the case's own value nor a label its image is compatible with;
2. (kind 3) no wrong option of a sequence question is a sequence the same image may also be: two sequences both
   true of some sequence the vocabulary knows (a sub-type of both, "T1 post-contrast" and "T1 fat-saturated" under a
   fat-saturated post-contrast T1; a phase beside a weighting) are never offered one beside the other;
3. (kind 3) an oblique slice is never offered an axis plane a reader may name it by (within
   :data:`medr2.sources.dicom.NEAR_PLANE_DEGREES` of its normal) as a wrong plane."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from medr2 import Bench, vocab as clinical
from medr2.bench import load_bench
from medr2.builder.pipeline import build_bench
from medr2.records import Case
from medr2.sources.dicom import AXIS_PLANES, NEAR_PLANE_DEGREES, OBLIQUE_DEGREES, plane_from_orientation, planes_near
from medr2.tasks.assemble import wrong_option_true
from medr2.tasks.contract import abnormal_state
from medr2.tasks.pools import case_compatible

PREMISE_VARIANTS = "T3,T9,T10,V10"


@pytest.fixture(scope="module", params=[13, 29])
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Bench:
    root: Path = tmp_path_factory.mktemp(f"premises_{request.param}") / "bench"
    try:
        build_bench("sample", root, seed=request.param, n_cases=40, variants=PREMISE_VARIANTS, workers=1)
    except Exception as e:  # noqa: BLE001  (the sample's optional backgrounds)
        pytest.skip(f"sample source not available: {e}")
    return load_bench(root)


def _sequence_labels() -> list[str]:
    return sorted(c.label for c in clinical.vocabulary() if c.kind == "sequence")


# --------------------------------------------------------------------------- 1. premises false of their case
def test_every_premise_states_something_false_of_its_case(built: Bench) -> None:
    checked: dict[str, int] = {}
    for it in built.items:
        p = it.perturbation or {}
        if it.variant == "clean" or "fact" not in p or "stated" not in p:
            continue
        case = built.case(it.case_id)
        key, stated = str(p["fact"]), str(p["stated"])
        if key == "abnormal":
            state = abnormal_state(case)
            assert state is not None, it.item_id
            # "none" denies every abnormality: false only of an abnormal image; a finding: only of a normal one
            assert state is (stated == "none"), (it.item_id, it.variant, stated, case.diagnosis)
        else:
            true = [v for v in (getattr(case, key, None), *case_compatible(case)) if isinstance(v, str) and v]
            assert not any(clinical.conflicts(stated, t) or clinical.conflicts(t, stated) for t in true), \
                (it.item_id, it.variant, key, stated, true)
        checked[it.variant.split("-")[0]] = checked.get(it.variant.split("-")[0], 0) + 1
    assert {"T3", "T10"} <= set(checked), checked  # the premise variants ran and were checked


def test_abnormality_premises_on_normal_images_state_a_finding(built: Bench) -> None:
    """A normal image (its diagnosis any spelling of normal: "no abnormality", "normal", ...) gets the opposite
    premise, a finding stated, where it gets one at all."""
    normal = {c.case_id for c in built.cases if abnormal_state(c) is False}
    stated = [str(it.perturbation["stated"]) for it in built.items
              if it.case_id in normal and (it.perturbation or {}).get("fact") == "abnormal"]
    assert normal and "none" not in stated


# --------------------------------------------------------------------------- 2. sequences one image may be
def _common_subtype(a: str, b: str) -> str | None:
    v = clinical.vocabulary()
    return next((c for c in _sequence_labels() if v.is_a(c, a) and v.is_a(c, b)), None)


def test_two_sequences_one_image_may_be_are_never_wrong_beside_each_other() -> None:
    """Every pair of the vocabulary's sequences with a common sub-type (both true of one image) conflicts, either
    way round: neither is a wrong option beside the other."""
    seen = 0
    for a, b in itertools.combinations(_sequence_labels(), 2):
        if _common_subtype(a, b) is not None:
            assert clinical.conflicts(a, b) and clinical.conflicts(b, a), (a, b)
            seen += 1
    assert seen


def test_a_phase_or_window_the_truth_leaves_unstated_is_not_ruled_out() -> None:
    """A sequence that combines two axes (a weighting and a contrast phase) is compatible with every value of
    either axis related to its own (a sub-type of its weighting: the fat-saturated T1 beside the post-contrast T1),
    and with any value of an axis the other leaves unstated; two values of one axis that are not related exclude
    each other."""
    v = clinical.vocabulary()
    labels = _sequence_labels()
    combined = [c for c in v if c.kind == "sequence" and len(c.is_a) >= 2]
    assert combined
    for c in combined:
        for parent_id in c.is_a:
            parent = v.get(parent_id)
            assert parent is not None
            for x in labels:
                if x != c.label and v.is_a(x, parent.label) and not v.is_a(c.label, x):
                    # x is a value of one of c's axes, at or below c's own value there: both may hold
                    assert v.sequences_compatible(x, c.label), (x, c.label)
                    assert clinical.conflicts(x, c.label), (x, c.label)


@given(st.sampled_from(_sequence_labels()), st.sampled_from(_sequence_labels()))
@settings(max_examples=300, deadline=None)
def test_sequence_compatibility_is_symmetric_and_contains_is_a(a: str, b: str) -> None:
    v = clinical.vocabulary()
    assert v.sequences_compatible(a, b) == v.sequences_compatible(b, a)
    if v.is_a(a, b):
        assert v.sequences_compatible(a, b)


def test_clean_sequence_options_are_exclusive_of_the_key(built: Bench) -> None:
    for it in built.items:
        if it.variant != "clean" or it.task != "s1.sequence" or it.form != "mcq":
            continue
        key = it.options[ord(it.answer) - ord("A")]
        for o in it.options:
            if o != key:
                assert clinical.vocabulary().sequences_compatible(o, key) is not True, (it.item_id, o, key)


# --------------------------------------------------------------------------- 3. oblique planes
unit = st.tuples(*[st.floats(-1, 1, allow_nan=False)] * 3).filter(lambda t: float(np.linalg.norm(t)) > 0.2)


@given(unit, unit)
@settings(max_examples=300, deadline=None)
def test_an_oblique_slice_names_the_axis_planes_within_reach(n: tuple[float, float, float],
                                                             r: tuple[float, float, float]) -> None:
    normal = np.asarray(n) / np.linalg.norm(n)
    row = np.cross(normal, r)
    if np.linalg.norm(row) < 1e-3:
        return
    row /= np.linalg.norm(row)
    col = np.cross(normal, row)
    iop = [*row, *col]
    angles = {AXIS_PLANES[i]: float(np.degrees(np.arccos(min(1.0, abs(normal[i]))))) for i in range(3)}
    near = planes_near(iop)
    if plane_from_orientation(iop) != "oblique":
        assert near == [] and min(angles.values()) <= OBLIQUE_DEGREES + 1e-6
        return
    want = {p for p, a in angles.items() if a <= NEAR_PLANE_DEGREES - 1e-6}
    assert want <= set(near) <= {p for p, a in angles.items() if a <= NEAR_PLANE_DEGREES + 1e-6}
    assert near == sorted(near, key=lambda p: angles[p])
    case = Case(case_id="c", image="i.png", image_sha256="0" * 64, width=8, height=8, modality="MRI",
                plane="oblique", source="test", license="CC0", patient_id="p", split="test",
                meta={"near_planes": near})
    for p in near:  # never a wrong plane beside "oblique"
        assert wrong_option_true(case, ["oblique", p], ["oblique"]) is not None, p


# --------------------------------------------------------------------------- 4. a composed report's impression
def test_a_composed_impression_signs_no_histology_from_one_image(built: Bench) -> None:
    """(kind 4) The sample's report names its diagnosis as the image supports it ("appearance compatible with") and
    names every diagnosis the image cannot rule out (the case's compatible mimics) as the differential; never the
    diagnosis alone as a signed histology."""
    from medr2.vocab.differential import compatible_mimics

    seen = 0
    for case in built.cases:
        if not case.report or not case.findings or not case.diagnosis:
            continue
        impression = case.report.split("IMPRESSION:", 1)[1].strip()
        assert impression.lower().startswith(f"appearance compatible with {case.diagnosis.lower()}"), impression
        for m in compatible_mimics(case):
            if m.lower() != case.diagnosis.lower():
                assert m.lower() in impression.lower(), (case.case_id, m, impression)
        seen += 1
    assert seen
