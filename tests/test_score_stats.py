"""Case bootstrap, paired deltas and exact McNemar."""

from __future__ import annotations

import time

import numpy as np
import pytest
from scipy.stats import binomtest

from medr2.score.stats import MetricBook, bootstrap_mean, mcnemar_exact, paired_delta, seed_for


def _data(n_cases: int = 40, per_case: int = 5, seed: int = 0) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    cases = [f"c{i}" for i in range(n_cases) for _ in range(per_case)]
    return cases, (rng.random(n_cases * per_case) < 0.6).astype(float)


def test_seeded_and_reproducible() -> None:
    cases, v = _data()
    a, b = bootstrap_mean(cases, v, seed=5), bootstrap_mean(cases, v, seed=5)
    assert a == b
    assert bootstrap_mean(cases, v, seed=6)["lo"] != a["lo"]
    assert a["value"] == pytest.approx(v.mean())
    assert a["lo"] < a["value"] < a["hi"]
    assert (a["n"], a["n_cases"]) == (200, 40)


def test_row_order_does_not_change_the_result() -> None:
    cases, v = _data()
    perm = np.random.default_rng(1).permutation(len(cases))
    assert bootstrap_mean([cases[i] for i in perm], v[perm], seed=2) == bootstrap_mean(cases, v, seed=2)


def test_items_of_one_case_move_together() -> None:
    # one case: every resample holds that case, so the interval collapses to the value
    r = bootstrap_mean(["only"] * 10, [1, 0, 1, 1, 0, 1, 0, 1, 1, 1], seed=0)
    assert r["lo"] == r["hi"] == r["value"] == pytest.approx(0.7)
    # perfectly correlated items within cases give a wider interval than the same values spread over cases
    clustered = bootstrap_mean([f"c{i // 10}" for i in range(200)], [float((i // 10) % 2) for i in range(200)], seed=0)
    spread = bootstrap_mean([f"c{i}" for i in range(200)], [float((i // 10) % 2) for i in range(200)], seed=0)
    assert (clustered["hi"] - clustered["lo"]) > 2 * (spread["hi"] - spread["lo"])


def test_interval_matches_a_direct_loop_bootstrap() -> None:
    cases, v = _data(n_cases=30, per_case=4, seed=3)
    book = MetricBook(cases)
    idx = book.case_index(cases)
    m = book.ratio_metric(idx, v)
    totals = book.resampled_totals(500, seed=11)
    got = book.evaluate(500, seed=11)[m]
    # direct: the same resampled case indices, summed item by item
    rng = np.random.default_rng(11)
    direct = []
    for _ in range(500):
        pick = rng.integers(0, 30, size=30, dtype=np.int32)
        num = sum(v[idx == c].sum() for c in pick)
        den = sum((idx == c).sum() for c in pick)
        direct.append(num / den)
    assert np.allclose(np.sort(totals[:, 0] / totals[:, 1]), np.sort(direct))
    assert got["lo"] == pytest.approx(np.quantile(direct, 0.025))
    assert got["hi"] == pytest.approx(np.quantile(direct, 0.975))


def test_paired_delta_is_tighter_than_unpaired() -> None:
    rng = np.random.default_rng(4)
    case_effect = np.repeat(rng.random(50), 4)
    first = (case_effect + 0.1 * rng.random(200) > 0.5).astype(float)
    second = (case_effect + 0.1 * rng.random(200) > 0.55).astype(float)
    cases = [f"c{i // 4}" for i in range(200)]
    d = paired_delta(cases, first, second, seed=0)
    assert d["value"] == pytest.approx(first.mean() - second.mean())
    a = bootstrap_mean(cases, first, seed=1)
    b = bootstrap_mean(cases, second, seed=2)
    assert (d["hi"] - d["lo"]) < ((a["hi"] - a["lo"]) + (b["hi"] - b["lo"])) / 2


def test_mcnemar_exact_against_scipy() -> None:
    first = np.array([1] * 30 + [0] * 10 + [1] * 5 + [0] * 55, dtype=bool)
    second = np.array([1] * 30 + [1] * 10 + [0] * 5 + [0] * 55, dtype=bool)
    r = mcnemar_exact(first, second)
    assert (r["only_first"], r["only_second"], r["n_pairs"]) == (5, 10, 100)
    assert r["p"] == pytest.approx(binomtest(5, 15, 0.5).pvalue)
    assert mcnemar_exact(first, first)["p"] == 1.0


def test_undefined_metric_is_null() -> None:
    book = MetricBook(["a", "b"])
    idx = book.case_index(["a", "b"])
    m = book.ratio_metric(idx, np.zeros(2), den=np.zeros(2))
    r = book.evaluate(50, 0)[m]
    assert r["value"] is None and r["lo"] is None and r["n"] == 0


def test_seed_for_is_stable() -> None:
    assert seed_for(0, "bootstrap") == seed_for(0, "bootstrap") != seed_for(1, "bootstrap")


def test_scale_fast_subset() -> None:
    """200,000 predictions over 10,000 cases, 80 metrics, 1,000 resamples in well under the budget
    (the full 1,000,000 x 1,000 check is the slow test below)."""
    rng = np.random.default_rng(0)
    n, c = 200_000, 10_000
    cases = np.array([f"c{i:05d}" for i in range(c)])
    book = MetricBook(cases.tolist())
    idx = rng.integers(0, c, n)
    groups = rng.integers(0, 40, n)
    y = rng.random(n) < 0.6
    t = time.perf_counter()
    for g in range(40):
        sel = groups == g
        book.ratio_metric(idx[sel], y[sel])
    res = book.evaluate(1000, 0)
    assert time.perf_counter() - t < 30
    assert all(r["lo"] is not None for r in res)


@pytest.mark.slow
def test_scale_one_million_predictions() -> None:
    import resource

    rng = np.random.default_rng(0)
    n, c = 1_000_000, 50_000
    book = MetricBook([f"c{i:06d}" for i in range(c)])
    idx = rng.integers(0, c, n)
    groups = rng.integers(0, 200, n)
    y = rng.random(n) < 0.6
    t = time.perf_counter()
    order = np.argsort(groups, kind="stable")
    bounds = np.searchsorted(groups[order], np.arange(201))
    for g in range(200):
        sel = order[bounds[g]:bounds[g + 1]]
        book.ratio_metric(idx[sel], y[sel])
    book.evaluate(1000, 0)
    assert time.perf_counter() - t <= 60
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6 <= 4.0  # kB -> GB
