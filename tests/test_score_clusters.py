"""The bootstrap resamples the patient wherever cases share one (issue 50, point 2).

Cases of one patient (or of one source image) share a random effect; a case bootstrap treats them as
independent and its intervals are too narrow. The simulation draws patients whose cases share a success
probability (Beta distributed, so the population mean is known exactly) and checks the coverage of the 95%
interval of both bootstraps: the patient bootstrap near nominal, the case bootstrap well under it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from hypothesis import given, settings, strategies as st

from medr2.scoring.stats import MetricBook, bootstrap_mean


def _simulate(rng: np.random.Generator, patients: int, cases_per: int, items_per: int, a: float, b: float
              ) -> tuple[list[str], list[float], dict[str, str]]:
    p = rng.beta(a, b, size=patients)  # each patient's probability: shared by all its cases
    case_ids, values, clusters = [], [], {}
    for i in range(patients):
        for j in range(cases_per):
            cid = f"p{i}-c{j}"
            clusters[cid] = f"p{i}"
            for _ in range(items_per):
                case_ids.append(cid)
                values.append(float(rng.random() < p[i]))
    return case_ids, values, clusters


def test_patient_bootstrap_covers_where_the_case_bootstrap_under_covers() -> None:
    rng = np.random.default_rng(20261206)
    a, b = 2.0, 2.0
    truth = a / (a + b)
    reps, hits_patient, hits_case = 300, 0, 0
    for r in range(reps):
        case_ids, values, clusters = _simulate(rng, patients=30, cases_per=6, items_per=3, a=a, b=b)
        by_patient = bootstrap_mean(case_ids, values, seed=r, n_resamples=400, clusters=clusters)
        by_case = bootstrap_mean(case_ids, values, seed=r, n_resamples=400)
        hits_patient += by_patient["lo"] <= truth <= by_patient["hi"]
        hits_case += by_case["lo"] <= truth <= by_case["hi"]
    cover_patient, cover_case = hits_patient / reps, hits_case / reps
    # 300 replicates: a binomial standard error of about 1.3 points at 95%
    assert 0.89 <= cover_patient <= 0.99, cover_patient
    assert cover_case <= 0.80, cover_case
    assert cover_patient - cover_case >= 0.15, (cover_patient, cover_case)


@settings(max_examples=30, deadline=None)
@given(n_cases=st.integers(1, 40), seed=st.integers(0, 2**32 - 1), resamples=st.integers(1, 50))
def test_singleton_clusters_are_the_case_bootstrap_byte_for_byte(n_cases: int, seed: int, resamples: int) -> None:
    rng = np.random.default_rng(seed)
    case_ids = [f"c{rng.integers(0, n_cases)}" for _ in range(3 * n_cases)]
    values = rng.random(len(case_ids)).round(2)
    singletons = {c: f"patient-{c}" for c in case_ids}
    plain = bootstrap_mean(case_ids, list(values), seed=seed, n_resamples=resamples)
    clustered = bootstrap_mean(case_ids, list(values), seed=seed, n_resamples=resamples, clusters=singletons)
    assert json.dumps(plain) == json.dumps(clustered)
    assert MetricBook(case_ids, singletons).unit == "case"


@settings(max_examples=30, deadline=None)
@given(groups=st.lists(st.integers(0, 5), min_size=2, max_size=30))
def test_the_book_says_which_unit_it_resamples(groups: list[int]) -> None:
    cases = [f"c{i}" for i in range(len(groups))]
    clusters = {c: f"p{g}" for c, g in zip(cases, groups, strict=True)}
    book = MetricBook(cases, clusters)
    shared = len(set(groups)) < len(groups)
    assert book.unit == ("patient" if shared else "case")
    assert book.n_units == (len(set(groups)) if shared else len(cases))
    # every resample draws whole patients: a patient's cases always come back together
    idx = book.case_index(cases)
    cols = [book.component(idx, (np.arange(len(cases)) == k).astype(float)) for k in range(len(cases))]
    for k in cols:
        book.metric([k], lambda x: x, n=1, n_cases=1)
    totals = book.resampled_totals(20, seed=1)
    for i, ci in enumerate(cases):
        for j, cj in enumerate(cases):
            if clusters[ci] == clusters[cj]:
                assert np.array_equal(totals[:, cols[i]], totals[:, cols[j]])


def test_score_reports_the_patient_bootstrap(tmp_path: Path) -> None:
    """A bench whose test cases share patients: ``metrics.json`` says the patient was resampled, and how many;
    a bench of one case per patient says ``case``."""
    from medr2 import ModelConfig
    from medr2.bench import write_bench
    from medr2.images import ImageStore
    from medr2.run.runner import EvalConfig, run_eval
    from medr2.scoring.scorer import score_run
    from tests.run_fixtures import make_items

    for shared in (True, False):
        root = tmp_path / f"bench-{shared}"
        cases, items = make_items(ImageStore(root), 8)  # cases alternate train / test
        if shared:  # the four test cases (1, 3, 5, 7) from two patients
            cases = [c.model_copy(update={"patient_id": f"p{int(c.case_id[4:]) // 4}"}) for c in cases]
        write_bench(root, cases, items, {"name": "clusters"})
        run = tmp_path / f"run-{shared}"
        run_eval(EvalConfig(bench=root, model=ModelConfig("baseline:random"), out=run))
        metrics = score_run(run, n_resamples=50)
        boot = json.loads((run / "metrics.json").read_text())["bootstrap"]
        assert boot == metrics["bootstrap"]
        assert (boot["unit"], boot["n_units"]) == (("patient", 2) if shared else ("case", 4)), boot
        assert boot["n_cases"] == 4
