"""Metrics from chunks of whole cases (``medr2.scoring.aggregate``): the same bytes as one pass over the table."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from medr2 import BoxConvention
from medr2.scoring.aggregate import MetricsAccumulator
from medr2.scoring.metrics import compute_metrics
from medr2.scoring.partial import PairTests, TestView
from medr2.scoring.scorer import score_items
from medr2.scoring.stats import clustered_mcnemar, mcnemar_exact
from medr2.scoring.table import SeverityFloors, build_table
from tests.score_fixtures import make_items, predict

ITEMS = make_items()
BY_ID = {it.item_id: it for it in ITEMS}
MODES = ("independent", "blind")


def _table(spec: str) -> pd.DataFrame:
    preds = [p for m in MODES for p in predict(spec, ITEMS, mode=m)]
    return build_table(BY_ID, score_items(BY_ID, preds, BoxConvention()))


@pytest.mark.parametrize("spec", ["baseline:random", "baseline:follow-hint"])
def test_chunks_of_cases_give_the_whole_table_bytes(spec: str) -> None:
    table = _table(spec)
    whole = json.dumps(compute_metrics(table, seed=5, n_resamples=100), sort_keys=True)
    floors = SeverityFloors(BY_ID)
    floors.add(table["item_id"].tolist(), table["mode"].tolist())
    acc = MetricsAccumulator()
    cases = sorted(table["case_id"].unique())
    assert len(cases) > 2
    table = table.assign(_order=np.arange(len(table)))
    for case in cases:  # one case per chunk, rows in table order
        acc.add(table[table["case_id"] == case], severity_floors=floors.floors)
    assert json.dumps(acc.finish(seed=5, n_resamples=100), sort_keys=True) == whole


def test_a_case_split_across_chunks_is_refused() -> None:
    table = _table("baseline:random")
    acc = MetricsAccumulator()
    acc.add(table.iloc[: len(table) // 2])
    acc.add(table.iloc[len(table) // 2:])
    with pytest.raises(ValueError, match="more than one chunk"):
        acc.finish(seed=0, n_resamples=10)


def test_pair_tests_merged_equal_the_tests_of_all_pairs() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.random(300) < 0.6, rng.random(300) < 0.4
    idx = np.repeat(np.arange(30), 10)
    merged = PairTests.of(a[:150], b[:150], idx[:150]).merge(PairTests.of(a[150:], b[150:], idx[150:]))
    exact = {**mcnemar_exact(a, b), "n_cases": 30}
    assert merged.n_cases == 30 and merged.only_first == exact["only_first"]
    assert TestView(merged, "mcnemar").resolve() == exact
    assert TestView(merged, "cluster_test").resolve() == clustered_mcnemar(a, b, idx)


@pytest.mark.parametrize("spec", ["baseline:random", "baseline:follow-hint"])
def test_chunk_metrics_pickled_and_absorbed_give_the_whole_table_bytes(spec: str) -> None:
    """What a worker process sends back for a chunk (``chunk_metrics``, pickled: numbers, no rows) absorbed in
    chunk order gives the bytes of one pass over the table; every built-in metric group's combine function
    pickles."""
    import pickle

    from medr2.scoring.aggregate import chunk_metrics

    table = _table(spec)
    whole = json.dumps(compute_metrics(table, seed=5, n_resamples=100), sort_keys=True)
    floors = SeverityFloors(BY_ID)
    floors.add(table["item_id"].tolist(), table["mode"].tolist())
    table = table.assign(_order=np.arange(len(table)))
    acc = MetricsAccumulator()
    for case in sorted(table["case_id"].unique()):
        got = chunk_metrics(table[table["case_id"] == case], floors.floors)
        assert got.rows and got.metrics and all(m.sums is not None or m.parts for m in got.metrics)
        acc.absorb(pickle.loads(pickle.dumps(got)))
    assert json.dumps(acc.finish(seed=5, n_resamples=100), sort_keys=True) == whole
