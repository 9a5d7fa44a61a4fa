"""Scoring makes an invocation's selection again (``medr2.scoring.completeness``) through eval's one selection
(``medr2.bench.select.selected_rows``): for generated invocations (split, variants, tasks, stages, limit,
stratify, shard, seed) the items eval asks and the items scoring plans are the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from medr2 import BadInput
from medr2.bench.format import ITEMS_FILE
from medr2.bench.select import STRATA, select_items
from medr2.bench.table import BenchTable
from medr2.scoring.completeness import planned_items
from medr2.scoring.itemcols import open_scoring_items
from tests.run_fixtures import make_bench, rewrite_items


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bench of 9 cases, its items table in row groups of 7 rows (row groups pruned, cases across groups)."""
    root = tmp_path_factory.mktemp("sel") / "bench"
    make_bench(root, n_cases=9)
    rewrite_items(root, pq.read_table(root / ITEMS_FILE).to_pylist(), row_group_size=7)
    return root


def _subset(values: list[Any]) -> st.SearchStrategy[list[Any] | None]:
    return st.none() | st.lists(st.sampled_from(values), min_size=1, max_size=3, unique=True)


INVOCATIONS = st.fixed_dictionaries({
    "split": st.sampled_from([None, "all", "train", "test"]),
    "variants": _subset(["clean", "V8", "V8-noise-2", "T2", "T3", "V7", "all"]),
    "tasks": _subset(["s1.modality", "s3.lesion_box", "s3.abnormal", "s4.diagnosis", "s4.multilabel", "s4.report"]),
    "stages": _subset([1, 3, 4]),
    "limit": st.none() | st.integers(1, 60),
    "stratify": _subset(list(STRATA)),
    "shard": st.none() | st.integers(1, 3).flatmap(lambda n: st.tuples(st.integers(0, n - 1), st.just(n))),
    "seed": st.integers(0, 3),
})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(inv=INVOCATIONS)
def test_eval_selection_and_the_score_time_plan_agree(bench: Path, inv: dict[str, Any]) -> None:
    stratify = inv["stratify"] if inv["limit"] is not None else None
    try:
        asked = select_items(BenchTable(bench), variants=inv["variants"], split=inv["split"], limit=inv["limit"],
                             shard=inv["shard"], tasks=inv["tasks"], stages=inv["stages"], stratify=stratify,
                             seed=inv["seed"])
    except BadInput:  # a value no item has: eval refuses it, nothing is recorded
        return
    recorded = {"modes": ["independent"], "variants": inv["variants"], "split": inv["split"], "limit": inv["limit"],
                "status": "done", **{k: v for k, v in (("tasks", inv["tasks"]), ("stages", inv["stages"]),
                                                       ("stratify", stratify)) if v is not None}}
    identity: dict[str, Any] = {"generation": {"seed": inv["seed"]}}
    if inv["shard"] is not None:
        identity["shard"] = f"{inv['shard'][0]}/{inv['shard'][1]}"
    _, items = open_scoring_items(bench)
    plan = planned_items({"identity": identity, "invocations": [recorded]}, items)
    assert plan is not None
    planned = set(items.ids(np.flatnonzero(plan["independent"])))
    assert planned == {it.item_id for it in asked}
    assert len(asked) == len(planned)
