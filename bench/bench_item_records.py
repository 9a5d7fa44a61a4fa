"""What a scoring record costs (issue 38, item 3): the records of a batch of a bench's items made as scoring makes
them (``ScoringItems.records``: columns to :class:`medr2.scoring.items.ScoringItem`) against
:class:`medr2.records.Item` made from the same fields, validated and by ``model_construct`` (the four fields
``Item`` requires and scoring never reads filled with placeholders). CPU seconds, best of ``--repeats``::

    PYTHONPATH=src .venv/bin/python bench/bench_item_records.py /tmp/medr2-score-bench/n400000/bench --rows 50000
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from medr2.records import Item
from medr2.scoring.itemcols import _by_value, _values, open_scoring_items
from medr2.scoring.items import _COLUMNS, ScoringItem

FILL = {"image": None, "template_id": "t", "source": "s", "license": "l"}  # required by Item, not read by scoring


def best(f: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.process_time()
        f()
        times.append(time.process_time() - t)
    return min(times)


def validated(rows: list[tuple[Any, ...]]) -> list[Item]:
    out = []
    for r in rows:
        kw = {**dict(zip(_COLUMNS, r, strict=True)), **FILL}
        if kw["answer_box"] is not None:
            kw["answer_box"] = list(kw["answer_box"])
        out.append(Item.model_validate(kw))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", type=Path)
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        _, items = open_scoring_items(a.bench, Path(d))
        try:
            pos = np.arange(min(len(items), a.rows))
            sub = items._rows.take(pos, _COLUMNS)
            rows = list(zip(*(_values(_by_value(sub.column(c), c), c) for c in _COLUMNS), strict=True))
            m = len(rows)
            got = {
                "ScoringItems.records (columns to records)": best(lambda: items.records(pos), a.repeats),
                "of it ScoringItem(*row)": best(lambda: [ScoringItem(*r) for r in rows], a.repeats),
                "Item.model_validate": best(lambda: validated(rows), a.repeats),
                "Item.model_construct": best(lambda: [Item.model_construct(**dict(zip(_COLUMNS, r, strict=True)),
                                                                           **FILL) for r in rows], 1),
            }
        finally:
            items.close()
    for name, s in got.items():
        print(f"{m:,} records, {name}: {s:.3f} CPU s ({s / m * 1e6:.2f} µs each)")


if __name__ == "__main__":
    main()
