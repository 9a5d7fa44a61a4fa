"""Issue 40's kinds of the second blind review (docs/reviews/review-2026-12-07b.md) as properties over a built sample
bench (40 cases, every variant), each asserted for every item of its kind, never a list of reviewed items:

1. the options of every choice item, clean or variant, are mutually exclusive: no is-a and no part-of pair, an
   anatomical label read with its side aside ("brain" beside "left fusiform gyrus"), a planar whole-body scan
   beside one of its views;
2. no structure offered, keyed or located is a tissue class or a compartment (``medr2.vocab.not_a_structure``);
3. a question re-keyed to another case's image (V2, V3, V12) passes the clean drafts' check of its wrong options
   on that case (``medr2.tasks.assemble.wrong_option_true``: no mimic the shown image cannot rule out);
4. an item of a misleading kind whose statement points to no option is no attack (``medr2.perturb.registry.NO_LURE``:
   not ``misleads``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from medr2 import Bench, Item, vocab as clinical
from medr2.bench import load_bench
from medr2.builder.pipeline import build_bench
from medr2.perturb.registry import NO_LURE, declared_roles, item_roles
from medr2.records import letter_index
from medr2.tasks import vocab
from medr2.tasks.assemble import wrong_option_true

CHOICE = ("mcq", "multi")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    root: Path = tmp_path_factory.mktemp("review40b") / "bench"
    try:
        build_bench("sample", root, seed=61, n_cases=40, variants="all", workers=1)
    except Exception as e:  # noqa: BLE001  (the sample's optional backgrounds)
        pytest.skip(f"sample source not available: {e}")
    return load_bench(root)


def _bare(text: str) -> str:
    return text[4:] if text.lower().startswith("the ") else text


def test_options_never_contain_each_other(built: Bench) -> None:
    choice = [it for it in built.items if it.form in CHOICE]
    assert choice
    for it in choice:
        assert vocab.nested_options(it.options) is None, (it.variant, it.task, it.options)


BRAIN_PARTS = [c.label for c in clinical.vocabulary() if c.kind == "organ" and clinical.part_of(c.label, "brain")
               and "laterality" in c.attributes and not clinical.not_a_structure(c.label)]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(BRAIN_PARTS), st.sampled_from(["", "left ", "right ", "the left "]))
def test_a_sided_part_is_contained_by_its_whole(part: str, side: str) -> None:
    """Every sided part of the brain is nested with the brain whatever side it is named with; the same part named on
    the two sides is two places, not a nesting."""
    assert vocab.contains("brain", f"{side}{part}") and vocab.contains(f"{side}{part}", "the brain")
    assert not vocab.contains(f"left {part}", f"right {part}")


def test_planar_views_are_parts_of_the_whole_body_scan() -> None:
    for view in ("anterior", "posterior", "anterior view", "posterior view"):
        assert vocab.nested_options(["planar whole-body", view]) is not None


def test_no_tissue_class_or_compartment_is_offered_keyed_or_located(built: Bench) -> None:
    checked = 0
    for it in built.items:
        named = [*(_bare(o) for o in it.options), *(str(it.meta[k]) for k in ("target", "x", "y") if it.meta.get(k))]
        for label in named:
            assert not clinical.not_a_structure(label), (it.task, it.question, label)
        checked += len(named)
    for case in built.cases:
        for s in case.structures:  # the case record keeps them; no task may use them (contract.anatomical)
            if clinical.not_a_structure(s.name):
                asked = [it for it in built.items if it.case_id == case.case_id and s.name in it.question]
                assert not asked, (s.name, [it.question for it in asked])
        for f in case.findings:
            loc = f.attributes.get("location")
            assert not (isinstance(loc, str) and clinical.not_a_structure(loc)), loc
    assert checked


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([t for c in clinical.vocabulary() if c.kind == "organ"
                        and clinical.not_a_structure(c.label) for t in c.terms]),
       st.sampled_from(["", "left ", "Right ", "RIGHT "]))
def test_non_structures_name_no_anatomy(term: str, prefix: str) -> None:
    """A tissue class or a compartment, in any spelling and side, is no anatomy concept (the one gate structures
    enter the tasks by, ``contract.is_anatomy``) and no location."""
    assert clinical.anatomy_concept(f"{prefix}{term}") is None
    assert clinical.anatomical_location(f"{prefix}{term}") is None


def _right(it: Item) -> list[str]:
    return [it.options[letter_index(x)] for x in it.answer.split(",") if x]


def test_rekeyed_questions_pass_the_clean_option_check_on_the_shown_case(built: Bench) -> None:
    cases = {c.case_id: c for c in built.cases}
    rekeyed = [it for it in built.items if it.form == "mcq" and it.perturbation
               and it.perturbation.get("other_case") and it.meta.get("scoring") == "exact"]
    assert rekeyed
    for it in rekeyed:
        other = cases[it.perturbation["other_case"]]
        assert wrong_option_true(other, it.options, _right(it)) is None, (it.variant, it.task, it.options)


def test_clean_options_pass_the_same_check(built: Bench) -> None:
    cases = {c.case_id: c for c in built.cases}
    for it in built.items:
        if it.variant == "clean" and it.form == "mcq":
            assert wrong_option_true(cases[it.case_id], it.options, _right(it)) is None, (it.task, it.options)


def test_an_item_that_names_no_lure_is_no_attack(built: Bench) -> None:
    """Every item that misleads names the option it misleads towards; one of a misleading kind (T3, T8, T9, T10,
    T12) whose statement points to no option records why and is no attack: not ``misleads``, its answer exact."""
    misleading_kind = [it for it in built.items if "misleads" in declared_roles(it.variant)]
    assert misleading_kind
    disarmed = 0
    for it in misleading_kind:
        roles = item_roles(it.variant, it.roles, it.meta)
        if it.lure is None:
            assert it.meta["lure_reason"] == NO_LURE and "misleads" not in roles, (it.variant, it.question)
            assert it.answer == next(p for p in built.items if p.item_id == it.parent_id).answer
            disarmed += 1
        else:
            assert "misleads" in roles and "lure_reason" not in it.meta and it.lure != it.answer
    assert disarmed
