"""Several images per question (issue 49): companions resolved once in the build, and the comparison, view and
sequence tasks answered from the labels of both cases. Every answer is recomputed here from the cases' own labels
(an implementation of the rules of docs/tasks.md written apart from medr2.tasks.compare), over a multi-source
build of the readers' fixtures, the buildtest source and the sample; hypothesis draws the resolver's inputs and
the change rule's label sets."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from medr2 import Bench, Case, Item, Skip
from medr2.bench.format import load_bench
from medr2.builder.pipeline import build_bench
from medr2.images import ImageStore
from medr2.records import Companion, Finding
from medr2.sources.multi import MultiSource
from medr2.tasks import TASKS
from medr2.tasks.companions import resolve
from medr2.tasks.compare import CHANGE_TEXT, CHANGES, finding_change
from medr2.tasks.vocab import is_normal, norm
from tests import (
    build_fixtures,  # noqa: F401  (registers the "buildtest" source)
    dataset_fixtures as F,
)

SEVERAL = ("s3.change", "s3.view_finding", "s3.two_view_finding", "s1.which_sequence")


# --------------------------------------------------------------------------- the rules, written apart
def _labels(case: Case) -> dict[str, list[float | None]]:
    out: dict[str, list[float | None]] = {}
    for f in case.findings:
        v = f.attributes.get("size_mm")
        out.setdefault(norm(f.label), []).append(float(v) if isinstance(v, int | float) else None)
    for x in case.meta.get("image_labels") or []:
        if not is_normal(x):
            out.setdefault(norm(x), [None])
    return out


def _expected_change(prior: Case, current: Case, label: str) -> str | None:
    """New / resolved / unchanged / worse, or None where the labels do not decide it."""
    k = norm(label)
    a, b = _labels(prior).get(k, []), _labels(current).get(k, [])
    known_absent = {id(prior): prior.meta.get("findings_complete") is True,
                    id(current): current.meta.get("findings_complete") is True}
    if (not a and not known_absent[id(prior)]) or (not b and not known_absent[id(current)]):
        return None
    if len(a) > 1 or len(b) > 1 or (not a and not b):
        return None
    if not a:
        return "new"
    if not b:
        return "resolved"
    if a[0] is None or b[0] is None:
        return None
    r = b[0] / a[0]
    return "worse" if r >= 1.25 else "unchanged" if abs(r - 1) <= 0.1 else None


def _text(it: Item) -> str:
    return it.options[ord(it.answer) - 65]


def _check_several(bench: Bench) -> dict[str, int]:
    """Every item of the three tasks: its images (one current, the item's own image; the others their cases'
    images, of the same patient and split) and its answer, recomputed from the cases' labels."""
    cases = {c.case_id: c for c in bench.cases}
    seen = dict.fromkeys(SEVERAL, 0)
    for it in bench.items:
        if it.task not in SEVERAL or it.variant != "clean":
            continue
        seen[it.task] += 1
        case = cases[it.case_id]
        refs = it.image_list()
        assert [r.role for r in refs].count("current") == 1 and len(refs) >= 2
        current = next(r for r in refs if r.role == "current")
        assert (current.path, current.sha256) == (it.image, it.image_sha256) == (case.image, case.image_sha256)
        others = [cases[r.case_id or ""] for r in refs if r.role != "current"]
        for o, r in zip(others, [r for r in refs if r.role != "current"], strict=True):
            assert (o.image, o.image_sha256, o.patient_id, o.split) == (r.path, r.sha256, case.patient_id, case.split)
            assert any(c.case_id == o.case_id and c.role == r.role for c in case.companions)
        if it.task == "s3.change":
            (prior,) = others
            assert [r.role for r in refs] == ["prior", "current"]
            want = _expected_change(prior, case, it.meta["finding"])
            assert want in CHANGES and _text(it) == CHANGE_TEXT[want] and it.meta["change"] == want
            assert it.meta["prior_answer"] == "unchanged" and it.chance == pytest.approx(1 / len(it.options))
        elif it.task == "s3.view_finding":
            (other,) = others
            k = norm(it.meta["finding"])
            here, there = k in _labels(case), k in _labels(other)
            own, theirs = it.meta["views"]
            assert _text(it) == ("both views" if here and there else own if here else theirs)
            assert case.meta["findings_complete"] is True and other.meta["findings_complete"] is True
        elif it.task == "s3.two_view_finding":
            (other,) = others
            k = norm(it.meta["finding"])
            here, there = k in _labels(case), k in _labels(other)
            # yes: on the other view only (a single-view reading misses it); no: on neither (both complete)
            assert (it.answer, here, there) in (("yes", False, True), ("no", False, False)), (it.answer, here, there)
            assert it.meta["finding"] in it.question and it.meta["needs_both_views"] == (it.answer == "yes")
            assert case.meta["findings_complete"] is True and other.meta["findings_complete"] is True
            assert other.modality == case.modality
        else:
            assert _text(it) == case.sequence and all(r.label is None for r in refs)  # no name gives it away
            assert sorted(it.options) == sorted([case.sequence or "", *(o.sequence or "" for o in others)])
    return seen


# --------------------------------------------------------------------------- builds
@pytest.fixture(scope="module")
def readers_bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    """One multi-source build of the readers' fixtures with priors (NIH follow-ups), views (CBIS-DDSM CC and MLO,
    IU X-ray) and sequences (BraTS, MSD)."""
    tmp = tmp_path_factory.mktemp("readers")
    makers = {"nih-cxr14": F.make_nih, "cbis-ddsm": F.make_cbis_two_views, "iu-xray": F.make_iu,
              "brats": F.make_brats, "msd": F.make_msd_brain}
    specs = []
    for name, make in makers.items():
        make(tmp / name)
        specs.append(f"{name}:{tmp / name}")
    build_bench(MultiSource(specs), tmp / "bench", seed=0, workers=1)
    return load_bench(tmp / "bench")


def test_readers_link_companions_and_every_answer_follows_from_the_labels(readers_bench: Bench) -> None:
    seen = _check_several(readers_bench)
    assert seen["s3.change"] >= 2 and seen["s3.view_finding"] >= 2 and seen["s1.which_sequence"] >= 6, seen
    assert seen["s3.two_view_finding"] >= 2, seen
    by_source: dict[str, set[str]] = {}
    for c in readers_bench.cases:
        by_source.setdefault(c.source, set()).update(x.role for x in c.companions)
    assert by_source["NIH ChestX-ray14"] == {"prior"} and by_source["IU X-ray (Open-i)"] == {"view"}
    assert by_source["CBIS-DDSM"] == {"view"} and by_source["BraTS"] == {"sequence"}
    ids = {c.case_id for c in readers_bench.cases}
    assert all(x.case_id in ids for c in readers_bench.cases for x in c.companions)  # every fixture image is built


def test_buildtest_bench_every_answer_follows_from_the_labels(tmp_path: Path) -> None:
    build_bench("buildtest", tmp_path / "b", seed=0, n_cases=12, workers=1)
    seen = _check_several(load_bench(tmp_path / "b"))
    assert all(seen.values()), seen


def test_sample_bench_every_answer_follows_from_the_labels(build_sample: Any, tmp_path: Path) -> None:
    bench = load_bench(build_sample(tmp_path / "b", n_cases=60))
    seen = _check_several(bench)
    assert seen["s3.change"] >= 5, seen
    answers = {it.meta["change"] for it in bench.items if it.task == "s3.change"}
    assert len(answers) >= 2, answers
    # the generator's intent (meta.prior_change) agrees with the labels wherever they decide
    cases = {c.case_id: c for c in bench.cases}
    named = {"new": "new", "resolved": "resolved", "unchanged": "unchanged", "grown": "worse"}
    for it in bench.items:
        if it.task == "s3.change" and it.variant == "clean":
            prior = cases[it.meta["prior_case"]]
            assert named[prior.meta["prior_change"]] == it.meta["change"], (it.meta, prior.meta["prior_change"])


def test_a_companion_not_in_the_build_is_noted_not_guessed(tmp_path: Path) -> None:
    """buildtest's cases built without their companions: each task that needs one is skipped with the resolver's
    note, never answered."""
    from tests.build_fixtures import BuildTestSource

    class WithoutCompanions(BuildTestSource):
        def plan(self, seed: int, n: int | None) -> list[Any]:
            return [s for s in super().plan(seed, n) if s.kind == "good"]

    r = build_bench(WithoutCompanions(None), tmp_path / "c", seed=0, n_cases=6, workers=1)
    assert r.skipped["s3.change"]["prior case000-prior: not in the build"] == 1
    assert r.skipped["s3.change"]["prior case003-prior: not in the build"] == 1
    assert r.skipped["s1.which_sequence"]["sequence case001-sequence: not in the build"] == 1
    assert r.skipped["s3.view_finding"]["view case005-view: not in the build"] == 1
    assert r.skipped["s3.two_view_finding"]["view case002-view: not in the build"] == 1
    b = load_bench(tmp_path / "c")
    assert not [it for it in b.items if it.task in SEVERAL]


# --------------------------------------------------------------------------- the resolver, drawn
def _case(cid: str, patient: str, split: str, links: list[Companion] = ()) -> Case:  # type: ignore[assignment]
    return Case(case_id=cid, image="images/x.png", image_sha256="0" * 64, width=4, height=4, modality="CT",
                source="t", license="CC0-1.0", patient_id=patient, split=split, companions=list(links))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("pq"), st.sampled_from(["train", "test"]), st.booleans()),
                min_size=1, max_size=6))
def test_resolver_keeps_same_patient_same_split_in_build(others: list[tuple[str, str, bool]]) -> None:
    links = [Companion(case_id=f"c{i}", role="prior") for i in range(len(others))]
    me = _case("me", "p", "train", links)
    build = {f"c{i}": _case(f"c{i}", pat, split) for i, (pat, split, there) in enumerate(others) if there}
    linked = resolve(me, build.get)
    kept = {r.case.case_id for r in linked.resolved}
    assert kept == {f"c{i}" for i, (pat, split, there) in enumerate(others) if there and pat == "p"
                    and split == "train"}
    assert len(linked.notes) == len(others) - len(kept)  # every other companion is noted, with its reason
    assert all(r.ref.case_id == r.case.case_id and r.ref.role == "prior" for r in linked.resolved)


# --------------------------------------------------------------------------- the change rule, drawn
_SIZES = st.one_of(st.none(), st.floats(min_value=1.0, max_value=60.0))


@settings(max_examples=120, deadline=None)
@given(st.lists(_SIZES, max_size=2), st.lists(_SIZES, max_size=2), st.booleans(), st.booleans(),
       st.sampled_from(["nodule", "Nodule", "NODULE "]))
def test_change_rule_reads_only_declared_labels(before: list[float | None], now: list[float | None],
                                                prior_complete: bool, current_complete: bool, spelling: str) -> None:
    def study(cid: str, sizes: list[float | None], complete: bool) -> Case:
        fs = [Finding(label=spelling.strip() if k else "nodule", box=(0, 0, 2, 2),
                      attributes={} if s is None else {"size_mm": s}) for k, s in enumerate(sizes)]
        return _case(cid, "p", "test").model_copy(update={"findings": fs, "meta": {"findings_complete": complete}})

    prior, current = study("a", before, prior_complete), study("b", now, current_complete)
    want = _expected_change(prior, current, "nodule")
    try:
        got: str | None = finding_change(prior, current, spelling)
    except Skip:
        got = None
    assert got == want


def test_tasks_declared_in_stages_and_chains() -> None:
    assert (TASKS["s3.change"].stage, TASKS["s3.view_finding"].stage, TASKS["s1.which_sequence"].stage) == (3, 3, 1)
    assert all(TASKS[t].chain is not None for t in SEVERAL)
    assert TASKS["s3.two_view_finding"].form == "yesno" and TASKS["s3.two_view_finding"].stage == 3
    # "the {x}" names the case's one lesion of that label, on an image its source does not grade reject (issue 40)
    assert TASKS["s3.change"].requires == ("has_prior", "one_lesion", "readable", "evidence_readable")
    assert "findings_complete" in TASKS["s3.view_finding"].requires


# --------------------------------------------------------------------------- the sample's priors are an addition
def test_sample_priors_keep_the_planned_cases_bytes(tmp_path: Path) -> None:
    from medr2.sources.sample.background import BACKGROUNDS
    from medr2.sources.sample.source import PRIOR_SUFFIX, SampleSource, realize_case

    src = SampleSource()
    plan = src.plan(0, 40)
    current = [s for s in plan if s.prior_seed is None]
    priors = [s for s in plan if s.prior_seed is not None]
    assert [s.case_id for s in current] == [f"sample-s0-{i:06d}" for i in range(40)]  # the 40 asked, in order
    assert priors and plan[-len(priors):] == priors  # appended after them
    store = ImageStore(tmp_path)
    for spec in [s for s in current if s.prior_id][:3]:
        bg = BACKGROUNDS[spec.background].load(spec.view)
        linked = src.realize(spec, store)
        alone = realize_case(dataclasses.replace(spec, prior_id=None, prior_interval=None), bg, store)
        assert linked.model_copy(update={"companions": []}) == alone  # the case as before, with its link added
        assert linked.companions == [Companion(case_id=spec.case_id + PRIOR_SUFFIX, role="prior",
                                               interval_days=spec.prior_interval)]


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 120))
def test_sample_plan_with_priors_is_the_plan_without_them_plus_links(seed: int, n: int) -> None:
    """Any seed and size: the planned cases are those of a plan without priors (same ids, seeds, backgrounds,
    views, in order), some given a link; the priors come after them, one per link, of the same background view."""
    import medr2.sources.sample.source as sample
    from medr2 import BadInput

    src = sample.SampleSource()
    try:
        plan = src.plan(seed, n)
    except BadInput as e:  # the sample's packages missing: nothing to compare
        pytest.skip(str(e))
    saved = sample.P_PRIOR
    sample.P_PRIOR = 0.0
    try:
        plain = src.plan(seed, n)
    finally:
        sample.P_PRIOR = saved
    current, priors = plan[:n], plan[n:]
    assert [dataclasses.replace(s, prior_id=None, prior_interval=None) for s in current] == plain
    linked = [s for s in current if s.prior_id]
    assert [p.case_id for p in priors] == [s.prior_id for s in linked]
    for s, p in zip(linked, priors, strict=True):
        assert (p.seed, p.background, p.view, p.index) == (s.seed, s.background, s.view, s.index)
        assert p.prior_seed is not None and 30 <= (s.prior_interval or 0) < 730
