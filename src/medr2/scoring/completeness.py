"""Whether a scored run holds an answer for everything its plan asked.

The plan is what the run manifest records (``medr2 eval`` appends one invocation per call, with its modes,
variant filter, split, limit and status; the identity holds the shard; a merged run keeps its shards'
invocations under ``merged_from`` and lists ``shards_missing``). Each invocation's selection is made again
over the bench's table by eval's one selection (:func:`medr2.bench.select.selected_rows`, plus, in
``chain-own``, the earlier chain steps the runner asks first), so an interrupted, killed or still running
invocation shows as planned items without a stored answer. A stored error counts as answered (it is scored as
``error``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Set as AbstractSet
from typing import Any, cast

import numpy as np

from medr2.bench.table import BenchTable
from medr2.scoring.itemcols import ScoringItems

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


def _selection(table: BenchTable, items: ScoringItems, inv: Mapping[str, Any], shard: tuple[int, int] | None,
               seed: int) -> np.ndarray:
    """The rows of ``items`` the invocation ``inv`` selected: eval's one selection
    (:func:`medr2.bench.select.selected_rows`) made again over the bench's table (by columns, no record built), with
    the items its ``--reviewed`` selection asked (accepted and fixed: the fixes read after the table's rows, as eval
    reads them; the reviews are append-only, so the rows it recorded give the set it asked)."""
    from medr2.bench.reviews import recorded_selection
    from medr2.bench.select import selected_rows
    from medr2.errors import BadInput

    reviewed = inv.get("reviewed") if isinstance(inv.get("reviewed"), dict) else None
    chosen = recorded_selection(table.root, reviewed) if reviewed is not None else None
    table.add_items(chosen.fixed if chosen is not None else ())
    try:
        got = selected_rows(table, variants=inv.get("variants"), split=inv.get("split"), limit=inv.get("limit"),
                            shard=shard, tasks=inv.get("tasks"), stages=inv.get("stages"),
                            stratify=inv.get("stratify"), seed=seed,
                            item_ids=chosen.item_ids if chosen is not None else None)
    except BadInput:  # a split no item can have, recorded before such values were refused: it asked nothing
        return np.zeros(len(items), dtype=bool)
    mask = np.zeros(len(items), dtype=bool)
    for cols in table.column_values(["item_id"], got.filter):
        at = items.positions(cols["item_id"])
        mask[at[at >= 0]] = True
    return mask


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
    table = BenchTable(items.path.parent)
    for inv, shard in scopes:
        tasks, stages, stratify = inv.get("tasks"), inv.get("stages"), inv.get("stratify")
        reviewed = inv.get("reviewed") if isinstance(inv.get("reviewed"), dict) else None
        key = (tuple(inv.get("variants") or ()), inv.get("split"), inv.get("limit"), shard,
               None if tasks is None else tuple(tasks), None if stages is None else tuple(stages),
               tuple(stratify or ()), json.dumps(reviewed, sort_keys=True))
        if key not in memo:
            memo[key] = _selection(table, items, inv, shard, seed)
        for mode in inv.get("modes") or []:
            chosen = memo[key]
            if get_mode(mode).history == "own":
                chosen = _with_earlier_steps(items, chosen)
            if mode in plan:
                plan[mode] = plan[mode] | chosen
            else:
                plan[mode] = chosen
    table.close()
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
