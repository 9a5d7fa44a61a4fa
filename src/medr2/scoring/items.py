"""The bench items as scoring reads them: :class:`ScoringItem`, made from ``items.parquet``'s columns without
per-item validation (:class:`medr2.scoring.itemcols.ScoringItems`, the one reader; JSON columns decoded once per
distinct value), and the column layout that reader uses.

``medr2 score`` needs a few fields of every item; building and validating a full :class:`medr2.records.Item`
per row dominated scoring time on large benches. :class:`ScoringItem` carries exactly the fields that the
scorer, the tidy table and the judge prompts read (same names and types as on ``Item``, a subset of its fields:
``tests/test_score_items.py`` checks them), so either can be passed where items are expected. Why not the
record itself (issue 38, ``bench/bench_item_records.py``): a validated ``Item`` costs ≈ 18 µs against ≈ 0.7 µs
per record here, and scoring makes a record per answer (its batch's items) and per item (its chunk of cases):
≈ 8 % more CPU for ``medr2 score`` (docs/benchmarks.md, issue 38); ``Item`` also requires fields scoring never
reads (``image``, ``template_id``, ``source``, ``license``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from medr2.records import Box, Item

_JSON = ("options", "answer_box", "meta", "roles")
_COLUMNS = ("item_id", "case_id", "chain_id", "step", "stage", "task", "form", "question", "options", "answer",
            "answer_box", "chance", "pair_id", "image_width", "image_height", "variant", "parent_id", "lure",
            "split", "meta", "roles")
_DEFAULTS: dict[str, Any] = {"options": [], "variant": "clean", "meta": {}}
# converted once per distinct value: the JSON columns and the strings that repeat across items
_BY_VALUE = frozenset((*_JSON, "task", "form", "question", "variant", "split", "lure", "chain_id", "case_id"))


@dataclass(slots=True)
class ScoringItem:
    """The fields of an :class:`~medr2.records.Item` that scoring reads. Treated as read-only; not ``frozen``: a
    frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` (≈ 3.9 µs per record against
    0.3 µs here, measured), and scoring makes a record per item for each batch and each chunk of cases (no
    record is hashable either way: ``meta`` is a dict)."""

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
    roles: list[str] | None = None  # None: not recorded (medr2.perturb.registry.item_roles reads it)


# What scoring accepts: full records (library API) or the light records of ``ScoringItems``.
ItemLike = Item | ScoringItem
