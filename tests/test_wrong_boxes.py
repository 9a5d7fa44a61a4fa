"""Wrong boxes are wrong (issue #40, kind 6): every box shown as a wrong answer overlaps the truth by at most
``WRONG_BOX_MAX_IOU``, far below what scores correct.

A review found T8 "wrong" earlier boxes with IoU > 0.5 to the truth (a centred box mirrored onto itself) and the
misleading chain's wrong box overlapping the truth up to 0.81. Both now come from one function,
:func:`medr2.imaging.draw.wrong_box`: a property test over generated images and boxes, then every writer of a wrong
box (the misleading chain's turn in each box convention, every variant of a built bench that shows an earlier
step answered wrongly) checked through the scorer's own IoU.
"""

from __future__ import annotations

import json
import re

from hypothesis import given, strategies as st

from medr2 import BoxConvention
from medr2.imaging.draw import WRONG_BOX_MAX_IOU, iou, wrong_box
from medr2.run.prompts import wrong_answer
from medr2.scoring.boxes import parse_box, to_original_pixels
from medr2.scoring.scorer import BOX_CORRECT_IOU
from tests.run_fixtures import _item


@st.composite
def image_and_box(draw: st.DrawFn) -> tuple[float, float, tuple[float, float, float, float]]:
    w = draw(st.integers(4, 4000))
    h = draw(st.integers(4, 4000))
    x1 = draw(st.floats(0, w - 1, allow_nan=False))
    y1 = draw(st.floats(0, h - 1, allow_nan=False))
    x2 = draw(st.floats(x1 + 0.5, w, allow_nan=False))
    y2 = draw(st.floats(y1 + 0.5, h, allow_nan=False))
    return float(w), float(h), (x1, y1, x2, y2)


def test_a_wrong_box_scores_wrong_by_a_margin() -> None:
    assert WRONG_BOX_MAX_IOU < BOX_CORRECT_IOU / 2


@given(image_and_box())
def test_wrong_box_is_inside_the_image_and_overlaps_little(case) -> None:  # type: ignore[no-untyped-def]
    w, h, box = case
    got = wrong_box(box, w, h)
    assert got == wrong_box(box, w, h)  # deterministic
    x1, y1, x2, y2 = got
    assert 0 <= x1 < x2 <= w and 0 <= y1 < y2 <= h
    assert iou(got, box) <= WRONG_BOX_MAX_IOU


@st.composite
def pixel_box(draw: st.DrawFn) -> tuple[float, float, tuple[float, float, float, float]]:
    """A box of whole pixels, at least 4 on a side (what a bench holds; a prompt writes whole numbers)."""
    w = draw(st.integers(16, 4000))
    h = draw(st.integers(16, 4000))
    x1 = draw(st.integers(0, w - 4))
    y1 = draw(st.integers(0, h - 4))
    return float(w), float(h), (x1, y1, draw(st.integers(x1 + 4, w)), draw(st.integers(y1 + 4, h)))


@given(pixel_box(), st.sampled_from(["pixel", "unit", "thousand"]))
def test_misleading_chain_turn_is_a_wrong_box_in_every_convention(case, space) -> None:  # type: ignore[no-untyped-def]
    """``chain-misleading`` shows this text as the model's earlier answer: read back as the scorer reads a box,
    it is wrong."""
    w, h, box = case
    item = _item(case_id="c", image="images/x.png", image_sha256="0" * 64, image_width=int(w), image_height=int(h),
                 stage=2, task="s2.locate", form="box", question="Where?", answer="", chance=0.0,
                 answer_box=tuple(min(v, lim) for v, lim in zip(box, (int(w), int(h), int(w), int(h)), strict=True)))
    conv = BoxConvention(space=space)
    text = wrong_answer(item, conv)
    parsed = parse_box(text)
    assert parsed is not None, text
    shown = to_original_pixels(parsed, conv, int(w), int(h))
    assert item.answer_box is not None
    # the text writes rounded coordinates (unit space: 3 decimals): a hundredth of slack, far from 0.5
    assert iou(shown, item.answer_box) <= WRONG_BOX_MAX_IOU + 0.01


def test_every_variant_showing_a_wrong_earlier_box_shows_a_wrong_one(build_sample, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Every item of a bench built with every variant that has a context turn marked wrong whose question is a
    box item of its case, whatever variant made it: the box shown overlaps that step's true box by at most the
    bound."""
    from medr2.bench import load_bench
    from medr2.perturb.registry import declared_roles, text_codes

    # every text variant that misleads (what shows an answer; a visual variant draws, it does not answer)
    codes = [c for c in text_codes() if "misleads" in declared_roles(c)]
    assert codes
    sample_bench = load_bench(build_sample(tmp_path / "bench", n_cases=12, variants=codes, workers=1))
    truth = {(it.case_id, it.question): it.answer_box for it in sample_bench.items
             if it.variant == "clean" and it.form == "box"}
    checked = 0
    for it in sample_bench.items:
        for turn in it.context:
            if turn.correct or (it.case_id, turn.question) not in truth:
                continue
            if not re.fullmatch(r"\[[^\]]*\]", turn.answer.strip()):
                continue
            shown = tuple(float(v) for v in json.loads(turn.answer))
            true_box = truth[(it.case_id, turn.question)]
            assert true_box is not None
            assert iou(shown, true_box) <= WRONG_BOX_MAX_IOU, (it.item_id, it.variant, shown, true_box)
            checked += 1
    assert checked > 0, "the sample bench has no variant showing a wrong earlier box: the check checked nothing"
