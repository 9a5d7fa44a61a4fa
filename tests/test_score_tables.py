"""``scores.parquet`` built column-wise from the tidy table has the bytes of the record-wise build."""

from __future__ import annotations

import io

import pyarrow.parquet as pq

from medr2 import BoxConvention, Item
from medr2.scoring.scorer import _scores_table_from_tidy, score_items, scores_table
from medr2.scoring.table import build_table
from tests.score_fixtures import make_items, predict

# prefixes whose order differs between naive byte-wise Latin-1, UTF-16 and code-point comparisons
PREFIXES = ("a", "Z", "é", "z", "ß", "\uffff", "𝔸", "\u00ff", "0", "~")


def _renamed(items: list[Item]) -> list[Item]:
    new = {it.item_id: f"{PREFIXES[i % len(PREFIXES)]}{it.item_id}" for i, it in enumerate(items)}
    return [it.model_copy(update={"item_id": new[it.item_id],
                                  "parent_id": new.get(it.parent_id) if it.parent_id else None}) for it in items]


def _bytes(table: object) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")  # as score_run writes it
    return buf.getvalue()


def test_tidy_built_scores_table_equals_record_built_one() -> None:
    items = _renamed(make_items(6))
    by_id = {it.item_id: it for it in items}
    preds = [p for spec, mode in (("baseline:random", "independent"), ("baseline:oracle", "blind"),
                                  ("baseline:follow-hint", "chain-own"))
             for p in predict(spec, items, mode=mode)]
    preds = [p.model_copy(update={"status": "error", "raw": None, "error": "x"}) if i % 11 == 0 else p
             for i, p in enumerate(preds)]
    scores = score_items(by_id, preds, BoxConvention())
    assert {s.verdict for s in scores} >= {"correct", "wrong", "error"}
    assert any(s.text_metrics for s in scores) and any(s.iou is None for s in scores)
    want = scores_table(by_id, scores)
    got = _scores_table_from_tidy(build_table(by_id, scores))
    assert got.equals(want)
    assert _bytes(got) == _bytes(want)
    ids = got.column("item_id").to_pylist()
    modes = got.column("mode").to_pylist()
    assert list(zip(modes, ids, strict=True)) == sorted(zip(modes, ids, strict=True))  # Python's string order


def test_empty_tidy_table() -> None:
    items = make_items(1)
    by_id = {it.item_id: it for it in items}
    assert _bytes(_scores_table_from_tidy(build_table(by_id, []))) == _bytes(scores_table(by_id, []))


def test_rows_scored_together_equal_rows_scored_one_by_one() -> None:
    """Reports are scored after the other rows, grouped by reference: same results, in row order."""
    from medr2.scoring.scorer import _score_rows

    items = make_items(6)
    by_id = {it.item_id: it for it in items}
    preds = [p for spec, mode in (("baseline:random", "independent"), ("baseline:oracle", "blind"))
             for p in predict(spec, items, mode=mode)]
    reports = [i for i, p in enumerate(preds) if by_id[p.item_id].form == "text"]
    assert len({by_id[preds[i].item_id].answer for i in reports}) > 1
    ids, raws = [p.item_id for p in preds], [p.raw for p in preds]
    statuses = ["error" if i % 13 == 0 else p.status for i, p in enumerate(preds)]
    together = _score_rows(by_id, ids, statuses, raws, BoxConvention())
    one_by_one = [_score_rows(by_id, [i], [s], [r], BoxConvention())[0] for i, s, r in zip(ids, statuses, raws,
                                                                                         strict=True)]
    assert together == one_by_one
    assert any(together[i].text_metrics for i in reports)
