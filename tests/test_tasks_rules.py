"""The task rules of DESIGN §3: true distractors never offered, balanced letters, yes/no pairs,
held-out templates, bins away from edges, every supported task generated, chance levels."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

from medr2.bench import Bench, load_bench
from medr2.build.pipeline import build_bench
from medr2.imageio import ImageStore
from medr2.records import Case, Item, letter_index
from medr2.tasks import TASKS, LabelPools, Skip, draft_case, vocab
from medr2.tasks.common import SIZE_EDGES_MM, size_bin
from tests.build_fixtures import Spec, make_case

ORDINAL = {"s2.count", "s3.count", "s3.size", "s4.severity"}


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    out = tmp_path_factory.mktemp("t") / "bench"
    build_bench("buildtest", out, seed=3, n_cases=90, workers=1)
    return load_bench(out)


def _true_labels(case: Case, task: str) -> set[str]:
    names = {s.name for s in case.structures}
    labels = {f.label for f in case.findings}
    table: dict[str, set[str]] = {
        "s1.modality": {case.modality}, "s1.plane": {case.plane or ""}, "s1.sequence": {case.sequence or ""},
        "s1.region": {case.body_region or ""}, "s1.quality": {case.quality or ""},
        "s1.artefact": {case.artefact or ""}, "s2.organ": names, "s2.cued_structure": names,
        "s2.landmark": names, "s3.finding_type": labels, "s4.diagnosis": {case.diagnosis or ""},
        "s4.differential": {case.diagnosis or ""}, "s4.malignancy": {case.malignancy or ""},
        "s4.multilabel": labels,
    }
    return table.get(task, set())


def test_no_distractor_is_true(bench: Bench) -> None:
    checked = 0
    for it in bench.items:
        case = bench.case(it.case_id)
        true = {vocab.norm(t) for t in _true_labels(case, it.task) if t}
        if it.form == "mcq" and true:
            wrong = [o for i, o in enumerate(it.options) if i != letter_index(it.answer)]
            assert not {vocab.norm(o) for o in wrong} & true, (it.task, it.options, true)
            assert vocab.norm(it.answer_text) in true
            checked += 1
        if it.form == "multi":
            chosen = {it.options[letter_index(x)] for x in it.answer.split(",")}
            assert {vocab.norm(o) for o in chosen} == true
            assert not {vocab.norm(o) for o in set(it.options) - chosen} & true
            checked += 1
        if it.form == "mcq":
            assert len({vocab.norm(o) for o in it.options}) == len(it.options)  # no duplicate options
    assert checked > 200


def test_absent_twins_really_absent(bench: Bench) -> None:
    for it in bench.items:
        case = bench.case(it.case_id)
        if it.task == "s2.organ_presence" and it.answer == "no":
            assert not any(f"the {s.name} " in it.question for s in case.structures)
        if it.task == "s3.absent_finding" and it.answer == "no":
            assert not any(f" {f.label}" in it.question for f in case.findings)


def test_letters_balanced(bench: Bench) -> None:
    per: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for it in bench.items:
        if it.form == "mcq" and it.task not in ORDINAL:
            per[(it.task, it.split or "")][it.answer] += 1
    assert per
    for (task, _split), counts in per.items():
        n_opts = {len(it.options) for it in bench.items if it.task == task}
        assert len(n_opts) == 1
        full = [counts.get(chr(65 + i), 0) for i in range(n_opts.pop())]
        assert max(full) - min(full) <= 1, (task, full)


def test_yes_no_pairs_complete(bench: Bench) -> None:
    pairs: dict[str, list[Item]] = defaultdict(list)
    for it in bench.items:
        if it.form == "yesno":
            assert it.pair_id and it.chance == 0.5
            pairs[it.pair_id].append(it)
    assert pairs
    for members in pairs.values():
        assert len(members) == 2
        assert sorted(m.answer for m in members) == ["no", "yes"]
        assert len({(m.case_id, m.task, m.template_id) for m in members}) == 1
        assert members[0].question != members[1].question


def test_heldout_templates_only_in_test(bench: Bench) -> None:
    heldout = {t.id for s in TASKS.values() for t in s.templates if t.heldout}
    used_in_test = set()
    for it in bench.items:
        if it.template_id in heldout:
            assert it.split == "test", (it.template_id, it.split)
            used_in_test.add(it.template_id)
    assert used_in_test  # they do appear in test


def test_chance_levels(bench: Bench) -> None:
    for it in bench.items:
        expected = {"mcq": 1 / max(1, len(it.options)), "yesno": 0.5, "box": 0.0, "text": 0.0,
                    "multi": 1 / 2 ** len(it.options)}[it.form]
        assert it.chance == pytest.approx(expected)


def test_size_bins_away_from_edges(bench: Bench) -> None:
    sizes = [it.meta["size_mm"] for it in bench.items if it.task == "s3.size"]
    assert sizes
    for mm in sizes:
        assert all(abs(mm - e) >= max(1.0, 0.1 * e) for e in SIZE_EDGES_MM)
    with pytest.raises(Skip, match="edge"):
        size_bin(10.4)
    assert size_bin(14.0) == 2 and size_bin(2.0) == 0 and size_bin(80.0) == 5


def test_cue_items_show_drawn_cue(bench: Bench) -> None:
    from medr2.imageio import load_image
    from medr2.imaging.draw import cue_color_mask

    cued = [it for it in bench.items if TASKS[it.task].cue]
    assert cued
    for it in cued[:10]:
        assert it.cue is not None and it.image != bench.case(it.case_id).image
        arr = load_image(bench.path(it.image or ""))
        assert cue_color_mask(arr).any()


def test_every_supported_task_generated(tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    cases = [make_case(Spec(f"c{i}", i), store) for i in range(12)]
    pools = LabelPools.from_cases(cases)
    full = next(c for i, c in enumerate(cases) if i % 3 == 1)  # an MRI case with one finding
    out = draft_case(full, pools, seed=0, split="test", images=store)
    assert not out.skipped, out.skipped
    assert {d.task for d in out.drafts} == set(TASKS)
    for c in cases:
        res = draft_case(c, pools, seed=0, split="train", images=store)
        generated = {d.task for d in res.drafts}
        assert generated.isdisjoint(res.skipped) and generated | set(res.skipped) == set(TASKS)
        assert all(isinstance(r, str) and r for r in res.skipped.values())


def test_distractors_respect_synonyms_and_levels() -> None:
    case = Case(case_id="x", image="images/x.png", image_sha256="0", width=4, height=4, modality="MRI",
                body_region="head", source="s", license="l", patient_id="p")
    pools = LabelPools.from_cases([case])
    pools.glob["modality"].update({"MR", "magnetic resonance", "CT"})
    rng = np.random.default_rng(0)
    for _ in range(20):
        got = pools.distractors("modality", case, ["MRI"], 3, rng)
        assert len(got) == 3 and not any(vocab.same(g, "MRI") for g in got)
    got = pools.distractors("modality", case, ["MRI"], 1, np.random.default_rng(1))
    assert got == ["CT"]  # the global pool is used before the built-in vocabulary
    with pytest.raises(Skip, match="too few"):
        pools.distractors("modality", case, ["MRI"], 50, rng)


def test_draft_deterministic(tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    cases = [make_case(Spec(f"c{i}", i), store) for i in range(6)]
    pools = LabelPools.from_cases(cases)
    a = draft_case(cases[4], pools, seed=7, split="val", images=store)
    b = draft_case(cases[4], LabelPools.from_cases(list(reversed(cases))), seed=7, split="val", images=store)
    assert [(d.question, d.correct, d.distractors) for d in a.drafts] == \
        [(d.question, d.correct, d.distractors) for d in b.drafts]
