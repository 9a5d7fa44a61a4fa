"""Case bootstrap, paired deltas, exact McNemar, the cluster-aware paired test and the low-n flag."""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest
from scipy.stats import binomtest

from medr2.scoring.stats import (
    EXACT_SIGN_FLIP_MAX,
    LOW_N_CASES,
    MetricBook,
    bootstrap_mean,
    clustered_mcnemar,
    mcnemar_exact,
    paired_delta,
    seed_for,
)


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


def _clustered_null(rng: np.random.Generator, n_cases: int = 40) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One simulated dataset under a true null with clustering: each case has 2-12 items; a case-level
    ability ``u`` and a case-level tilt ``v`` towards one condition (symmetric, so both conditions have the
    same accuracy over cases), items independent given their case."""
    sizes = rng.integers(2, 13, n_cases)
    idx = np.repeat(np.arange(n_cases), sizes)
    u, v = rng.normal(0, 1.0, n_cases), rng.normal(0, 1.2, n_cases)
    p1 = 1 / (1 + np.exp(-(0.3 + u + v)))
    p2 = 1 / (1 + np.exp(-(0.3 + u - v)))
    return rng.random(idx.size) < p1[idx], rng.random(idx.size) < p2[idx], idx


def test_clustered_mcnemar_holds_its_level_where_item_level_mcnemar_does_not() -> None:
    """1,000 seeded datasets under a true null with case clustering: the cluster-aware test rejects at 5% in
    3-7% of them; the item-level exact McNemar (which treats items of a case as independent) far more often."""
    rng = np.random.default_rng(20261201)
    n_sets = 1000
    cluster = item = 0
    for _ in range(n_sets):
        a, b, idx = _clustered_null(rng)
        cluster += clustered_mcnemar(a, b, idx)["p"] < 0.05
        item += mcnemar_exact(a, b)["p"] < 0.05
    assert 0.03 <= cluster / n_sets <= 0.07, cluster / n_sets
    assert item / n_sets > 0.15, item / n_sets  # the item-level test is anti-conservative under clustering


def test_clustered_mcnemar_detects_a_real_difference() -> None:
    rng = np.random.default_rng(3)
    sizes = rng.integers(2, 13, 40)
    idx = np.repeat(np.arange(40), sizes)
    a = rng.random(idx.size) < 0.8
    b = rng.random(idx.size) < 0.55
    r = clustered_mcnemar(a, b, idx)
    assert r["p"] < 0.001 and r["method"] == "durkalski" and r["n_cases"] == 40
    assert (r["only_first"], r["only_second"]) == (int(np.sum(a & ~b)), int(np.sum(~a & b)))


def test_clustered_mcnemar_small_samples_use_the_exact_sign_flip_distribution() -> None:
    # per case: (right only first, right only second); case 3 has no discordant pair
    per_case = [(3, 0), (2, 1), (0, 1), (0, 0), (4, 0)]
    a, b, idx = [], [], []
    for k, (only_a, only_b) in enumerate(per_case):
        a += [True] * only_a + [False] * only_b + [True]  # one concordant pair per case
        b += [False] * only_a + [True] * only_b + [True]
        idx += [k] * (only_a + only_b + 1)
    r = clustered_mcnemar(np.array(a), np.array(b), np.array(idx))
    d = [x - y for x, y in per_case if x != y]
    flips = [abs(sum(s * x for s, x in zip(signs, d, strict=True))) for signs in product((1, -1), repeat=len(d))]
    assert r["method"] == "sign-flip exact" and len(d) <= EXACT_SIGN_FLIP_MAX
    assert r["p"] == pytest.approx(np.mean([f >= abs(sum(d)) for f in flips]))
    assert r["statistic"] == pytest.approx(sum(d) ** 2 / sum(x * x for x in d))
    none = clustered_mcnemar(np.array([True, False]), np.array([True, False]), np.array([0, 1]))
    assert none["p"] == 1.0 and none["only_first"] == none["only_second"] == 0
    assert clustered_mcnemar(np.array([], bool), np.array([], bool), np.array([], int))["p"] == 1.0


def test_low_n_flags_values_from_fewer_than_ten_cases() -> None:
    few = bootstrap_mean([f"c{i % (LOW_N_CASES - 1)}" for i in range(50)], [1.0, 0.0] * 25, seed=0)
    enough = bootstrap_mean([f"c{i % LOW_N_CASES}" for i in range(50)], [1.0, 0.0] * 25, seed=0)
    assert few["n_cases"] == LOW_N_CASES - 1 and few["low_n"] is True
    assert enough["n_cases"] == LOW_N_CASES and enough["low_n"] is False


def test_undefined_metric_is_null() -> None:
    book = MetricBook(["a", "b"])
    idx = book.case_index(["a", "b"])
    m = book.ratio_metric(idx, np.zeros(2), den=np.zeros(2))
    r = book.evaluate(50, 0)[m]
    assert r["value"] is None and r["lo"] is None and r["n"] == 0


def test_seed_for_is_stable() -> None:
    assert seed_for(0, "bootstrap") == seed_for(0, "bootstrap") != seed_for(1, "bootstrap")


def test_scale_fast_subset() -> None:
    """200,000 predictions over 10,000 cases, 40 metrics, 1,000 resamples: every metric gets its interval around
    its value (how long it takes is measured by bench/bench_score.py, docs/benchmarks.md, not asserted here)."""
    rng = np.random.default_rng(0)
    n, c = 200_000, 10_000
    cases = np.array([f"c{i:05d}" for i in range(c)])
    book = MetricBook(cases.tolist())
    idx = rng.integers(0, c, n)
    groups = rng.integers(0, 40, n)
    y = rng.random(n) < 0.6
    for g in range(40):
        sel = groups == g
        book.ratio_metric(idx[sel], y[sel])
    res = book.evaluate(1000, 0)
    assert len(res) == 40
    for g, r in enumerate(res):
        sel = groups == g
        assert r["value"] == pytest.approx(y[sel].mean())
        assert r["lo"] is not None and r["lo"] <= r["value"] <= r["hi"] and r["hi"] - r["lo"] < 0.1


@pytest.mark.slow
def test_scale_one_million_predictions() -> None:
    import resource

    rng = np.random.default_rng(0)
    n, c = 1_000_000, 50_000
    book = MetricBook([f"c{i:06d}" for i in range(c)])
    idx = rng.integers(0, c, n)
    groups = rng.integers(0, 200, n)
    y = rng.random(n) < 0.6
    order = np.argsort(groups, kind="stable")
    bounds = np.searchsorted(groups[order], np.arange(201))
    for g in range(200):
        sel = order[bounds[g]:bounds[g + 1]]
        book.ratio_metric(idx[sel], y[sel])
    res = book.evaluate(1000, 0)
    assert len(res) == 200 and all(r["lo"] is not None and r["lo"] <= r["value"] <= r["hi"] for r in res)
    # its time is measured by bench/bench_score.py (docs/benchmarks.md); the memory bound is held here
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6 <= 4.0  # kB -> GB
