"""What a case's truth says is absent is explicit, never inferred (issue 39 item 3, issue 40): one rule,
:func:`medr2.tasks.contract.states_absent`, read by every consumer (the presence questions' "no" answers and wrong
options, the claim checker, the rationale baselines); generated over the vocabulary's labels, their sub-types and
completeness, not lists of examples."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings, strategies as st

from medr2 import vocab as clinical
from medr2.bench import load_bench
from medr2.bench.format import CASES_FILE, write_bench
from medr2.images import ImageStore
from medr2.scoring.claims import Truth, check_text
from medr2.tasks import LabelPools, draft_case, vocab
from medr2.tasks.contract import Stated, abnormal_state, compatible, states_absent
from tests.build_fixtures import Spec, make_case

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
PATHOLOGY = sorted({c.label for c in clinical.vocabulary() if c.kind in ("finding", "diagnosis")})
labels = st.sampled_from(PATHOLOGY)


def _sub_types(label: str) -> list[str]:
    v = clinical.vocabulary()
    return sorted(c.label for i in v.descendants(label) if (c := v.get(i)) is not None and v.is_a(c.label, label))


# --------------------------------------------------------------------------- the rule


@SETTINGS
@given(present=st.lists(labels, max_size=2), label=labels)
def test_an_unlisted_label_on_an_incomplete_list_is_never_absent(present: list[str], label: str) -> None:
    """Nothing is inferred from a label being unlisted: no negative label, no completeness, no region."""
    assert not states_absent(Stated(positives=tuple(present)), label)


@SETTINGS
@given(present=st.lists(labels, max_size=2), label=labels, region=st.sampled_from([None, "chest", "head", "abdomen"]))
def test_a_complete_list_states_absent_what_it_leaves_out(present: list[str], label: str, region: str | None) -> None:
    stated = Stated(positives=tuple(present), complete=True, body_region=region)
    assert states_absent(stated, label) == (not compatible(label, present))


@SETTINGS
@given(absent=labels, data=st.data())
def test_an_absent_concept_makes_its_sub_types_absent_never_its_parents(absent: str, data: st.DataObject) -> None:
    stated = Stated(absent=(absent,))
    assert states_absent(stated, absent)
    subs = _sub_types(absent)
    if subs:
        assert states_absent(stated, data.draw(st.sampled_from(subs)))
    v = clinical.vocabulary()
    parents = [p.label for i in v.ancestors(absent) if (p := v.get(i)) is not None and v.is_a(absent, p.label)
               and p.kind in ("finding", "diagnosis") and not vocab.same(p.label, absent)]
    if parents:  # no "pleural effusion" does not say no effusion
        assert not states_absent(stated, data.draw(st.sampled_from(parents)))


@SETTINGS
@given(present=labels, complete=st.booleans(), data=st.data())
def test_what_the_case_has_is_never_absent_whatever_it_states(present: str, complete: bool,
                                                              data: st.DataObject) -> None:
    """A label compatible with a present one (itself, a synonym, sub-type, super-type, co-occurring label) is not
    absent, even where the source also lists it as a negative."""
    related = [x for x in PATHOLOGY if compatible(x, [present])]
    label = data.draw(st.sampled_from(related))
    assert not states_absent(Stated(positives=(present,), absent=(label,), complete=complete), label)


@SETTINGS
@given(present=st.lists(labels, max_size=2), complete=st.booleans())
def test_one_definition_of_normal(present: list[str], complete: bool) -> None:
    """Abnormal where a label is present; normal only on a complete list; no finding on an incomplete list is
    unknown (the claim checker's Truth reads the same)."""
    state = abnormal_state(Stated(positives=tuple(present), complete=complete))
    assert state == (True if present else (False if complete else None))
    truth = Truth.of({"findings": [{"label": p} for p in present], "meta": {"findings_complete": complete}})
    assert truth.abnormal == state and truth.is_normal == (state is False)


LOCATED = [x for x in PATHOLOGY if clinical.implied(x, "location")]
REGIONS = sorted({c.label for c in clinical.vocabulary() if c.kind == "body_region"})


def _regions_of(label: str) -> set[str]:
    """The body regions the locations a concept always carries lie in (none: a site of no region, the bones)."""
    v = clinical.vocabulary()
    out: set[str] = set()
    for site in clinical.implied(label, "location"):
        regions = {r.label for i in v.ancestors(site.label) if (r := v.get(i)) is not None and r.kind == "body_region"}
        if not regions:
            return set()
        out |= regions
    return out


@SETTINGS
@given(label=st.sampled_from(LOCATED), region=st.sampled_from(REGIONS))
def test_a_finding_of_another_body_region_is_absent(label: str, region: str) -> None:
    """The anatomical rule, from the vocabulary's ``@ location=`` lines: a finding whose locations all lie in body
    regions sharing nothing with the imaged one is absent (hydrocephalus on a chest radiograph); one at a site of no
    region (a fracture of the bones) or of an overlapping region is not."""
    where = _regions_of(label)
    elsewhere = bool(where) and all(clinical.overlap(r, region) is False for r in where)
    assert states_absent(Stated(body_region=region), label) == elsewhere
    assert not states_absent(Stated(), label)  # no region: nothing is elsewhere
    assert states_absent(Stated(body_region="chest"), "hydrocephalus")  # the brain is in the head
    assert not states_absent(Stated(body_region="chest"), "fracture")  # the bones are in no one region


# --------------------------------------------------------------------------- the claim checker


def _finding_claims(text: str, truth: dict[str, Any], value: str) -> list[str]:
    return [c.verdict for c in check_text(text, truth) if c.kind in ("finding", "diagnosis")
            and vocab.same(c.value, value) and not c.hedged]


CHEST = {"modality": "X-ray", "body_region": "chest", "findings": [{"label": "pleural effusion", "attributes": {}}]}
CHEST_CLAIMED = sorted(x for x in vocab.BUILTIN["finding"] + vocab.builtin_for_region("finding", "X-ray", "chest")
                       if not states_absent(Stated(positives=("pleural effusion",), body_region="chest"), x)
                       and not compatible(x, ["pleural effusion"]) and _finding_claims(f"There is {x}.", {**CHEST,
                       "meta": {"findings_complete": True}}, x))


@SETTINGS
@given(label=st.sampled_from(CHEST_CLAIMED), deny=st.booleans())
def test_claims_decide_an_unlisted_finding_only_where_its_absence_is_stated(label: str, deny: bool) -> None:
    """On an incomplete list an unlisted finding is unverifiable, asserted or denied; stated absent (a negative
    label or a complete list) its assertion is a hallucinated finding and its denial supported."""
    text = f"There is no {label}." if deny else f"There is {label}."
    assert set(_finding_claims(text, CHEST, label)) == {"unverifiable"}
    decided = "supported" if deny else "contradicted"
    for stated in ({"absent": [label]}, {"meta": {"findings_complete": True}}):
        assert set(_finding_claims(text, {**CHEST, **stated}, label)) == {decided}, stated


PNEUMONIA = {"modality": "X-ray", "body_region": "chest", "findings": [], "diagnosis": "pneumonia"}
OTHER_DIAGNOSES = sorted(x for x in vocab.BUILTIN["diagnosis"] + vocab.builtin_for_region("diagnosis", "X-ray", "chest")
                         if not states_absent(Stated(positives=("pneumonia",), body_region="chest"), x)
                         and not compatible(x, ["pneumonia"]) and _finding_claims(f"This is {x}.", {**PNEUMONIA,
                         "meta": {"findings_complete": True}}, x))


@SETTINGS
@given(label=st.sampled_from(OTHER_DIAGNOSES))
def test_another_diagnosis_is_contradicted_only_where_the_truth_excludes_it(label: str) -> None:
    """A case with a diagnosis does not exclude every other one: only a complete list, a negative label or another
    body region does (a glioma on a chest radiograph; drawn apart from these labels)."""
    text = f"This is {label}."
    assert set(_finding_claims(text, PNEUMONIA, label)) == {"unverifiable"}
    assert set(_finding_claims(text, {**PNEUMONIA, "absent": [label]}, label)) == {"contradicted"}


def test_claims_read_the_truth_of_a_case_and_of_a_dict_alike(tmp_path: Path) -> None:
    case = make_case(Spec("c0", 0), ImageStore(tmp_path)).model_copy(update={"absent": ["pneumothorax"],
                                                                           "meta": {"findings_complete": False}})
    as_dict = {**case.model_dump(mode="json")}
    assert Truth.of(case) == Truth.of(as_dict)
    assert Truth.of(case).absent == ("pneumothorax",) and Truth.of(case).findings_complete is False


# --------------------------------------------------------------------------- the presence questions

PRESENCE_KEYED = ("s3.absent_finding", "s3.finding_type", "s4.multilabel", "s3.two_view_finding")


def _named(question: str, candidates: set[str]) -> str | None:
    """The candidate label a yes/no question names (the longest one written in it)."""
    low = question.lower()
    hits = [c for c in candidates if re.search(rf"\b{re.escape(c.lower())}\b", low)]
    return max(hits, key=len) if hits else None


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.integers(0, 11), complete=st.sampled_from([True, False, None]), n_absent=st.integers(0, 3),
       data=st.data())
def test_every_presence_question_keys_absent_only_what_the_truth_states_absent(
        tmp_path_factory: Any, which: int, complete: bool | None, n_absent: int, data: st.DataObject) -> None:
    """Every task whose "no" answer or wrong option says a finding is absent (the enumeration :data:`PRESENCE_KEYED`
    is checked against the registry) keys only labels :func:`states_absent` allows, whatever the case declares."""
    store = ImageStore(tmp_path_factory.mktemp("b"))
    cases = [make_case(Spec(f"c{i}", i), store) for i in range(12)]
    pools = LabelPools.from_cases(cases)
    base = cases[which]
    pool = sorted({x for lv in pools.levels("finding", base, wide=True) for x in lv})
    absent = data.draw(st.lists(st.sampled_from(pool), max_size=n_absent, unique=True))
    meta = {} if complete is None else {"findings_complete": complete}
    case = base.model_copy(update={"meta": meta, "absent": absent})
    out = draft_case(case, LabelPools.from_cases([*cases, case]), seed=which, split="train", images=store)
    candidates = {*pool, *absent}
    for d in out.drafts:
        if d.task not in PRESENCE_KEYED:
            continue
        if d.form in ("mcq", "multi"):
            assert all(states_absent(case, x) for x in d.distractors), (d.task, d.distractors)
        elif d.correct == "no" or "free of" in d.question:
            label = _named(d.question, candidates)
            assert label is not None and states_absent(case, label), (d.question, label)
    if not meta.get("findings_complete") and not any(not compatible(a, [f.label for f in case.findings])
                                                     for a in absent):
        assert not any(d.task == "s3.absent_finding" for d in out.drafts)


@SETTINGS
@given(which=st.integers(0, 11), complete=st.sampled_from([True, False, None]), n_absent=st.integers(0, 2),
       data=st.data())
def test_t1_states_only_absent_findings_as_false(tmp_path_factory: Any, which: int, complete: bool | None,
                                                 n_absent: int, data: st.DataObject) -> None:
    """T1's false statement "Is there X in this image?" (keyed "no") names only a finding the truth states absent."""
    from medr2.perturb.facts import FactPools

    store = ImageStore(tmp_path_factory.mktemp("t1"))
    cases = [make_case(Spec(f"c{i}", i), store) for i in range(12)]
    pools = FactPools(cases)
    base = cases[which]
    pool = sorted(pools.labels.get(base.modality, set()))
    absent = data.draw(st.lists(st.sampled_from(pool), max_size=n_absent, unique=True)) if pool else []
    case = base.model_copy(update={"meta": {} if complete is None else {"findings_complete": complete},
                                   "absent": absent})
    got = pools.absent_labels(case)
    assert all(states_absent(case, x) for x in got)
    assert {a for a in absent if states_absent(case, a)} <= set(got)  # a stated negative reaches it


def test_the_presence_tasks_are_those_that_key_an_absence() -> None:
    """The enumeration is the registry's: every task asking whether a finding is present or seen keys a finding
    absent through the rule, except ``s3.view_finding``, whose options are views (it reads each view's own complete
    labels: ``findings_complete`` on both)."""
    from medr2.tasks import TASKS

    asks = {t for t, spec in TASKS.items() if re.search(r"finding", spec.name)
            and re.search(r"present|seen|show", spec.name)}
    assert asks == {*PRESENCE_KEYED, "s3.view_finding"}
    assert "findings_complete" in TASKS["s3.view_finding"].requires


# --------------------------------------------------------------------------- the bench format


def test_a_bench_written_before_the_absent_column_still_loads(tmp_path: Path) -> None:
    from medr2.scoring.rationaleaudit import _read_truths

    store = ImageStore(tmp_path)
    cases = [make_case(Spec(f"c{i}", i), store).model_copy(update={"absent": ["pneumothorax"]}) for i in range(2)]
    write_bench(tmp_path, cases, [], {"name": "old"})
    assert [c.absent for c in load_bench(tmp_path).cases] == [["pneumothorax"]] * 2
    path = tmp_path / CASES_FILE
    table = pq.read_table(path)
    pq.write_table(table.drop(["absent"]), path)  # the cases table of a bench written before Case.absent
    bench = load_bench(tmp_path, validate=False)
    assert [c.absent for c in bench.cases] == [[], []]
    assert all(Truth.of(t).absent == () for t in _read_truths(tmp_path).values())

