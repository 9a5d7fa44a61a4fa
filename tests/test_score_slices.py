"""Subgroup slices and harm (medr2.scoring.slices, medr2.scoring.harm): the gap test's power and level on a scripted
model, slice bookkeeping (missing values, low n, combinations, bins), harm weights that change no accuracy,
silent failures with and without a confidence, and the override file's validation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from medr2 import BadInput, Item, Score
from medr2.bench.slicefields import MISSING, SLICE_FIELDS, bin_label, parse_bins
from medr2.records import item_content_id
from medr2.scoring.harm import (
    DEFAULT_WEIGHTS,
    HarmSpec,
    harm_units,
    item_weights,
    load_harm,
    parse_harm,
    silent_failures,
)
from medr2.scoring.slices import parse_slicings, slice_metrics
from medr2.scoring.stats import holm
from medr2.scoring.table import build_table

ITEMS_PER_CASE = 3
TASKS = ("s1.modality", "s3.finding_type", "s4.diagnosis")  # low, high, high risk


def _item(case_id: str, k: int) -> Item:
    fields: dict[str, Any] = {
        "case_id": case_id, "stage": int(TASKS[k][1]), "task": TASKS[k], "form": "mcq", "question": f"q{k}?",
        "options": ["pneumothorax", "cyst", "nodule", "normal"], "answer": "A", "chance": 0.25, "template_id": "t0",
        "source": "test", "license": "CC0", "image_width": 10, "image_height": 10, "image": "images/x.png",
        "split": "test"}
    fields["item_id"] = item_content_id(fields)
    return Item(**fields)


def _structure(n_per_group: int, groups: int) -> tuple[pd.DataFrame, list[Item]]:
    """Cases (``group``: 0..groups-1) and their items; the model's answers are drawn per replication."""
    n = n_per_group * groups
    case_ids = [f"c{i:05d}" for i in range(n)]
    items = [_item(c, k) for c in case_ids for k in range(ITEMS_PER_CASE)]
    cases = pd.DataFrame({"group": np.repeat(np.arange(groups), n_per_group)}, index=pd.Index(case_ids))
    return cases, items


def _scripted_table(items: list[Item], correct: np.ndarray) -> pd.DataFrame:
    """The tidy table of a scripted model answering ``A`` where ``correct`` and ``B`` elsewhere."""
    scores = [Score(item_id=it.item_id, model_key="scripted", mode="independent",
                    verdict="correct" if ok else "wrong", parsed="A" if ok else "B", method="rule")
              for it, ok in zip(items, correct, strict=True)]
    return build_table({it.item_id: it for it in items}, scores)


def _answers(rng: np.random.Generator, group: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """Per item right with the case's ability: its group's accuracy + a case effect (uniform ±0.15, mean 0)."""
    ability = acc[group] + rng.uniform(-0.15, 0.15, size=group.size)
    p = np.repeat(ability, ITEMS_PER_CASE)
    return rng.random(p.size) < p


def _rejections(field: str, labels: list[str], acc: list[float], n_per_group: int, reps: int, seed: int) -> float:
    cases, items = _structure(n_per_group, len(labels))
    base = _scripted_table(items, np.ones(len(items), dtype=bool))
    values = pd.DataFrame({field: np.asarray(labels, dtype=object)[cases["group"].to_numpy()]}, index=cases.index)
    rng = np.random.default_rng(seed)
    hits = 0
    for r in range(reps):
        ok = _answers(rng, cases["group"].to_numpy(), np.asarray(acc))
        rows = base.copy()
        rows["correct"] = ok
        rows["verdict"] = np.where(ok, "correct", "wrong")
        got = slice_metrics(rows, values, [(field,)], seed=r, n_resamples=200)
        gap = got["modes"]["independent"]["slicings"][field]["gaps"]["accuracy"]
        hits += bool(gap["significant"])
    return hits / reps


def test_a_planted_ten_point_gap_on_one_sex_is_detected_at_the_stated_power() -> None:
    """160 cases per sex, 3 items per case, accuracy 0.70 (M) vs 0.60 (F) with a case effect (uniform ±0.15):
    the stated power is 0.90 (per-case mean variance ≈ 0.075, so se(gap) ≈ √(2 · 0.075 / 160) = 0.031 and
    Φ(0.10 / 0.031 − 1.96) ≈ 0.90). The largest accuracy gap is significant (Holm-adjusted p < 0.05) in at least
    80% of 100 seeded replications (measured: 0.89; the bound is 3 binomial standard errors below 0.90)."""
    power = _rejections("sex", ["F", "M"], [0.60, 0.70], 160, reps=100, seed=46)
    assert power >= 0.80, power


def test_without_a_gap_the_holm_adjusted_false_positive_rate_is_within_nominal() -> None:
    """Three age bins of 120 cases with the same accuracy: over 300 seeded replications the family-wise rate of a
    significant largest gap (Holm over the 3 pairs) is at most 5% + 2.33 binomial standard errors (7.9%;
    measured: 5.7%)."""
    reps = 300
    rate = _rejections("age", ["<40", "40-65", ">=65"], [0.65, 0.65, 0.65], 120, reps=reps, seed=7)
    assert rate <= 0.05 + 2.33 * np.sqrt(0.05 * 0.95 / reps), rate


def _table_and_values(n_cases: int, sexes: list[str | None]) -> tuple[pd.DataFrame, pd.DataFrame]:
    cases, items = _structure(n_cases, 1)
    ok = np.random.default_rng(0).random(len(items)) < 0.6
    rows = _scripted_table(items, ok)
    sex = [s if s is not None else MISSING for s in (sexes * n_cases)[:n_cases]]
    return rows, pd.DataFrame({"sex": sex, "age": [MISSING] * n_cases}, index=cases.index)


def test_missing_values_are_their_own_slice_and_small_slices_are_never_ranked() -> None:
    rows, values = _table_and_values(90, ["F", "M", None] + ["F", "M"] * 10)
    got = slice_metrics(rows, values, [("sex",)], n_resamples=100, min_cases=20)
    s = got["modes"]["independent"]["slicings"]["sex"]
    by = {x["label"]: x for x in s["slices"]}
    assert set(by) == {"F", "M", MISSING}
    assert sum(x["n_cases"] for x in s["slices"]) == 90  # no case dropped
    assert by[MISSING]["low_n"] and not by["F"]["low_n"]
    assert {s["gaps"]["accuracy"]["high"], s["gaps"]["accuracy"]["low"]} == {"F", "M"}
    assert s["gaps"]["accuracy"]["pairs_tested"] == 1


def test_combinations_partition_the_cases() -> None:
    rows, values = _table_and_values(60, ["F", "M"])
    values["age"] = ["<18", "18-40", MISSING] * 20
    got = slice_metrics(rows, values, [("sex", "age")], n_resamples=50)
    slices = got["modes"]["independent"]["slicings"]["sex,age"]["slices"]
    assert sum(x["n_cases"] for x in slices) == 60
    assert len({x["label"] for x in slices}) == len(slices) == 6
    assert all(set(x["key"]) == {"sex", "age"} for x in slices)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-50, 150, allow_nan=False), min_size=1, max_size=5, unique=True),
       st.floats(-100, 200, allow_nan=False))
def test_a_value_falls_in_exactly_one_bin(edges: list[float], value: float) -> None:
    edges = sorted(edges)
    label = bin_label(value, edges)
    assert label is not None
    inside = [(value < edges[0]) if label.startswith("<") else
              (value >= edges[-1]) if label.startswith(">=") else
              any(label == f"{a:g}-{b:g}" and a <= value < b for a, b in zip(edges, edges[1:], strict=False))]
    assert inside == [True]


def test_slicings_and_bins_are_checked() -> None:
    assert parse_slicings(["sex", "sex,modality", "sex"]) == [("sex",), ("sex", "modality")]
    for bad in (["nope"], ["sex,sex"], [","]):
        with pytest.raises(BadInput) as e:
            parse_slicings(bad)
        assert e.value.field == "--slice"
    assert parse_bins(["age=10,50"])["age"] == (10.0, 50.0)
    for bad in (["age=50,10"], ["sex=1,2"], ["age"], ["age=a,b"]):
        with pytest.raises(BadInput):
            parse_bins(bad)
    assert {f.level for f in SLICE_FIELDS.values()} == {"case", "item"}


@settings(max_examples=25, deadline=None)
@given(st.dictionaries(st.sampled_from(TASKS), st.sampled_from(["low", "medium", "high"]), max_size=3),
       st.dictionaries(st.sampled_from(["low", "medium", "high"]), st.floats(0.01, 100), max_size=3))
def test_harm_weights_change_no_accuracy_figure(tasks: dict[str, str], weights: dict[str, float]) -> None:
    rows, values = _table_and_values(40, ["F", "M"])
    spec = parse_harm({"tasks": tasks, "weights": weights}, "harm.json")
    a = slice_metrics(rows, values, [("sex",), ("task",)], n_resamples=50)
    b = slice_metrics(rows, values, [("sex",), ("task",)], harm=spec, n_resamples=50)
    for by in ("sex", "task"):
        sa = a["modes"]["independent"]["slicings"][by]["slices"]
        sb = b["modes"]["independent"]["slicings"][by]["slices"]
        assert [x["metrics"]["accuracy"] for x in sa] == [x["metrics"]["accuracy"] for x in sb]
        assert [x["metrics"]["error"] for x in sa] == [x["metrics"]["error"] for x in sb]
    # the weighted error is the weighted mean of the errors of the tiers
    units = harm_units(rows)
    h = b["modes"]["independent"]["all"]["harm"]["harm_weighted_error"]["value"]
    _, w = item_weights(units, spec)
    wrong = ~units["correct"].to_numpy(dtype=bool)
    assert h == pytest.approx(float((w * wrong).sum() / w.sum()))


@given(st.lists(st.sampled_from(["correct", "wrong", "unparsed", "truncated", "error", "abstained"]),
                min_size=1, max_size=30), st.data())
def test_silent_failures(verdicts: list[str], data: st.DataObject) -> None:
    silent, known = silent_failures(verdicts)
    # no confidence known: every wrong answer is assumed confident (nothing warned the reader)
    assert silent.tolist() == [v == "wrong" for v in verdicts] and not known.any()
    conf = data.draw(st.lists(st.one_of(st.none(), st.floats(0, 1)), min_size=len(verdicts), max_size=len(verdicts)))
    silent, known = silent_failures(verdicts, conf, confident_at=0.5)
    for v, c, s, k in zip(verdicts, conf, silent, known, strict=True):
        assert k == (c is not None)
        assert s == (v == "wrong" and (c is None or c >= 0.5))
    declined = data.draw(st.lists(st.booleans(), min_size=len(verdicts), max_size=len(verdicts)))
    silent, _ = silent_failures(verdicts, conf, abstained=declined, confident_at=0.5)
    for v, c, a, s in zip(verdicts, conf, declined, silent, strict=True):
        assert s == (v == "wrong" and not a and (c is None or c >= 0.5))


def test_harm_file_errors_name_the_file_and_key(tmp_path: Path) -> None:
    cases: list[tuple[Any, str | None]] = [
        ({"tiers": {}}, "tiers"), ({"weights": {"high": -1}}, "weights.high"),
        ({"weights": {"huge": 2}}, "weights.huge"),
        ({"tasks": {"s1.modality": "severe"}}, "tasks.s1.modality"), ({"tasks": {"s9.none": "high"}}, "tasks.s9.none"),
        ({"findings": {"pneumothorax": 3}}, "findings.pneumothorax"), ({"confident_at": 2}, "confident_at"),
        ([1, 2], None)]
    for data, key in cases:
        p = tmp_path / "harm.json"
        p.write_text(json.dumps(data))
        with pytest.raises(BadInput) as e:
            load_harm(p)
        assert e.value.file == str(p) and e.value.field == key
    y = tmp_path / "harm.yaml"
    y.write_text("tasks:\n  s1.modality: high\nweights:\n  high: 20\n")
    spec = load_harm(y)
    assert spec.task_tier("s1.modality") == "high" and spec.weights["high"] == 20.0
    assert spec.record()["sha256"] and spec.record()["file"] == str(y)
    assert HarmSpec().weights == DEFAULT_WEIGHTS


@given(st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_holm_is_monotone_and_never_below_the_raw_p(ps: list[float]) -> None:
    adj = holm(ps)
    assert all(a >= p - 1e-12 and a <= 1.0 for a, p in zip(adj, ps, strict=True))
    order = np.argsort(ps, kind="stable")
    assert all(adj[order[i]] <= adj[order[i + 1]] + 1e-12 for i in range(len(ps) - 1))


def test_every_task_declares_a_risk_tier_and_the_docs_table_is_the_registry() -> None:
    import re

    from medr2 import TaskSpec
    from medr2.tasks import TASKS
    from medr2.tasks.spec import RISK_TIERS, Template, register_task

    declared = {t.id: t.risk for t in TASKS.values()}
    assert set(declared.values()) <= set(RISK_TIERS) and "high" in declared.values()
    doc = (Path(__file__).parents[1] / "docs" / "tasks.md").read_text("utf-8")
    section = doc.split("## Risk tiers", 1)[1].split("\n## ", 1)[0]
    assert dict(re.findall(r"^\| `([^`]+)` \| (\w+) \|$", section, flags=re.M)) == declared
    tpls = (Template("x/t1", "a?"), Template("x/t2", "b?"), Template("x/t3", "c?", heldout=True))
    with pytest.raises(ValueError, match="risk"):
        register_task(TaskSpec("s9.risk_test", 1, "mcq", "x", "x", tpls, lambda c, ctx: [], risk="severe"))
    assert "s9.risk_test" not in TASKS


def test_a_finding_raises_an_item_to_its_tier() -> None:
    rows = pd.DataFrame({"task": ["s1.modality", "s1.modality", "s3.finding_type", "s4.diagnosis"],
                         "gold_key": ["pneumothorax", "ct", "cyst", None]})
    tier, weight = item_weights(rows, HarmSpec())
    assert tier.tolist() == ["high", "low", "high", "high"]  # a finding only raises a tier, never lowers it
    assert weight.tolist() == [DEFAULT_WEIGHTS[t] for t in tier]
    spec = parse_harm({"findings": {"pneumothorax": "low"}, "tasks": {"s3.finding_type": "low"}}, "h.json")
    assert item_weights(rows, spec)[0].tolist() == ["low", "low", "low", "high"]


def test_without_resamples_no_gap_is_called_significant() -> None:
    rows, values = _table_and_values(60, ["F", "M"])
    rows = rows.copy()
    rows["correct"] = rows["case_id"].isin(values.index[values["sex"] == "F"]).to_numpy()  # F all right, M all wrong
    gap = slice_metrics(rows, values, [("sex",)], n_resamples=0)["modes"]["independent"]["slicings"]["sex"]["gaps"]
    assert gap["accuracy"]["delta"] == 1.0 and gap["accuracy"]["p_holm"] is None
    assert not gap["accuracy"]["significant"] and gap["accuracy"]["n_significant_pairs"] == 0
    tested = slice_metrics(rows, values, [("sex",)], n_resamples=200)["modes"]["independent"]["slicings"]["sex"]
    assert tested["gaps"]["accuracy"]["significant"]
