"""The variants of several-image items keep their promises (issue 49; docs/variants.md "Several images"), over a
built sample bench with priors (``--variants T12,V13,V14,V15,V1,V8``), each checked against the cases' labels and
the images themselves; and every variant that changes the shown image keeps the item's image list consistent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from medr2 import Bench, Case, Item
from medr2.bench.format import load_bench
from medr2.images import load_image
from medr2.perturb.registry import PERTURBATIONS
from medr2.tasks.compare import CHANGE_TEXT
from medr2.tasks.vocab import norm

CODES = "T12,V13,V14,V15,V1,V8"


@pytest.fixture(scope="module")
def bench(build_sample: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory) -> Bench:
    return load_bench(build_sample(tmp_path_factory.mktemp("sv") / "bench", n_cases=60, variants=CODES,
                                   renders="stored"))


def _of(bench: Bench, code: str) -> list[tuple[Item, Item]]:
    by_id = {it.item_id: it for it in bench.items}
    out = [(it, by_id[it.parent_id or ""]) for it in bench.items if it.variant.split("-")[0] == code]
    assert out, code
    return out


def _present(case: Case, label: str) -> bool:
    return any(norm(f.label) == norm(label) for f in case.findings)


def test_roles_declared_in_the_registry() -> None:
    assert PERTURBATIONS["T12"].roles == {"misleads", "augments", "keeps_facts"}
    assert PERTURBATIONS["V13"].roles == PERTURBATIONS["V15"].roles == {"probe"}
    assert PERTURBATIONS["V14"].roles == {"preserves_answer", "keeps_facts", "augments"}


def test_t12_report_contradicts_the_prior_and_lures_to_what_it_implies(bench: Bench) -> None:
    cases = {c.case_id: c for c in bench.cases}
    for it, parent in _of(bench, "T12"):
        prior = cases[parent.meta["prior_case"]]
        finding = parent.meta["finding"]
        claims_present = it.perturbation["claimed_prior_state"] == "present"
        assert claims_present != _present(prior, finding)  # the report says the opposite of the prior's labels
        report = it.question.removesuffix(parent.question).strip()
        assert report and finding in report and it.question.endswith(parent.question)
        assert (" no " in f" {report.lower()} ") != claims_present
        assert (it.answer, it.options, it.images) == (parent.answer, parent.options, parent.images)
        now = _present(cases[it.case_id], finding)
        believed = {(True, True): "unchanged", (False, True): "new", (True, False): "resolved"}.get(
            (claims_present, now))
        assert (it.lure is None) == (believed is None)
        if it.lure is not None:
            assert it.options[ord(it.lure) - 65] == CHANGE_TEXT[believed] != it.options[ord(it.answer) - 65]
        # a report that points to no option (a resolved finding) is no attack (NO_LURE)
        assert set(it.roles or []) == {"augments", "keeps_facts"} | ({"misleads"} if it.lure is not None else set())


def test_v13_prior_is_another_patients_study_of_the_same_modality_and_split(bench: Bench) -> None:
    cases = {c.case_id: c for c in bench.cases}
    for it, parent in _of(bench, "V13"):
        refs, before = it.image_list(), parent.image_list()
        (i,) = [k for k, r in enumerate(refs) if r.role == "prior"]
        other, me = cases[refs[i].case_id or ""], cases[it.case_id]
        assert other.patient_id != me.patient_id and other.modality == me.modality and other.split == me.split
        assert (refs[i].path, refs[i].sha256) == (other.image, other.image_sha256)
        assert refs[i].interval_days == before[i].interval_days
        assert [r for k, r in enumerate(refs) if k != i] == [r for k, r in enumerate(before) if k != i]
        assert it.roles == ["probe"] and it.answer == parent.answer and it.meta["scoring"] == "probe"


def test_v14_reverses_the_order_and_keeps_the_answer(bench: Bench) -> None:
    for it, parent in _of(bench, "V14"):
        assert it.images == list(reversed(parent.image_list()))
        assert (it.answer, it.options, it.question, it.image) == (parent.answer, parent.options, parent.question,
                                                                 parent.image)
        assert "preserves_answer" in (it.roles or [])


def test_v15_blanks_one_companion_and_keeps_the_rest(bench: Bench) -> None:
    for it, parent in _of(bench, "V15"):
        refs, before = it.image_list(), parent.image_list()
        changed = [k for k, (a, b) in enumerate(zip(refs, before, strict=True)) if a != b]
        assert len(changed) == 1 and refs[changed[0]].role != "current"
        k = changed[0]
        blank, orig = load_image(bench.path(refs[k].path)), load_image(bench.path(before[k].path))
        flat, pixels = blank.reshape(-1, 1 if blank.ndim == 2 else 3), orig.reshape(-1, 1 if orig.ndim == 2 else 3)
        assert blank.shape == orig.shape and (flat == flat[0]).all()  # uniform, the companion's size
        assert np.abs(flat[0].astype(float) - pixels.mean(axis=0)).max() <= 0.5  # its mean colour
        assert it.roles == ["probe"] and it.answer == parent.answer


def test_every_variant_keeps_one_current_image_the_item_shows(bench: Bench) -> None:
    several = [it for it in bench.items if it.images]
    assert {it.variant.split("-")[0] for it in several} >= {"clean", "V1", "V8", "T12", "V13", "V14", "V15"}
    for it in several:
        current = [r for r in it.image_list() if r.role == "current"]
        assert len(current) == 1
        assert (current[0].path, current[0].sha256) == (it.image, it.image_sha256), it.variant
    by_id = {it.item_id: it for it in bench.items}
    for it in several:  # V1 / V8 change the current image only
        if it.variant.split("-")[0] in ("V1", "V8"):
            parent = by_id[it.parent_id or ""]
            assert [r for r in it.image_list() if r.role != "current"] == \
                [r for r in parent.image_list() if r.role != "current"]
