"""Issue 40 kind 6 of the third blind review (docs/reviews/review-2026-12-07c.md): a variant that shows another case's
image (V2 same modality, V3 another modality) removes the evidence its parent's question needs, so the parent's key
is never what the shown case's own truth answers. Checked as properties of built benches (the sample at two seeds
and the ``buildtest`` fixture source), for every V2/V3 item, never over a list of reviewed items:

- by the one mechanism (:func:`medr2.perturb.shown.shown_answer`, the re-keying's): the parent's key does not hold
  for the shown case; an exact item keys the shown case's answer, a probe keeps the parent's;
- by the shown case's own fields, independently of that mechanism, for the reviewed question kinds (quality,
  artefact, acquisition facts, the outlined structure, abnormal or not);
- every skip is counted with its reason in ``manifest.json``;
- the mechanism never says a clean item's key is false of its own case (it reads the truth the generator did).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from medr2 import Bench, Case, Item
from medr2.bench import load_bench
from medr2.builder.pipeline import build_bench
from medr2.imaging.draw import iou
from medr2.perturb.facts import norm
from medr2.perturb.shown import KEY_HOLDS_SHOWN, KEY_UNKNOWN_SHOWN, shown_answer
from medr2.records import letter_index
from medr2.tasks import vocab
from medr2.tasks.contract import abnormal_state, readable, task_requires
from tests import build_fixtures  # noqa: F401  (registers the "buildtest" source)

FOREIGN = ("V2", "V3")


@pytest.fixture(scope="module", params=["sample-6262", "sample-5151", "buildtest"])
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Bench:
    tmp = tmp_path_factory.mktemp(request.param.replace("-", "_"))
    if request.param == "buildtest":
        build_bench("buildtest", tmp / "bench", seed=3, n_cases=30, variants="V2,V3", workers=1)
    else:
        try:
            build_bench("sample", tmp / "bench", seed=int(request.param.split("-")[1]), n_cases=40,
                        variants="V2,V3", workers=1)
        except Exception as e:  # noqa: BLE001  (the sample's optional backgrounds)
            pytest.skip(f"sample source not available: {e}")
    return load_bench(tmp / "bench")


def _key(it: Item) -> str:
    return it.options[letter_index(it.answer)] if it.form == "mcq" else it.answer


def _foreign(built: Bench) -> list[tuple[Item, Item, Case, Case]]:
    """(variant, parent, parent's case, shown case) of every V2/V3 item."""
    by_id = {it.item_id: it for it in built.items}
    out = []
    for v in built.items:
        if v.variant in FOREIGN:
            parent = by_id[v.parent_id or ""]
            out.append((v, parent, built.case(v.case_id), built.case(str(v.perturbation["other_case"]))))
    return out


def test_the_parents_key_is_never_the_shown_cases_answer(built: Bench) -> None:
    made = _foreign(built)
    assert {v.variant for v, *_ in made} == set(FOREIGN)
    for v, parent, case, other in made:
        shown = shown_answer(parent, case, other, np.random.default_rng(v.seed))
        assert shown.holds is False, (v.variant, v.task, v.item_id, other.case_id)
        if v.meta["scoring"] == "exact":
            assert shown.exact is not None and (v.options, v.answer) == tuple(shown.exact)
            assert norm(_key(v)) != norm(_key(parent)) if v.form == "mcq" else v.answer != parent.answer
            assert v.lure == parent.answer
        else:
            assert shown.exact is None and v.answer == parent.answer and v.meta["parent_answer"] == parent.answer


def test_reviewed_kinds_by_the_shown_cases_own_fields(built: Bench) -> None:
    """Independently of the mechanism: the shown case's own value of what the question asks is not the parent's key
    (quality, artefact, the acquisition facts), no structure of the key's name lies under the outline, and an
    "abnormal?" question is asked only of an image whose state differs, or of a non-diagnostic one."""
    fields = {"s1.quality": "quality", "s1.artefact": "artefact", "s1.modality": "modality", "s1.plane": "plane",
              "s1.sequence": "sequence", "s1.region": "body_region"}
    checked: dict[str, int] = {}
    for v, parent, case, other in _foreign(built):
        if "readable" in task_requires(v.task) and not readable(other):
            continue  # a non-diagnostic image shows none of what the question reads (the contract's clause)
        if v.task in fields:
            value = getattr(other, fields[v.task])
            if value:
                assert not vocab.same(str(value), _key(parent)), (v.task, value, _key(parent))
        elif v.task == "s2.cued_structure" and parent.cue is not None:
            under = [s for s in other.structures if vocab.same(s.name, _key(parent)) and iou(s.box, parent.cue.box) > 0]
            assert not under, (v.item_id, other.case_id, _key(parent))
        elif v.task == "s3.abnormal":
            assert abnormal_state(other) is None or abnormal_state(other) != abnormal_state(case), v.item_id
        else:
            continue
        checked[v.task] = checked.get(v.task, 0) + 1
    assert checked  # the fixture benches ask at least one of these of another image


def test_skips_are_counted_with_their_reason(built: Bench) -> None:
    """Every clean item is made into a V2/V3 item or counted as skipped with its reason, once per code; a probe whose
    key the shown case's truth gives and one whose shown answer is not known are counted apart."""
    skipped = json.loads((Path(built.root) / "manifest.json").read_text("utf-8"))["variants_skipped"]
    reasons = {r for code in FOREIGN for r in skipped.get(code, {})}
    assert KEY_HOLDS_SHOWN in reasons, skipped.get("V2")
    clean = [it for it in built.items if it.variant == "clean"]
    for code in FOREIGN:
        made = sum(1 for v, *_ in _foreign(built) if v.variant == code)
        assert made + sum(skipped.get(code, {}).values()) == len(clean) > 0, (code, skipped.get(code))
    manifest = json.loads((Path(built.root) / "manifest.json").read_text("utf-8"))
    if manifest["build"]["source"] == "sample":  # cases whose answer no rule decides exist there
        assert KEY_UNKNOWN_SHOWN in reasons


def test_a_clean_key_is_never_false_of_its_own_case(built: Bench) -> None:
    """The rules read the truth the generators read: asked of the case it was made from, a clean item's key holds or
    is unknown, never false."""
    clean = [it for it in built.items if it.variant == "clean" and it.image is not None and it.form != "text"]
    assert clean
    for it in clean:
        case = built.case(it.case_id)
        assert shown_answer(it, case, case, None).holds is not False, (it.task, it.item_id, it.question)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["good", "usable", "reject"]), st.sampled_from(["good", "usable", "reject"]),
       st.sampled_from([None, "none", "noise", "blur", "motion"]))
def test_quality_and_artefact_hold_exactly_where_the_values_agree(parent_q: str, shown_q: str,
                                                                   artefact: str | None) -> None:
    """s1.quality / s1.artefact asked of another image: the key holds where the shown case states the key's value,
    is false where it states another, unknown where it states none."""
    case = Case(case_id="a", patient_id="p", source="t", license="CC0-1.0", image="a.png", image_sha256="a" * 64,
                width=8, height=8, modality="CT", quality=parent_q, artefact="none")
    other = case.model_copy(update={"case_id": "b", "quality": shown_q, "artefact": artefact})
    options = ["good", "usable", "reject"]
    q = Item(item_id="x" * 16, case_id="a", stage=1, task="s1.quality", form="mcq", question="Quality?",
             options=options, answer="ABC"[options.index(parent_q)], chance=1 / 3, image="a.png",
             template_id="s1.quality/t1", split="train", source="t", license="CC0-1.0")
    assert shown_answer(q, case, other, None).holds is (parent_q == shown_q)
    a = q.model_copy(update={"task": "s1.artefact", "options": ["none", "noise", "blur", "motion"], "answer": "A"})
    assert shown_answer(a, case, other, None).holds is (None if artefact is None else artefact == "none")
