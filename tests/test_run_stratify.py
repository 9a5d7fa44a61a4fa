"""``medr2 eval --limit N --stratify KEYS`` (:func:`medr2.bench.select.stratified_ids`), over generated selections:
at most N items and at least one; a variant item comes with its clean item; over one key the values are as even
as their supply allows; the sample depends on the seed and the items, not on the order they are listed in; and
the command line refuses a stratification it cannot make. (That eval's selection of a bench read by columns or held
in memory and scoring's plan are the same sample: tests/test_run_columnar.py, tests/test_score_completeness.py.)"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, strategies as st

from medr2 import BadInput
from medr2.bench.select import parse_stratify, stratified_ids

TASKS = ("s1.modality", "s2.organ_box", "s3.abnormal", "s4.report")
VARIANTS = ("V1", "V8-blur-1", "V8-noise-2", "T3")


@st.composite
def selections(draw: Any) -> list[dict[str, Any]]:
    """Clean items of some tasks, and variant items of some of them (their parent the clean item, which the
    selection may or may not hold, as a ``--variants`` filter can drop it)."""
    n_clean = draw(st.integers(0, 30))
    rows: list[dict[str, Any]] = []
    for i in range(n_clean):
        rows.append({"item_id": f"c{i}", "parent_id": None, "task": draw(st.sampled_from(TASKS)), "variant": "clean",
                     "stage": draw(st.integers(1, 4))})
    for j in range(draw(st.integers(0, 40))):
        parent = draw(st.integers(0, n_clean - 1)) if n_clean else None
        task = rows[parent]["task"] if parent is not None else draw(st.sampled_from(TASKS))
        rows.append({"item_id": f"v{j}", "parent_id": f"c{parent}" if parent is not None else None, "task": task,
                     "variant": draw(st.sampled_from(VARIANTS)), "stage": draw(st.integers(1, 4))})
    if draw(st.booleans()):  # some clean items filtered out of the selection
        keep = draw(st.sets(st.integers(0, max(0, n_clean - 1)), max_size=n_clean))
        rows = [r for r in rows if r["variant"] != "clean" or int(r["item_id"][1:]) in keep]
    return rows


@given(rows=selections(), limit=st.integers(1, 80), keys=st.sampled_from([("task",), ("variant",), ("task", "variant"),
                                                                        ("stage", "task")]),
       seed=st.integers(0, 3))
def test_the_sample_is_bounded_paired_and_independent_of_listing_order(rows: list[dict[str, Any]], limit: int,
                                                                       keys: tuple[str, ...], seed: int) -> None:
    chosen = stratified_ids(rows, limit, keys, seed)
    ids = {r["item_id"] for r in rows}
    assert chosen <= ids and len(chosen) <= limit
    assert bool(chosen) == bool(rows)
    if limit >= len(rows):
        assert chosen == ids
    for r in rows:
        if r["item_id"] in chosen and r["parent_id"] in ids:
            assert r["parent_id"] in chosen  # a variant item is read with its clean item
    shuffled = rows[:]
    random.Random(seed).shuffle(shuffled)
    assert stratified_ids(shuffled, limit, keys, seed) == chosen


@given(counts=st.lists(st.integers(0, 12), min_size=1, max_size=6), limit=st.integers(1, 50), seed=st.integers(0, 5))
def test_over_one_key_the_values_are_as_even_as_their_supply_allows(counts: list[int], limit: int,
                                                                     seed: int) -> None:
    rows = [{"item_id": f"{t}-{i}", "parent_id": None, "task": f"t{t}"} for t, n in enumerate(counts)
            for i in range(n)]
    chosen = stratified_ids(rows, limit, ("task",), seed)
    assert len(chosen) == min(limit, len(rows))
    got = Counter(i.split("-")[0] for i in chosen)
    supply = {str(t): n for t, n in enumerate(counts) if n}
    for a in supply:
        for b in supply:
            if got[a] < supply[a]:  # a still had items: no other value got more than one more than a
                assert got[b] <= got[a] + 1, (got, supply)


def test_variant_ids_are_one_stratum_per_code() -> None:
    rows = [{"item_id": f"{v}{i}", "parent_id": None, "variant": v} for v in ("clean", "V8-blur-1", "V8-noise-2",
                                                                             "V9") for i in range(10)]
    code = {str(r["item_id"]): str(r["variant"]).split("-")[0] for r in rows}
    got = Counter(code[i] for i in stratified_ids(rows, 9, ("variant",)))
    assert got == {"clean": 3, "V8": 3, "V9": 3}  # V8's two ids share its third


def test_a_stratification_it_cannot_make_is_refused() -> None:
    assert parse_stratify(None, 5) is None and parse_stratify(["task", "task"], 5) == ("task",)
    with pytest.raises(BadInput, match="--limit"):
        parse_stratify(["task"], None)
    with pytest.raises(BadInput, match="valid: task, variant, stage, form"):
        parse_stratify(["colour"], 5)
