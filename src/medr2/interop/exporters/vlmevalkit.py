"""VLMEvalKit-style TSV, one file per split (``<name>_<split>.tsv``): ``index``, ``image`` (base64
PNG), ``question``, ``A``..``J`` (MCQ options), ``answer`` (MCQ letter; ``Yes``/``No``; box as
``[x1, y1, x2, y2]``; reference text), ``category`` (task id), ``l2-category`` (stage), ``split``,
plus ``form`` and the round-trip columns.

An item of several images (issue 49) follows VLMEvalKit's multi-image convention (``ImageBaseDataset``:
``toliststr`` of the cell, then ``dump_image`` zips ``image`` with ``image_path``): ``image`` holds a list of
base64 PNGs in the order shown and ``image_path`` a list of as many file names (``<index>_<k>.png``), both
written as JSON lists (which VLMEvalKit's ``toliststr`` reads); its ``question`` starts with the line naming
each image's role, as medr2 prompts it. ``image_path`` is a column only of the files holding such an item (a
one-image row there names its one file, ``<index>.png``).
"""

from __future__ import annotations

import base64
import csv
import json
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


def _b64(data: bytes | None) -> str:
    return base64.b64encode(data).decode() if data else ""


def _image_cells(r: dict[str, Any], index: int, with_paths: bool) -> list[str]:
    """``image`` (and ``image_path`` in a file with several-image items) of one row."""
    if not r["images"]:
        return [_b64(r["image"]), *([f"{index}.png"] if with_paths else [])]
    return [json.dumps([_b64(b) for b in r["images"]]),
            json.dumps([f"{index}_{k}.png" for k in range(len(r["images"]))])]


def _question(r: dict[str, Any]) -> str:
    if not r["images"]:
        return str(r["question"])
    roles = " ".join(f"Image {k}: {role}." for k, role in enumerate(r["image_roles"], start=1))
    return f"{roles}\n{r['question']}"


def export_tsv(bench: Bench, out: Path) -> dict[str, Any]:
    """One TSV per split, its rows written a batch at a time (the option columns and whether some item shows
    several images counted first, from the items)."""
    csv.field_size_limit(1 << 30)
    n_opt: dict[str, int] = {}
    several: set[str] = set()
    for it in bench.items:
        n_opt[split_name(it)] = max(n_opt.get(split_name(it), 0), len(it.options))
        if len(it.images) > 1:
            several.add(split_name(it))
    counts: dict[str, int] = {}
    files: dict[str, Any] = {}
    with staged(out, f"medr2 convert {bench.root} --to vlmevalkit --out {out}") as stage:
        try:
            for split, rows in batches(split_rows(bench)):
                if split not in files:
                    f = (stage / f"{bench.name}_{split}.tsv").open("w", newline="", encoding="utf-8")
                    files[split] = (f, csv.writer(f, delimiter="\t", lineterminator="\n"))
                    files[split][1].writerow(["index", "image", *(["image_path"] if split in several else []),
                                              "question", *OPTION_COLS[:n_opt[split]], "answer",
                                              "category", "l2-category", "split", "form", "item_id", ITEM_COL,
                                              CASE_COL, CASE_IMAGE_COL])
                w = files[split][1]
                for r in rows:
                    opts = list(r["options"]) + [""] * (n_opt[split] - len(r["options"]))
                    index = counts.get(split, 0)
                    w.writerow([index, *_image_cells(r, index, split in several), _question(r), *opts, _answer(r),
                                r["task"], r["stage_name"], r["split"] or "", r["form"], r["item_id"], r[ITEM_COL],
                                r[CASE_COL], _b64(r[CASE_IMAGE_COL])])
                    counts[split] = counts.get(split, 0) + 1
        finally:
            for f, _ in files.values():
                f.close()
    return {"target": "vlmevalkit", "out": str(out), "splits": dict(sorted(counts.items()))}
