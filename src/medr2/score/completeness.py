"""Whether a scored run holds an answer for everything its plan asked.

The plan is what the run manifest records (``medr2 eval`` appends one invocation per call, with its modes,
variant filter, split, limit and status; the identity holds the shard; a merged run keeps its shards'
invocations under ``merged_from`` and lists ``shards_missing``). Each invocation's selection is recomputed
from the bench as :func:`medr2.bench.select.select_items` selects it (plus, in ``chain-own``, the
earlier chain steps the runner asks first), so an interrupted, killed or still running invocation shows as
planned items without a stored answer. A stored error counts as answered (it is scored as ``error``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence, Set as AbstractSet
from typing import Any, cast

import numpy as np
import pyarrow as pa

from medr2.score.itemcols import ScoringItems

UNFINISHED = frozenset({"running", "interrupted", "failed"})


def _shard(value: Any) -> tuple[int, int] | None:
    if not isinstance(value, str) or "/" not in value:
        return None
    i, n = value.split("/", 1)
    return int(i), int(n)


def _scopes(manifest: Mapping[str, Any]) -> list[tuple[dict[str, Any], tuple[int, int] | None]]:
    """(invocation, shard) pairs that planned answers: this run's own and, for a merged run, its shards'."""
    own = _shard((manifest.get("identity") or {}).get("shard"))
    out = [(inv, own) for inv in manifest.get("invocations") or [] if inv.get("status") != "merged"]
    for part in manifest.get("merged_from") or []:
        out += [(inv, _shard(part.get("shard"))) for inv in part.get("invocations") or []
                if inv.get("status") != "merged"]
    return out


def _with_earlier_steps(items: ScoringItems, chosen: np.ndarray) -> np.ndarray:
    """``chosen`` (a mask of rows) plus every earlier chain step they need answered first (what ``chain-own``
    asks). Records are made only for the items of the chains ``chosen`` touches."""
    from medr2.run.runner import ChainIndex

    chain_idx, chains = items.codes("chain_id")
    in_chain = chain_idx < len(chains)
    touched = np.unique(chain_idx[chosen & in_chain])
    rows = np.flatnonzero(np.isin(chain_idx, touched) & in_chain)
    if not len(rows):
        return chosen
    records = items.records(rows)
    index = ChainIndex(cast(Any, [it for it in records.values() if it.step is not None]))
    out = chosen.copy()
    frontier = [records[i] for i in items.ids(np.flatnonzero(chosen & in_chain))]
    asked = {it.item_id for it in frontier}
    while frontier:
        nxt = []
        for it in frontier:
            for e in index.earlier(cast(Any, it)):
                if e.item_id not in asked:
                    asked.add(e.item_id)
                    nxt.append(cast(Any, e))
        frontier = nxt
    out[items.positions(sorted(asked))] = True
    return out


def _selection(items: ScoringItems, *, variants: Sequence[str] | None, split: str | None, limit: int | None,
               shard: tuple[int, int] | None, tasks: Sequence[str] | None = None,
               stages: Sequence[int] | None = None, stratify: Sequence[str] | None = None,
               seed: int = 0, item_ids: AbstractSet[str] | None = None) -> np.ndarray:
    """:func:`medr2.bench.select.select_items` over the bench's items as a mask of rows (computed by columns,
    each test made once per distinct value; a stratified limit is the selection's own
    :func:`~medr2.bench.select.stratified_ids` over the columns it names); ``item_ids``: only these (``--reviewed``)."""
    from medr2.bench.select import shard_index, split_filter, stratified_ids
    from medr2.errors import BadInput
    from medr2.variant_id import variant_matches

    try:
        split = split_filter(split)  # "all" (or None, as older runs record it): every split
    except BadInput:  # a split no item can have, recorded before such values were refused: it asked nothing
        return np.zeros(len(items), dtype=bool)
    chosen = np.ones(len(items), dtype=bool)
    if split is not None:
        idx, values = items.codes("split")
        chosen &= np.append(np.asarray([v == split for v in values], dtype=bool), split is None)[idx]
    if variants:
        idx, values = items.codes("variant")
        ok = [variant_matches("clean" if v is None else v, variants) for v in values]
        chosen &= np.asarray(ok + [variant_matches("clean", variants)], dtype=bool)[idx]
    for column, wanted in (("task", tasks), ("stage", stages)):
        if wanted is not None:
            idx, values = items.codes(column)
            chosen &= np.asarray([v in set(wanted) for v in values] + [False], dtype=bool)[idx]
    if item_ids is not None:
        rows = items.positions(sorted(item_ids))
        listed = np.zeros(len(items), dtype=bool)
        listed[rows[rows >= 0]] = True
        chosen &= listed
    case_idx, cases = items.codes("case_id")
    if limit is not None and stratify:
        rows = np.flatnonzero(chosen)
        taken = pa.array(rows, type=pa.int64())
        columns = {c: items.column(c).take(taken).to_pylist() for c in dict.fromkeys(["item_id", "parent_id",
                                                                                      *stratify])}
        keep = stratified_ids((dict(zip(columns, vals, strict=True)) for vals in zip(*columns.values(), strict=True)),
                              limit, stratify, seed)
        chosen = np.zeros(len(items), dtype=bool)
        chosen[items.positions(sorted(keep))] = True
    elif limit is not None:
        rows = np.flatnonzero(chosen)
        kept = np.zeros(len(cases) + 1, dtype=bool)
        if len(rows):
            order_cases, first = np.unique(case_idx[rows], return_index=True)
            order_cases = order_cases[np.argsort(first, kind="stable")]  # cases as they first appear
            counts = np.bincount(case_idx[rows], minlength=len(cases) + 1)[order_cases]
            n_kept = max(1, int(np.searchsorted(np.cumsum(counts), limit, side="right")))
            kept[order_cases[:n_kept]] = True
        chosen &= kept[case_idx]
    if shard is not None:
        i, n = shard
        ours = np.asarray([c is not None and shard_index(c, n) == i for c in cases] + [False], dtype=bool)
        chosen &= ours[case_idx]
    return chosen


def _reviewed_ids(items: ScoringItems, reviewed: Mapping[str, Any] | None) -> frozenset[str] | None:
    """The items an invocation's ``--reviewed`` selected (accepted and fixed): computed again from the bench's
    reviews through the row ids it recorded (the reviews are append-only, so this is the set it asked; the
    fixed items are among ``items``: :func:`medr2.score.scorer._run_inputs` adds them)."""
    if reviewed is None:
        return None
    from medr2.bench.reviews import recorded_selection

    return recorded_selection(items.path.parent, reviewed).item_ids


def planned_items(manifest: Mapping[str, Any], items: ScoringItems) -> dict[str, np.ndarray] | None:
    """Per mode, the rows it was asked for over all recorded invocations (a mask over the bench's items);
    ``None`` when no plan is recorded."""
    from medr2.run.prompts import get_mode

    scopes = _scopes(manifest)
    if not scopes:
        return None
    seed = int(((manifest.get("identity") or {}).get("generation") or {}).get("seed") or 0)  # a stratified limit's
    plan: dict[str, np.ndarray] = {}
    memo: dict[Any, np.ndarray] = {}
    for inv, shard in scopes:
        tasks, stages, stratify = inv.get("tasks"), inv.get("stages"), inv.get("stratify")
        reviewed = inv.get("reviewed") if isinstance(inv.get("reviewed"), dict) else None
        key = (tuple(inv.get("variants") or ()), inv.get("split"), inv.get("limit"), shard,
               None if tasks is None else tuple(tasks), None if stages is None else tuple(stages),
               tuple(stratify or ()), json.dumps(reviewed, sort_keys=True))
        if key not in memo:
            memo[key] = _selection(items, variants=inv.get("variants"), split=inv.get("split"),
                                   limit=inv.get("limit"), shard=shard, tasks=tasks, stages=stages,
                                   stratify=stratify, seed=seed, item_ids=_reviewed_ids(items, reviewed))
        for mode in inv.get("modes") or []:
            chosen = memo[key]
            if get_mode(mode).history == "own":
                chosen = _with_earlier_steps(items, chosen)
            if mode in plan:
                plan[mode] = plan[mode] | chosen
            else:
                plan[mode] = chosen
    return plan


class AnsweredIds(AbstractSet[str]):
    """The item ids answered in one mode as one flag per item of the bench (a byte per item, not a set entry
    per answer): what :func:`completeness` reads, collected batch by batch (:meth:`add_positions`)."""

    def __init__(self, items: ScoringItems) -> None:
        self._items = items
        self.mask = np.zeros(len(items), dtype=bool)

    def add_positions(self, positions: np.ndarray) -> None:
        self.mask[positions] = True

    def __contains__(self, item_id: object) -> bool:
        code = int(self._items.positions([item_id])[0]) if isinstance(item_id, str) else -1
        return code >= 0 and bool(self.mask[code])

    def __iter__(self) -> Iterator[str]:
        return iter(self._items.ids(np.flatnonzero(self.mask)))

    def __len__(self) -> int:
        return int(np.count_nonzero(self.mask))


def completeness(manifest: Mapping[str, Any], items: ScoringItems,
                 answered: Mapping[str, AbstractSet[str]]) -> dict[str, Any]:
    """``{"complete", "planned", "answered", "missing", "modes": {MODE: {...}}, "unfinished_invocations",
    "shards_missing"}``; ``answered`` maps a mode to the item ids with a stored answer (ok or error).
    ``complete`` is ``None`` when the manifest records no plan."""
    scopes = _scopes(manifest)
    unfinished = [{"status": inv.get("status"), "started_at": inv.get("started_at"), "modes": inv.get("modes")}
                  for inv, _ in scopes if inv.get("status") in UNFINISHED]
    shards_missing = list(manifest.get("shards_missing") or [])
    plan = planned_items(manifest, items)
    if plan is None:
        n = sum(len(v) for v in answered.values())
        return {"complete": None, "planned": None, "answered": n, "missing": None, "modes": {},
                "unfinished_invocations": unfinished, "shards_missing": shards_missing,
                "reason": "the run manifest records no invocation (no plan to compare with)"}
    modes: dict[str, dict[str, int]] = {}
    for mode in sorted(plan):
        want, got = plan[mode], answered.get(mode, frozenset())
        got_mask = got.mask if isinstance(got, AnsweredIds) else _mask(items, got)
        n_want, have = int(np.count_nonzero(want)), int(np.count_nonzero(want & got_mask))
        modes[mode] = {"planned": n_want, "answered": have, "missing": n_want - have}
    planned = sum(m["planned"] for m in modes.values())
    have = sum(m["answered"] for m in modes.values())
    missing = planned - have
    return {"complete": missing == 0 and not shards_missing, "planned": planned, "answered": have,
            "missing": missing, "modes": modes, "unfinished_invocations": unfinished,
            "shards_missing": shards_missing}


def _mask(items: ScoringItems, ids: AbstractSet[str]) -> np.ndarray:
    out = np.zeros(len(items), dtype=bool)
    at = items.positions(list(ids))
    out[at[at >= 0]] = True
    return out


def describe(plan: Mapping[str, Any]) -> str | None:
    """A one-line warning for an incomplete run (``None`` when complete or unknown)."""
    if plan.get("complete") is not False:
        return None
    parts = [f"{plan['missing']:,} of {plan['planned']:,} planned answers missing"]
    per_mode = [f"{m}: {v['missing']:,}" for m, v in plan.get("modes", {}).items() if v["missing"]]
    if per_mode:
        parts[0] += f" ({', '.join(per_mode)})"
    if plan.get("unfinished_invocations"):
        states = sorted({str(u["status"]) for u in plan["unfinished_invocations"]})
        parts.append(f"{len(plan['unfinished_invocations'])} eval invocation(s) {'/'.join(states)}")
    if plan.get("shards_missing"):
        parts.append(f"shards missing: {', '.join(plan['shards_missing'])}")
    return "incomplete run: " + "; ".join(parts) + ". Metrics cover the answers stored so far; resume with the " \
        "same `medr2 eval` command to complete it."
