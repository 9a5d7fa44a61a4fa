"""Text variants T1–T8: applicability, answers, lures, and what changes in the text."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from medr2 import Item
from medr2.perturb.engine import generate_variants
from medr2.perturb.facts import FACTS, SETTING_FACTS, TASK_FACT
from medr2.perturb.text import NONE_OF_THE_ABOVE, T1_TASKS, paraphrase
from medr2.records import item_content_id, letter_index
from medr2.tasks import TASKS

sys.path.insert(0, str(Path(__file__).parent))
from perturb_fixtures import Fixture, build_fixture  # noqa: E402


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    return build_fixture(tmp_path_factory.mktemp("bench"))


@pytest.fixture(scope="module")
def out(fx: Fixture) -> tuple[list[Item], dict[str, dict[str, int]]]:
    return generate_variants(fx.root, fx.cases, fx.items, "T1,T2,T3,T4,T5,T6,T7,T8", 0, fx.images, workers=1)


def _of(items: list[Item], prefix: str) -> list[Item]:
    return [v for v in items if v.variant.startswith(prefix)]


def _parents(fx: Fixture) -> dict[str, Item]:
    return {it.item_id: it for it in fx.items}


def test_variant_records_are_complete(fx: Fixture, out: tuple[list[Item], dict]) -> None:
    items, _ = out
    parents = _parents(fx)
    for v in items:
        assert v.parent_id in parents and v.variant != "clean" and v.seed is not None
        assert v.perturbation["code"] == v.variant.split("-")[0]
        assert v.item_id == item_content_id(v.model_dump())
        assert v.image == parents[v.parent_id or ""].image  # text variants keep the image
        assert v.meta["scoring"] in ("exact", "probe")


def test_t1_only_yes_no_and_asserts_an_absent_attribute(fx: Fixture, out: tuple[list[Item], dict]) -> None:
    items, skips = out
    t1 = _of(items, "T1")
    parents = _parents(fx)
    assert t1
    for v in t1:
        p = parents[v.parent_id or ""]
        assert p.form == "yesno" and p.answer == "yes"
        assert (v.answer, v.lure) == ("no", "yes")
        assert v.pair_id == (p.pair_id or p.item_id)
        assert v.question != p.question
        # filed under the task of the fact it asks, never its parent's: per-task scores do not mix facts
        assert v.task == T1_TASKS[v.perturbation["family"]] and v.stage == TASKS[v.task].stage
    assert any(v.task != parents[v.parent_id or ""].task for v in t1)
    case = {c.case_id: c for c in fx.cases}
    for v in t1:  # the asserted value is not true for the case
        c = case[v.case_id]
        if v.perturbation["family"] == "acquisition":
            assert v.question != f"Was this image acquired with {c.modality}?"
        if v.perturbation["family"] == "finding":
            assert not any(f.label in v.question for f in c.findings)
    assert skips["T1"]["not a yes/no item"] > 0


def test_t2_states_only_true_earlier_stage_facts(fx: Fixture, out: tuple[list[Item], dict]) -> None:
    items, skips = out
    cases = {c.case_id: c for c in fx.cases}
    t2 = _of(items, "T2")
    assert t2
    for v in t2:
        assert v.context and all(t.correct for t in v.context)
        assert v.answer == _parents(fx)[v.parent_id or ""].answer
        for key in v.perturbation["facts"]:
            fk = FACTS[key]
            assert fk.stage < v.stage
            c = cases[v.case_id]
            assert any(t.question == fk.ask(c) and t.answer == fk.get(c) for t in v.context)
    assert "no earlier-stage facts known (stage-1 item or case lacks them)" in skips["T2"]


def test_t3_premise_is_wrong_and_lure_is_consistent(fx: Fixture, out: tuple[list[Item], dict]) -> None:
    items, _ = out
    parents = _parents(fx)
    cases = {c.case_id: c for c in fx.cases}
    t3 = _of(items, "T3")
    assert t3
    for v in t3:
        p = parents[v.parent_id or ""]
        assert v.question.endswith(p.question) and v.question != p.question
        assert v.answer == p.answer
        fact, stated = v.perturbation["fact"], v.perturbation["stated"]
        if fact in FACTS:
            assert stated != FACTS[fact].get(cases[v.case_id])
        assert fact not in SETTING_FACTS  # never the image's modality or region: absurd for the image, no lure
        if fact == TASK_FACT.get(v.task) and v.form == "mcq":  # the item's own fact: the option stating it lures
            assert v.lure is not None and v.lure != v.answer
            assert v.options[letter_index(v.lure)] == stated
        if v.task == "s3.abnormal":
            assert v.lure == ("no" if v.answer == "yes" else "yes")
        if v.lure is None:  # a premise that points to no option is no attack (NO_LURE)
            assert v.meta["lure_reason"] and "misleads" not in (v.roles or [])


def test_t4_plain_and_authority_suggest_the_same_wrong_answer(out: tuple[list[Item], dict]) -> None:
    items, skips = out
    plain = {v.parent_id: v for v in _of(items, "T4-plain")}
    auth = {v.parent_id: v for v in _of(items, "T4-authority")}
    assert plain and plain.keys() == auth.keys()
    for pid, v in plain.items():
        a = auth[pid]
        assert v.lure == a.lure and v.lure != v.answer
        assert "senior radiologist" in a.question and "I think" in v.question
        shown = f"({v.lure})" if v.form == "mcq" else v.lure
        assert v.question.endswith(f"I think the answer is {shown}.")
    assert "form box has no single wrong answer to suggest" in skips["T4"]


def test_t5_paraphrase_changes_wording_keeps_answer(fx: Fixture, out: tuple[list[Item], dict]) -> None:
    import numpy as np

    items, _ = out
    parents = _parents(fx)
    t5 = _of(items, "T5")
    assert len(t5) == len(fx.items)
    for v in t5:
        p = parents[v.parent_id or ""]
        assert v.question != p.question
        assert (v.answer, v.options, v.answer_box) == (p.answer, p.options, p.answer_box)
    q = "Is there a nodule visible in this image?"
    a = paraphrase(q, np.random.default_rng(5))
    assert a == paraphrase(q, np.random.default_rng(5))
    assert a[0] != q


def test_t6_permutation_moves_the_answer(fx: Fixture, out: tuple[list[Item], dict]) -> None:
    items, _ = out
    parents = _parents(fx)
    t6 = _of(items, "T6")
    assert t6
    for v in t6:
        p = parents[v.parent_id or ""]
        assert sorted(v.options) == sorted(p.options)
        assert v.answer_text == p.answer_text
        assert v.answer != p.answer
        assert [p.options[i] for i in v.perturbation["order"]] == v.options


def test_t7_none_of_the_above(fx: Fixture, out: tuple[list[Item], dict]) -> None:
    items, skips = out
    parents = _parents(fx)
    t7 = _of(items, "T7")
    assert t7
    for v in t7:
        p = parents[v.parent_id or ""]
        assert v.options[letter_index(v.answer)] == NONE_OF_THE_ABOVE
        assert v.options[-1] == NONE_OF_THE_ABOVE  # it refers to the options above it: last, never first
        assert v.options[:-1] == [o for o in p.options if o != p.answer_text]
        assert p.answer_text not in v.options
        assert v.meta["removed_option"] == p.answer_text
    assert skips["T7"]["options already include a 'none' option"] > 0


def test_t8_only_later_chain_steps_with_one_wrong_earlier_answer(fx: Fixture, out: tuple[list[Item], dict]) -> None:
    items, skips = out
    t8 = _of(items, "T8")
    assert t8
    chains: dict[str, list[Item]] = {}
    for it in fx.items:
        if it.chain_id:
            chains.setdefault(it.chain_id, []).append(it)
    for v in t8:
        assert v.step is not None and v.step > 1
        earlier = sorted((s for s in chains[v.chain_id or ""] if (s.step or 0) < v.step), key=lambda s: s.step or 0)
        assert [t.question for t in v.context] == [s.question for s in earlier]
        wrong = [t for t in v.context if not t.correct]
        assert len(wrong) == 1
        bad = next(s for s in earlier if s.question == wrong[0].question)
        assert wrong[0].answer != bad.answer
        assert all(t.answer == s.answer for t, s in zip(v.context, earlier, strict=True) if t.correct)
        if v.lure is not None:  # the option that the wrong earlier answer names
            assert v.options[letter_index(v.lure)].lower() == v.perturbation["shown_text"]
    assert skips["T8"]["first step of its chain"] > 0
    assert skips["T8"]["not part of a chain"] > 0
