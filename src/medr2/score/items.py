"""The bench items as scoring reads them, loaded column-wise from ``items.parquet`` (no per-item validation).

``medr2 score`` needs a few fields of every item; building and validating a full :class:`medr2.records.Item`
per row dominated scoring time on large benches. :class:`ScoringItem` carries exactly the fields that the
scorer, the tidy table and the judge prompts read (same names and types as on ``Item``), so either can be
passed where items are expected. JSON columns are decoded once per distinct value.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from medr2.errors import BadInput
from medr2.records import Box, Item

_JSON = ("options", "answer_box", "meta")
_COLUMNS = ("item_id", "case_id", "chain_id", "step", "stage", "task", "form", "question", "options", "answer",
            "answer_box", "chance", "pair_id", "image_width", "image_height", "variant", "parent_id", "lure",
            "split", "meta")
_REQUIRED = ("item_id", "case_id", "stage", "task", "form", "question", "answer", "chance")
_DEFAULTS: dict[str, Any] = {"options": [], "variant": "clean", "meta": {}}


@dataclass(frozen=True, slots=True)
class ScoringItem:
    """The fields of an :class:`~medr2.records.Item` that scoring reads."""

    item_id: str
    case_id: str
    chain_id: str | None
    step: int | None
    stage: int
    task: str
    form: str
    question: str
    options: list[str]
    answer: str
    answer_box: Box | None
    chance: float
    pair_id: str | None
    image_width: int | None
    image_height: int | None
    variant: str
    parent_id: str | None
    lure: str | None
    split: str | None
    meta: dict[str, Any] = field(default_factory=dict)


# What scoring accepts: full records (library API) or the light rows read by ``load_scoring_items``.
ItemLike = Item | ScoringItem


def load_scoring_items(bench_root: Path | str) -> tuple[dict[str, Any], dict[str, ScoringItem]]:
    """(bench manifest, items by id) of a bench folder, read column-wise."""
    from medr2.bench.format import ITEMS_FILE, read_items_table, read_manifest

    root = Path(bench_root)
    manifest = read_manifest(root)
    path = root / ITEMS_FILE
    if not path.is_file():
        raise BadInput("missing file", file=str(path))
    try:
        table = read_items_table(root)
    except (OSError, pa.ArrowException) as e:
        raise BadInput(f"cannot read parquet: {e}", file=str(path)) from e
    missing = [c for c in _REQUIRED if c not in table.column_names]
    if missing:
        raise BadInput("missing column(s)", file=str(path), field=",".join(missing))
    n = table.num_rows
    cols: dict[str, list[Any]] = {}
    for name in _COLUMNS:
        cols[name] = table.column(name).to_pylist() if name in table.column_names else [None] * n
    ids = cols["item_id"]
    for name in _JSON:
        memo: dict[str, Any] = {}
        values = cols[name]
        for i, v in enumerate(values):
            if v is None:
                values[i] = _DEFAULTS.get(name)
                continue
            got = memo.get(v)
            if got is None:
                try:
                    got = json.loads(v)
                except (TypeError, json.JSONDecodeError) as e:
                    raise BadInput(f"not valid JSON: {e}", file=str(path), record=str(ids[i]), field=name) from e
                if name == "answer_box" and got is not None:
                    got = tuple(float(x) for x in got)
                memo[v] = got
            values[i] = got
    cols["variant"] = [v if v is not None else "clean" for v in cols["variant"]]
    for name in ("task", "form", "question", "variant", "split", "lure", "chain_id", "case_id"):
        same: dict[Any, Any] = {}  # one string object per distinct value (these columns repeat a lot)
        cols[name] = [same.setdefault(v, v) for v in cols[name]]
    items: dict[str, ScoringItem] = {}
    for row in zip(*(cols[c] for c in _COLUMNS), strict=True):
        it = ScoringItem(*row)
        if it.item_id is None:
            raise BadInput("an item without item_id", file=str(path), field="item_id")
        items[it.item_id] = it
    return manifest, items
