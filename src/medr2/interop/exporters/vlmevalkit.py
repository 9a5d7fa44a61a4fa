"""VLMEvalKit-style TSV, one file per split (``<name>_<split>.tsv``): ``index``, ``image`` (base64
PNG), ``question``, ``A``..``J`` (MCQ options), ``answer`` (MCQ letter; ``Yes``/``No``; box as
``[x1, y1, x2, y2]``; reference text), ``category`` (task id), ``l2-category`` (stage), ``split``,
plus ``form`` and the round-trip columns.
"""

from __future__ import annotations

import base64
import csv
from pathlib import Path
from typing import Any

from medr2.bench.format import Bench
from medr2.interop.exporters._rows import by_split, row
from medr2.interop.roundtrip import CASE_COL, CASE_IMAGE_COL, ITEM_COL

OPTION_COLS = tuple("ABCDEFGHIJ")


def _answer(r: dict[str, Any]) -> str:
    if r["form"] == "yesno":
        return {"yes": "Yes", "no": "No"}.get(r["answer"], r["answer"])
    return str(r["answer"])


def export_tsv(bench: Bench, out: Path) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    csv.field_size_limit(1 << 30)
    counts = {}
    for split, items in by_split(bench).items():
        rows = [row(bench, it) for it in items]
        n_opt = max([len(r["options"]) for r in rows] + [0])
        cols = ["index", "image", "question", *OPTION_COLS[:n_opt], "answer", "category", "l2-category", "split",
                "form", "item_id", ITEM_COL, CASE_COL, CASE_IMAGE_COL]
        path = out / f"{bench.name}_{split}.tsv"
        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, delimiter="\t", lineterminator="\n")
            w.writerow(cols)
            for i, r in enumerate(rows):
                opts = list(r["options"]) + [""] * (n_opt - len(r["options"]))
                w.writerow([i, base64.b64encode(r["image"]).decode() if r["image"] else "", r["question"], *opts,
                            _answer(r), r["task"], r["stage_name"], r["split"] or "", r["form"], r["item_id"],
                            r[ITEM_COL], r[CASE_COL],
                            base64.b64encode(r[CASE_IMAGE_COL]).decode() if r[CASE_IMAGE_COL] else ""])
        counts[split] = len(rows)
    return {"target": "vlmevalkit", "out": str(out), "splits": counts}
