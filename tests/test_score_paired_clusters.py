"""The paired tests (the cluster-aware McNemar of ``metrics.json`` and the case-swap test of
:mod:`medr2.scoring.paired`) group by the unit the intervals resample: the patient where cases share one.

A seeded simulation of a true null with patient-level correlation (each patient tilts towards one condition,
symmetric over patients) shows the case-level grouping is anti-conservative and the patient-level one holds its
level; hypothesis checks that a patient split across chunks is tested as one unit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from medr2.scoring.paired import case_swap_test
from medr2.scoring.partial import PairTests, TestView
from medr2.scoring.stats import MetricBook, clustered_mcnemar

ALPHA = 0.05


def _patient_null(rng: np.random.Generator, n_patients: int = 24
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, str]]:
    """One dataset under a true null: each patient has 2-6 cases of 1-3 items; a patient-level tilt ``v``
    towards one condition (mean 0 over patients) and a case-level ability ``u``; items independent given both.
    Returns the two conditions' outcomes per item, each item's case id and the case -> patient map."""
    n_cases = rng.integers(2, 7, n_patients)
    patient_of_case = np.repeat(np.arange(n_patients), n_cases)
    v = rng.normal(0, 1.5, n_patients)[patient_of_case]
    u = rng.normal(0, 0.7, patient_of_case.size)
    items = rng.integers(1, 4, patient_of_case.size)
    case = np.repeat(np.arange(patient_of_case.size), items)
    p1 = 1 / (1 + np.exp(-(0.2 + u + v)))
    p2 = 1 / (1 + np.exp(-(0.2 + u - v)))
    a, b = rng.random(case.size) < p1[case], rng.random(case.size) < p2[case]
    ids = np.array([f"c{i:04d}" for i in range(patient_of_case.size)], dtype=object)
    clusters = {str(ids[i]): f"p{patient_of_case[i]}" for i in range(ids.size)}
    return a, b, ids[case], clusters


def test_patient_clustered_mcnemar_holds_its_level_where_the_case_level_test_does_not() -> None:
    """600 seeded datasets: resolved over a book that knows the patients (what ``medr2 score`` does), the test
    rejects at 5% in 3-8% of them and says it grouped patients; grouped by case it rejects far more often."""
    rng = np.random.default_rng(20261206)
    n_sets, patient, case = 600, 0, 0
    for _ in range(n_sets):
        a, b, case_ids, clusters = _patient_null(rng)
        tests = PairTests.of(a, b, case_ids)
        by_patient = TestView(tests, "cluster_test").resolve(MetricBook(list(clusters), clusters))
        by_case = TestView(tests, "cluster_test").resolve(MetricBook(list(clusters)))
        assert by_patient["unit"] == "patient" and by_patient["n_units"] == len(set(clusters.values()))
        assert by_case["unit"] == "case" and by_case["n_units"] == len(clusters)
        patient += by_patient["p"] < ALPHA
        case += by_case["p"] < ALPHA
    assert 0.03 <= patient / n_sets <= 0.08, patient / n_sets
    assert case / n_sets > 0.12, case / n_sets  # cases of one patient are not independent


def _swap_p(book: MetricBook, a: np.ndarray, b: np.ndarray, case_ids: np.ndarray, seed: int) -> dict:
    idx = book.case_index(case_ids)
    ma, mb = book.ratio_metric(idx, a.astype(float)), book.ratio_metric(idx, b.astype(float))
    return case_swap_test(book, ma, mb, n_resamples=400, seed=seed)


def test_case_swap_test_swaps_patients_and_holds_its_level() -> None:
    """The randomisation test of :func:`medr2.scoring.paired.compare_metrics` on the same null: swapping whole
    patients keeps the level; swapping cases (a book without the patients) does not."""
    rng = np.random.default_rng(7)
    n_sets, patient, case = 400, 0, 0
    for k in range(n_sets):
        a, b, case_ids, clusters = _patient_null(rng)
        got = _swap_p(MetricBook(list(clusters), clusters), a, b, case_ids, k)
        assert got["unit"] == "patient" and got["n_units"] == len(set(clusters.values()))
        patient += got["p"] < ALPHA
        case += _swap_p(MetricBook(list(clusters)), a, b, case_ids, k)["p"] < ALPHA
    assert 0.025 <= patient / n_sets <= 0.085, patient / n_sets
    assert case / n_sets > 0.12, case / n_sets


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_a_patient_split_across_chunks_is_tested_as_one_unit(data: st.DataObject) -> None:
    """Chunks of whole cases (the scorer's) may split a patient: merged and resolved over the book, the test is
    the one over all pairs grouped by patient."""
    n_cases = data.draw(st.integers(1, 30), label="cases")
    patient = data.draw(st.lists(st.integers(0, 7), min_size=n_cases, max_size=n_cases), label="patient of case")
    items = data.draw(st.lists(st.integers(1, 4), min_size=n_cases, max_size=n_cases), label="items per case")
    case = np.repeat(np.arange(n_cases), items)
    a = np.array(data.draw(st.lists(st.booleans(), min_size=case.size, max_size=case.size)), dtype=bool)
    b = np.array(data.draw(st.lists(st.booleans(), min_size=case.size, max_size=case.size)), dtype=bool)
    ids = np.array([f"c{i:03d}" for i in case], dtype=object)
    clusters = {f"c{i:03d}": f"p{patient[i]}" for i in range(n_cases)}
    cut_case = data.draw(st.integers(0, n_cases), label="first case of the second chunk")
    cut = int(np.searchsorted(case, cut_case))
    parts = [PairTests.of(a[s], b[s], ids[s]) for s in (slice(0, cut), slice(cut, None))]
    book = MetricBook(list(clusters), clusters)
    got = TestView(parts[0].merge(parts[1]), "cluster_test").resolve(book)
    units = book.unit_index(book.case_index(ids))
    want = clustered_mcnemar(a, b, units, unit=book.unit)
    assert {k: got[k] for k in ("p", "statistic", "method", "unit", "n_units")} == \
        {k: want[k] for k in ("p", "statistic", "method", "unit", "n_units")}
    assert got["n_cases"] == n_cases and got["n_pairs"] == case.size
