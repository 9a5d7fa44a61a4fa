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

from medr2.atomic import staged
from medr2.bench.format import Bench
from medr2.interop.exporters._rows import split_name
from medr2.interop.exporters._stream import batches, split_rows
from medr2.interop.roundtrip import CASE_COL, CASE_IMAGE_COL, ITEM_COL

OPTION_COLS = tuple("ABCDEFGHIJ")


def _answer(r: dict[str, Any]) -> str:
    if r["form"] == "yesno":
        return {"yes": "Yes", "no": "No"}.get(r["answer"], r["answer"])
    return str(r["answer"])


def export_tsv(bench: Bench, out: Path) -> dict[str, Any]:
    """One TSV per split, its rows written a batch at a time (the option columns counted first, from the items)."""
    csv.field_size_limit(1 << 30)
    n_opt: dict[str, int] = {}
    for it in bench.items:
        n_opt[split_name(it)] = max(n_opt.get(split_name(it), 0), len(it.options))
    counts: dict[str, int] = {}
    files: dict[str, Any] = {}
    with staged(out, f"medr2 convert {bench.root} --to vlmevalkit --out {out}") as stage:
        try:
            for split, rows in batches(split_rows(bench)):
                if split not in files:
                    f = (stage / f"{bench.name}_{split}.tsv").open("w", newline="", encoding="utf-8")
                    files[split] = (f, csv.writer(f, delimiter="\t", lineterminator="\n"))
                    files[split][1].writerow(["index", "image", "question", *OPTION_COLS[:n_opt[split]], "answer",
                                              "category", "l2-category", "split", "form", "item_id", ITEM_COL,
                                              CASE_COL, CASE_IMAGE_COL])
                w = files[split][1]
                for r in rows:
                    opts = list(r["options"]) + [""] * (n_opt[split] - len(r["options"]))
                    w.writerow([counts.get(split, 0), base64.b64encode(r["image"]).decode() if r["image"] else "",
                                r["question"], *opts, _answer(r), r["task"], r["stage_name"], r["split"] or "",
                                r["form"], r["item_id"], r[ITEM_COL], r[CASE_COL],
                                base64.b64encode(r[CASE_IMAGE_COL]).decode() if r[CASE_IMAGE_COL] else ""])
                    counts[split] = counts.get(split, 0) + 1
        finally:
            for f, _ in files.values():
                f.close()
    return {"target": "vlmevalkit", "out": str(out), "splits": dict(sorted(counts.items()))}
