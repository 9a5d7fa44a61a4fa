"""The tidy table of scored rows that every metric reads: one row per (item, mode), item fields joined."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd

from medr2.perturb.registry import item_roles
from medr2.records import Score
from medr2.scoring.extract.common import normalize_words
from medr2.scoring.items import ItemLike
from medr2.scoring.shortanswer import normalize_answer
from medr2.variant_id import variant_code, variant_severity


def answer_key(item: ItemLike, value: str | None) -> str | None:
    """A comparable key of an answer in the item's format: option *text* for MCQ and multi-select
    (so permuted options compare equal), 'yes'/'no', the box string, or text normalised as short answers are
    compared (:func:`medr2.scoring.shortanswer.normalize_answer`, so equal keys mean an equal verdict)."""
    if value is None:
        return None
    if item.form == "mcq":
        v = value.strip()
        if len(v) == 1 and v.isalpha() and v.isupper() and 0 <= ord(v) - 65 < len(item.options):
            return normalize_words(item.options[ord(v) - 65])
        return normalize_words(v)
    if item.form == "multi":
        letters = [p.strip() for p in value.split(",") if p.strip()]
        keys = [normalize_words(item.options[ord(c) - 65]) if len(c) == 1 and 0 <= ord(c) - 65 < len(item.options)
                else normalize_words(c) for c in letters]
        return "|".join(sorted(keys))
    if item.form in ("yesno", "box"):
        return value.strip().lower()
    return normalize_answer(value)


def _severity(variant: str) -> int | None:
    return variant_severity(variant)


# columns taken from the item of each row (computed once per item, then repeated per mode)
_ITEM_FIELDS = ("case_id", "task", "stage", "form", "variant", "code", "severity", "parent_id", "pair_id",
                "chain_id", "step", "split", "chance", "probe", "preserving", "misleads", "keeps_facts", "pairs",
                "gold_key", "lure_key", "answer", "gold_box", "prompt_code", "prior_key")
TABLE_COLUMNS = ("item_id", "case_id", "model_key", "mode", "task", "stage", "form", "variant", "code", "severity",
                 "parent_id", "pair_id", "chain_id", "step", "split", "verdict", "parsed", "method", "iou",
                 "text_metrics", "chance", "probe", "preserving", "misleads", "keeps_facts", "pairs", "gold_key",
                 "parsed_key", "lure_key", "answer", "gold_box", "prompt_code", "prior_key")


_KeyMemo = dict[tuple[tuple[str, tuple[str, ...]], str], str | None]


def _memo_key(memo: _KeyMemo, fmt: tuple[str, tuple[str, ...]], it: ItemLike, value: str) -> str | None:
    """``answer_key(it, value)``, which depends only on the item's form and options, memoised on them."""
    mk = (fmt, value)
    if mk not in memo:
        memo[mk] = answer_key(it, value)
    return memo[mk]


def _roles(it: ItemLike) -> tuple[str, ...]:
    """The item's roles (:func:`medr2.perturb.registry.item_roles`: recorded, or its perturbation's for a bench
    built before roles were written)."""
    return item_roles(it.variant, it.roles, it.meta)


def is_unanswerable(it: ItemLike) -> bool:
    """Whether the item's evidence was removed or replaced (a probe: V1 blank image, V2 another case's image, V3
    another modality), so that "cannot be determined" is the right answer: its declared ``probe`` role."""
    return "probe" in _roles(it)


def _item_fields(it: ItemLike, fmt: tuple[str, tuple[str, ...]], memo: _KeyMemo,
                 prompts: dict[tuple[str, tuple[str, ...]], int]) -> tuple[Any, ...]:
    code = variant_code(it.variant)
    prompt = prompts.setdefault((it.question, fmt[1]), len(prompts))  # same question and options: same code
    roles = _roles(it)
    return (it.case_id, it.task, int(it.stage), it.form, it.variant, code, _severity(it.variant), it.parent_id,
            it.pair_id, it.chain_id, it.step, it.split, float(it.chance), "probe" in roles,
            "preserves_answer" in roles, "misleads" in roles, "keeps_facts" in roles, "pairs" in roles,
            _memo_key(memo, fmt, it, it.answer) if it.form != "box" else None,
            _memo_key(memo, fmt, it, it.lure) if it.lure else None, it.answer,
            tuple(it.answer_box) if it.answer_box is not None else None, prompt, _prior_key(it, fmt, memo))


def _prior_key(it: ItemLike, fmt: tuple[str, tuple[str, ...]], memo: _KeyMemo) -> str | None:
    """The answer key of what an answer that takes the prior study for the current one gives (a comparison item's
    ``meta["prior_answer"]``, issue 49; the prior-reliance measure of ``medr2.scoring.metrics.comparison``)."""
    value = it.meta.get("prior_answer") if isinstance(it.meta, dict) else None
    return _memo_key(memo, fmt, it, value) if isinstance(value, str) and value else None


def build_table(items: Mapping[str, ItemLike], scores: Iterable[Score]) -> pd.DataFrame:
    """Join scores with their items. Rows whose item is unknown are skipped by the caller (scorer)."""
    scores = list(scores)
    return build_table_columns(items, [s.item_id for s in scores], [s.model_key for s in scores],
                               [s.mode for s in scores], [s.verdict for s in scores], [s.parsed for s in scores],
                               [s.method for s in scores], [s.iou for s in scores],
                               [s.text_metrics for s in scores])


def build_table_columns(items: Mapping[str, ItemLike], item_ids: Sequence[str], model_keys: Sequence[str],
                        modes: Sequence[str], verdicts: Sequence[str], parsed: Sequence[str | None],
                        methods: Sequence[str], ious: Sequence[float | None],
                        text_metrics: Sequence[dict[str, float]]) -> pd.DataFrame:
    """:func:`build_table` from per-row columns (no per-row records): item fields are computed once per
    item, put in a frame of the distinct items (same dtypes as built per row: pandas infers a column's type
    from the set of values it holds) and taken per row; ``item_code``/``parent_code`` are integer ids of
    ``item_id``/``parent_id`` (-1: none) for joins; ``prompt_code`` is an integer id of the (question, options)
    an item shows, ``gold_box`` its gold box (box items)."""
    codes: dict[str, int] = {}
    fields: list[tuple[Any, ...]] = []
    formats: list[tuple[str, tuple[str, ...]]] = []  # what answer_key depends on: form and options
    key_memo: _KeyMemo = {}
    prompts: dict[tuple[str, tuple[str, ...]], int] = {}
    pos = np.empty(len(item_ids), dtype=np.int64)
    for i, iid in enumerate(item_ids):
        k = codes.get(iid)
        if k is None:
            k = codes[iid] = len(fields)
            it = items[iid]
            fmt = (it.form, tuple(it.options))
            fields.append(_item_fields(it, fmt, key_memo, prompts))
            formats.append(fmt)
        pos[i] = k
    parsed_key: list[str | None] = []
    for k, iid, v, p in zip(pos.tolist(), item_ids, verdicts, parsed, strict=True):
        if v not in ("correct", "wrong") or p is None:
            parsed_key.append(None)
            continue
        parsed_key.append(_memo_key(key_memo, formats[k], items[iid], p))
    distinct = list(codes)  # the distinct item ids, in order of first appearance (= their position in fields)
    per_item = pd.DataFrame({name: [f[j] for f in fields] for j, name in enumerate(_ITEM_FIELDS)},
                            columns=list(_ITEM_FIELDS))
    per_item["item_id"] = distinct
    parent = _ITEM_FIELDS.index("parent_id")
    per_item["item_code"], per_item["parent_code"] = _item_codes(items, distinct, [f[parent] for f in fields])
    taken = per_item.take(pos).reset_index(drop=True)
    rows = pd.DataFrame({"model_key": list(model_keys), "mode": list(modes), "verdict": list(verdicts),
                         "parsed": list(parsed), "method": list(methods), "iou": list(ious),
                         "text_metrics": list(text_metrics), "parsed_key": parsed_key})
    cols = {c: taken[c] if c in taken else rows[c] for c in TABLE_COLUMNS}
    cols["correct"] = pd.Series((rows["verdict"] == "correct").to_numpy(dtype=bool))
    cols["iou0"] = pd.Series(rows["iou"].astype(float).fillna(0.0).to_numpy())
    cols["item_code"], cols["parent_code"] = taken["item_code"], taken["parent_code"]
    return pd.DataFrame(cols)


def _item_codes(items: Mapping[str, ItemLike], ids: Sequence[str], parents: Sequence[str | None]
                ) -> tuple[np.ndarray, np.ndarray]:
    """The positions among ``items`` of ``ids`` and of ``parents`` (-1: none, or not in ``items``): looked up
    by columns when ``items`` holds them so (:class:`medr2.scoring.itemcols.ScoringItems`)."""
    positions = getattr(items, "positions", None)
    if positions is not None:
        return positions(ids), positions(parents)
    all_codes = {iid: i for i, iid in enumerate(items)}
    return (np.fromiter((all_codes[i] for i in ids), dtype=np.int64, count=len(ids)),
            np.fromiter((-1 if p is None else all_codes.get(p, -1) for p in parents), dtype=np.int64,
                        count=len(parents)))


def lowest_severity_only(df: pd.DataFrame, floor: Mapping[str, float] | None = None) -> np.ndarray:
    """Mask: rows whose severity is absent or the lowest severity of their code (among ``df``'s rows, or
    ``floor``: the lowest per code among more rows than ``df`` holds, :class:`SeverityFloors`)."""
    sev = df["severity"]
    if floor is not None:
        lowest = df["code"].map(lambda c: floor.get(c, np.nan)).astype(float)
    else:
        lowest = df.groupby("code")["severity"].transform("min")
    return cast(np.ndarray, (sev.isna() | (sev == lowest)).to_numpy(dtype=bool))


class SeverityFloors:
    """The lowest severity per (mode, variant code) among answer-preserving, non-probe rows (what
    :func:`lowest_severity_only` reads over the whole table), collected batch by batch from item ids."""

    def __init__(self, items: Mapping[str, ItemLike]) -> None:
        self.items = items
        self.floors: dict[str, dict[str, float]] = {}
        # (code, severity) when an item counts, by what decides it (variant id, recorded roles, or the two meta flags
        # that narrow the registry's roles of a bench without recorded roles): a few entries, looked up per row
        self._of: dict[tuple[Any, ...], tuple[str, int] | None] = {}

    def _item(self, iid: str) -> tuple[str, int] | None:
        it = self.items[iid]
        key = ((it.variant, tuple(it.roles)) if it.roles is not None
               else (it.variant, None, it.meta.get("scoring"), it.meta.get("answer_preserving")))
        if key not in self._of:
            roles = _roles(it)
            code, sev = variant_code(it.variant), _severity(it.variant)
            counts = sev is not None and "probe" not in roles and "preserves_answer" in roles
            self._of[key] = (code, sev) if counts and sev is not None else None
        return self._of[key]

    def add(self, item_ids: Sequence[str], modes: Sequence[str]) -> None:
        for iid, mode in zip(item_ids, modes, strict=True):
            got = self._item(iid)
            if got is not None:
                floor = self.floors.setdefault(mode, {})
                if got[1] < floor.get(got[0], np.inf):
                    floor[got[0]] = float(got[1])

    def merge(self, floors: Mapping[str, Mapping[str, float]]) -> None:
        """Add another batch's :attr:`floors` (batches merged in order give what :meth:`add` of their rows in
        that order gives, the same keys in the same order)."""
        for mode, got in floors.items():
            floor = self.floors.setdefault(mode, {})
            for code, sev in got.items():
                if sev < floor.get(code, np.inf):
                    floor[code] = float(sev)
