"""Quality of the visual variants V1–V9 on real images (skimage retina, pydicom CT and chest CR)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import ndimage

from medr2 import Item
from medr2.images import load_image
from medr2.imaging.degrade import DEGRADATIONS, degrade, psnr
from medr2.imaging.draw import box_mask, cue_color, cue_color_mask, iou, line_width, mask_bbox
from medr2.models.base import BoxConvention
from medr2.perturb.context import CaseIndex, CaseRef, PerturbContext
from medr2.perturb.engine import generate_variants
from medr2.perturb.facts import FactPools, swap_facts
from medr2.perturb.inpaint import ring_mask
from medr2.perturb.registry import load_perturbations
from medr2.perturb.visual import OtherCaseSameModality, removal_region, tissue_mask
from medr2.records import letter_index
from medr2.run.prompts import question_text
from medr2.tasks.contract import abnormal_state

sys.path.insert(0, str(Path(__file__).parent))
from perturb_fixtures import Fixture, build_fixture  # noqa: E402


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    return build_fixture(tmp_path_factory.mktemp("bench"))


@pytest.fixture(scope="module")
def variants(fx: Fixture) -> list[Item]:
    items, _ = generate_variants(fx.root, fx.cases, fx.items, "V1,V2,V3,V4,V5,V6,V7,V8,V9", 0, fx.images, workers=1)
    return items


def _img(fx: Fixture, it: Item) -> np.ndarray:
    assert it.image is not None
    return load_image(fx.images.path(it.image))


def _of(variants: list[Item], prefix: str, task: str | None = None) -> list[Item]:
    return [v for v in variants if v.variant.startswith(prefix) and (task is None or v.task == task)]


def _gray(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64) if a.ndim == 2 else a.astype(np.float64).mean(axis=2)


def test_v4_fill_matches_surrounding_tissue_and_leaves_the_rest(fx: Fixture, variants: list[Item]) -> None:
    v4 = _of(variants, "V4", "s3.abnormal")
    assert {v.case_id for v in v4} == {"fundus_a", "fundus_b", "ct_a", "xray_a"}
    ctx = PerturbContext.build(fx.root, fx.cases, fx.items, 0, fx.images)
    for v in v4:
        case = next(c for c in fx.cases if c.case_id == v.case_id)
        before = load_image(fx.images.path(case.image))
        after = _img(fx, v)
        region = removal_region(case, ctx, int(v.perturbation["dilate_px"]), before)
        lesion = fx.masks[case.case_id]
        ring = ring_mask(region)
        # outside the removed region: byte-identical
        assert np.array_equal(after[~region], before[~region])
        g_after, g_before = _gray(after), _gray(before)
        ring_mean, ring_std = g_before[ring].mean(), g_before[ring].std()
        fill = g_after[region]
        lesion_mean = g_before[lesion].mean()
        # the fill looks like the surroundings: mean within a third of the ring's spread (or 6 gray levels) ...
        assert abs(fill.mean() - ring_mean) <= max(6.0, 0.35 * ring_std), case.case_id
        # ... and much nearer to the ring than to the lesion it replaced
        assert abs(fill.mean() - ring_mean) < 0.25 * abs(lesion_mean - ring_mean), case.case_id
        # not a flat patch: it keeps texture comparable to the surrounding tissue's fine grain
        hp = g_before - ndimage.gaussian_filter(g_before, 2.0)
        grain = hp[ring & ~ndimage.binary_dilation(region, iterations=3)].std()
        fill_hp = (g_after - ndimage.gaussian_filter(g_after, 2.0))[ndimage.binary_erosion(region, iterations=3)]
        assert fill_hp.std() >= 0.5 * grain, case.case_id
        assert fill.std() > 0.5, case.case_id
        # and it is close to the real tissue under the painted lesion
        truth = _gray(fx.clean[case.case_id])[region]
        assert abs(fill.mean() - truth.mean()) < 0.25 * abs(lesion_mean - truth.mean()) + 3.0


def test_v4_counterfactual_answers(variants: list[Item]) -> None:
    v4 = _of(variants, "V4")
    for v in v4:
        assert v.meta["counterfactual"] is True
        if v.task == "s3.abnormal":
            assert v.answer == ("no" if v.meta["parent_answer"] == "yes" else "yes")
        if v.task == "s3.count":
            assert v.options[letter_index(v.answer)] == "0"
        if v.task == "s3.absent_finding":
            assert v.answer == "no"
    assert {v.task for v in v4} == {"s3.abnormal", "s3.count", "s3.absent_finding"}


def _around(box: tuple[float, float, float, float], lw: float, img: np.ndarray) -> tuple[float, float, float, float]:
    """``box`` grown by a cue's line width (a mark is drawn just outside what it marks), clipped to the image."""
    h, w = img.shape[:2]
    return (max(0.0, box[0] - lw), max(0.0, box[1] - lw), min(float(w), box[2] + lw), min(float(h), box[3] + lw))


def test_v5_cue_overlaps_true_region(fx: Fixture, variants: list[Item]) -> None:
    v5 = _of(variants, "V5")
    assert v5
    for v in v5:
        case = next(c for c in fx.cases if c.case_id == v.case_id)
        f = case.findings[v.perturbation["finding"]]
        assert v.cue is not None
        img = _img(fx, v)
        painted = cue_color_mask(img, tuple(v.cue.style["color"]))
        drawn = mask_bbox(painted)
        assert drawn is not None
        assert iou(drawn, _around(f.box, v.cue.style["line_width"], img)) >= 0.9
        assert not (painted & box_mask(f.box, img.shape[1], img.shape[0])).any()  # the mark hides nothing it marks
        assert v.cue is not None and v.cue.drawn and v.cue.box == f.box
        assert "marked" in v.question


def test_v6_decoy_on_tissue_away_from_lesions_same_style(fx: Fixture, variants: list[Item]) -> None:
    v6 = _of(variants, "V6")
    assert {v.case_id for v in v6} == {"fundus_a", "fundus_b", "ct_a", "xray_a"}
    v5_style = {v.case_id: v.cue.style for v in _of(variants, "V5") if v.cue is not None}
    for v in v6:
        case = next(c for c in fx.cases if c.case_id == v.case_id)
        img = _img(fx, v)
        assert v.cue is not None
        drawn = mask_bbox(cue_color_mask(img, tuple(v.cue.style["color"])))
        assert drawn is not None
        assert iou(drawn, _around(v.cue.box, v.cue.style["line_width"], img)) >= 0.9
        for f in case.findings:
            assert iou(v.cue.box, f.box) == 0.0
            assert iou(drawn, f.box) == 0.0
        # on tissue: the decoy area is as bright as typical tissue (its lower quartile, the placement's floor),
        # not a dim pocket, and brighter than the background
        clean = load_image(fx.images.path(case.image))
        g = _gray(clean)
        tissue = tissue_mask(clean)
        x1, y1, x2, y2 = (round(c) for c in v.cue.box)
        inside = g[box_mask(v.cue.box, case.width, case.height)]
        assert inside.mean() >= np.percentile(g[tissue], 25)
        background = g[~tissue]
        if background.size:
            assert inside.mean() > background.mean() + 10
        assert tissue_mask(clean)[y1:y2, x1:x2].mean() >= 0.97
        # same drawing style as V5: colour, line width, kind
        assert v.cue.style == v5_style[v.case_id]
        assert v.cue.style["color"] == list(cue_color(clean))  # the one colour rule: far from the image's colours
        assert v.cue.style["line_width"] == line_width(case.width, case.height)
        # the truth for the decoy region is 'nothing'; the lure is the lesion's label
        if v.form == "mcq":
            assert v.options[letter_index(v.answer)].startswith("No finding")
            assert v.options[letter_index(v.lure or "A")] == case.findings[0].label
        else:
            assert (v.answer, v.lure) == ("no", "yes")


def test_v7_coordinates_only(fx: Fixture, variants: list[Item]) -> None:
    v7 = _of(variants, "V7")
    assert v7
    for v in v7:
        assert v.cue is not None and v.cue.kind == "coords" and not v.cue.drawn
        assert not cue_color_mask(_img(fx, v)).any()
        # the region is stated once: the prompt's region line (in the model's box convention), never the question
        prompt = question_text(v, BoxConvention())
        assert "region of interest" in v.question and not re.search(r"\[\d+, \d+, \d+, \d+\]", v.question)
        assert len(re.findall(r"\[\d+(?:\.\d+)?, \d+(?:\.\d+)?, \d+(?:\.\d+)?, \d+(?:\.\d+)?\]", prompt)) == 1, prompt


def test_v7_turns_a_drawn_cue_into_coordinates(fx: Fixture, variants: list[Item]) -> None:
    cued = [v for v in _of(variants, "V7") if v.task == "s2.cued_structure"]
    assert cued
    for v in cued:
        case = next(c for c in fx.cases if c.case_id == v.case_id)
        assert v.image == case.image  # the undrawn base image
        assert "outlined" not in v.question and "Nothing is drawn" in v.question


def test_v8_clips_and_severities_are_ordered(fx: Fixture, variants: list[Item]) -> None:
    from skimage.metrics import structural_similarity

    # every kind at three severities on a real image, measured against the clean image
    arr = load_image(fx.images.path(fx.cases[0].image))
    for kind in DEGRADATIONS:
        scores = []
        for sev in (1, 2, 3):
            out = degrade(arr, kind, sev, np.random.default_rng(0))
            g0, g1 = _gray(arr), _gray(out)
            scores.append((psnr(arr, out), structural_similarity(g0, g1, data_range=255.0)))
        assert scores[0][0] > scores[1][0] > scores[2][0], kind
        assert scores[0][1] >= scores[1][1] >= scores[2][1], kind
    # the variants written to the bench keep the same order per image
    v8 = _of(variants, "V8", "s1.modality")
    by_case: dict[str, dict[int, Item]] = {}
    for v in v8:
        by_case.setdefault(v.case_id, {})[int(v.perturbation["severity"])] = v
    for cid, sev in by_case.items():
        case = next(c for c in fx.cases if c.case_id == cid)
        clean = load_image(fx.images.path(case.image))
        p = [psnr(clean, _img(fx, sev[s])) for s in (1, 2, 3)]
        assert p[0] > p[1] > p[2], cid
    assert not _of(variants, "V8", "s1.artefact")  # the degradation would change that answer


def test_v8_noise_clips_instead_of_wrapping() -> None:
    bright = np.full((64, 64), 250, np.uint8)
    dark = np.full((64, 64), 4, np.uint8)
    for sev in (1, 2, 3):
        hi = degrade(bright, "noise", sev, np.random.default_rng(1))
        lo = degrade(dark, "noise", sev, np.random.default_rng(1))
        # wrap-around would turn 250 + noise into small values and 4 - noise into large ones
        assert hi.min() > 100 and lo.max() < 150
        assert (hi == 255).any() and (lo == 0).any()


def test_v2_v3_never_the_same_case(fx: Fixture, variants: list[Item]) -> None:
    cases = {c.case_id: c for c in fx.cases}
    v2, v3 = _of(variants, "V2"), _of(variants, "V3")
    assert v2 and v3
    for v in v2 + v3:
        other = cases[v.perturbation["other_case"]]
        assert other.case_id != v.case_id
        assert other.image_sha256 != cases[v.case_id].image_sha256
        assert v.image_sha256 != cases[v.case_id].image_sha256
        assert (v.image_width, v.image_height) == (cases[v.case_id].width, cases[v.case_id].height)
    for v in v2:
        assert cases[v.perturbation["other_case"]].modality == cases[v.case_id].modality
    for v in v3:
        assert cases[v.perturbation["other_case"]].modality != cases[v.case_id].modality
    # the modality question on V3 is answered by the shown image's modality, the parent's answer is the lure
    for v in _of(variants, "V3", "s1.modality"):
        assert v.meta["scoring"] == "exact"
        assert v.options[letter_index(v.answer)] == cases[v.perturbation["other_case"]].modality
        assert v.lure == "A"
    parents = {it.item_id: it for it in fx.items}
    boxes = _of(variants, "V2", "s3.lesion_box") + _of(variants, "V3", "s3.lesion_box")
    assert boxes
    for v in boxes:  # no exact answer for another case's image: an image-sensitivity probe
        assert v.meta["scoring"] == "probe" and v.answer_box == parents[v.parent_id or ""].answer_box


def test_v2_v3_abnormal_answer_is_the_shown_images(fx: Fixture, variants: list[Item]) -> None:
    """'Is this image abnormal?' asked of another case's image: exact where both states are known, the opposite
    (the parent's answer the lure) where they differ; where they agree no variant is made (it removes no evidence)."""
    cases = {c.case_id: c for c in fx.cases}
    parents = {it.item_id: it for it in fx.items}
    seen = {"flipped": 0}
    for v in _of(variants, "V2", "s3.abnormal") + _of(variants, "V3", "s3.abnormal"):
        mine, theirs = abnormal_state(cases[v.case_id]), abnormal_state(cases[v.perturbation["other_case"]])
        parent = parents[v.parent_id or ""]
        if mine is None or theirs is None:
            assert v.meta["scoring"] == "probe" and v.answer == parent.answer
        else:  # where both states agree the shown image gives the parent's answer: no such variant (KEY_HOLDS_SHOWN)
            assert mine != theirs, v.item_id
            seen["flipped"] += 1
            assert v.meta["scoring"] == "exact" and {v.answer, parent.answer} == {"yes", "no"}
            assert v.lure == parent.answer
    assert seen["flipped"] > 0, seen


def test_v2_prefers_the_drawn_case_that_differs_most(fx: Fixture) -> None:
    """Of the cases it draws, V2 shows the one that differs from the real case in the most known facts
    (equal facts and unknown ones do not count), so that a reader of the image has another answer to give."""
    case = fx.cases[0].model_copy(update={"case_id": "a", "patient_id": "p0"})
    mine = swap_facts(case)
    known = sum(v is not None for v in mine)
    assert known >= 2

    def ref(case_id: str, facts: tuple[str | None, ...]) -> CaseRef:
        return CaseRef(case_id, f"patient-{case_id}", f"sha-{case_id}", case.modality, facts, case.split)

    alike = [ref(f"b{i}", mine) for i in range(3)]
    unknown = ref("c", (None,) * len(mine))
    one = ref("d", (None if mine[0] is None else "other", *mine[1:]))
    other = ref("e", tuple(None if v is None else f"not {v}" for v in mine))
    me = CaseRef.of(case)
    assert [me.differences(r) for r in (*alike, unknown, other)] == [0, 0, 0, 0, known]
    index = CaseIndex()
    for r in (*alike, unknown, one, other):
        index.add_ref(r)
    ctx = PerturbContext(fx.root, fx.images, 0, {}, {}, FactPools([]), index)
    for seed in range(5):
        ctx.seed = seed
        ctx.memo.clear()
        assert OtherCaseSameModality()._pick(case, ctx).case_id == "e"


def test_v1_blank_is_uniform_probe(fx: Fixture, variants: list[Item]) -> None:
    for v in _of(variants, "V1"):
        img = _img(fx, v)
        if v.cue is None:
            assert img.min() == img.max() if img.ndim == 2 else (img == img[0, 0]).all()
        assert v.meta["scoring"] == "probe" and v.meta["parent_answer"] == v.answer


def test_v9_flip_mirrors_image_boxes_and_laterality(fx: Fixture, variants: list[Item]) -> None:
    v9 = _of(variants, "V9")
    by_task = {(v.case_id, v.task, v.question): v for v in v9}
    parents = {it.item_id: it for it in fx.items}
    for v in v9:
        parent = parents[v.parent_id or ""]
        if v.cue is None:
            assert np.array_equal(_img(fx, v), _img(fx, parent)[:, ::-1])
        if v.task == "s3.location":
            assert parent.answer_text in ("left", "right")
            assert v.answer_text == {"left": "right", "right": "left"}[parent.answer_text]
            assert v.meta["answer_preserving"] is False
        if v.task == "s3.lesion_box":
            assert v.answer_box is not None and parent.answer_box is not None
            w = parent.image_width or 0
            assert v.answer_box == (w - parent.answer_box[2], parent.answer_box[1], w - parent.answer_box[0],
                                    parent.answer_box[3])
        if v.task == "s1.orientation":
            assert v.answer == "yes" and parent.answer == "no"
        if v.task == "s1.modality":
            assert v.answer == parent.answer and v.meta["answer_preserving"] is True
        if v.task == "s2.cued_structure":
            assert v.cue is not None and parent.cue is not None
            img = _img(fx, v)
            drawn = mask_bbox(cue_color_mask(img, tuple(v.cue.style["color"])))
            assert drawn is not None and iou(drawn, _around(v.cue.box, v.cue.style["line_width"], img)) >= 0.9
    assert not [v for v in v9 if v.task == "s4.report"]  # laterality in free text: not exact, skipped
    assert by_task


def test_all_codes_registered() -> None:
    assert sorted(load_perturbations()) == sorted([*(f"T{i}" for i in range(1, 11)), "T12",
                                                   *(f"V{i}" for i in range(1, 16))])
