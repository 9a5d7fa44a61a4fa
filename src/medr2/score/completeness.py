"""Whether a scored run holds an answer for everything its plan asked.

The plan is what the run manifest records (``medr2 eval`` appends one invocation per call, with its modes,
variant filter, split, limit and status; the identity holds the shard; a merged run keeps its shards'
invocations under ``merged_from`` and lists ``shards_missing``). Each invocation's selection is recomputed
from the bench with the runner's own :func:`medr2.run.runner.select_items` (plus, in ``chain-own``, the
earlier chain steps the runner asks first), so an interrupted, killed or still running invocation shows as
planned items without a stored answer. A stored error counts as answered (it is scored as ``error``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, cast

import numpy as np

from medr2.score.items import ScoringItem

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


def _with_earlier_steps(selected: list[ScoringItem], items: Iterable[ScoringItem]) -> list[ScoringItem]:
    """``selected`` plus every earlier chain step they need answered first (what ``chain-own`` asks)."""
    from medr2.run.runner import ChainIndex

    index = ChainIndex(cast(Any, [it for it in items if it.chain_id is not None and it.step is not None]))
    asked = {it.item_id: it for it in selected}
    frontier = list(selected)
    while frontier:
        nxt = []
        for it in frontier:
            for e in index.earlier(cast(Any, it)):
                if e.item_id not in asked:
                    asked[e.item_id] = cast(Any, e)
                    nxt.append(cast(Any, e))
        frontier = nxt
    return list(asked.values())


def planned_items(manifest: Mapping[str, Any], items: Mapping[str, ScoringItem]) -> dict[str, set[str]] | None:
    """The item ids each mode was asked for over all recorded invocations; ``None`` when no plan is recorded."""
    from medr2.run.prompts import get_mode
    from medr2.run.runner import select_items

    scopes = _scopes(manifest)
    if not scopes:
        return None
    every = list(items.values())
    plan: dict[str, set[str]] = {}
    memo: dict[Any, list[ScoringItem]] = {}
    for inv, shard in scopes:
        key = (tuple(inv.get("variants") or ()), inv.get("split"), inv.get("limit"), shard)
        if key not in memo:
            memo[key] = cast(list[ScoringItem], select_items(
                cast(Any, every), variants=inv.get("variants"), split=inv.get("split"), limit=inv.get("limit"),
                shard=shard))
        for mode in inv.get("modes") or []:
            chosen = memo[key]
            if get_mode(mode).history == "own":
                chosen = _with_earlier_steps(chosen, every)
            plan.setdefault(mode, set()).update(it.item_id for it in chosen)
    return plan


class AnsweredIds(AbstractSet[str]):
    """The item ids answered in one mode as one flag per item of the bench (a byte per item, not a set entry
    per answer): what :func:`completeness` reads, collected batch by batch (:meth:`add`)."""

    def __init__(self, codes: Mapping[str, int], ids: Sequence[str]) -> None:
        self._codes, self._ids = codes, ids
        self._mask = np.zeros(len(ids), dtype=bool)

    def add(self, item_ids: Iterable[str]) -> None:
        self._mask[np.fromiter((self._codes[i] for i in item_ids), dtype=np.int64)] = True

    def __contains__(self, item_id: object) -> bool:
        code = self._codes.get(item_id) if isinstance(item_id, str) else None
        return code is not None and bool(self._mask[code])

    def __iter__(self) -> Iterator[str]:
        return (self._ids[i] for i in np.flatnonzero(self._mask).tolist())

    def __len__(self) -> int:
        return int(np.count_nonzero(self._mask))

    def __rand__(self, other: Iterable[Any]) -> set[str]:  # ``planned & answered`` with a built-in set
        return {v for v in other if v in self}


def completeness(manifest: Mapping[str, Any], items: Mapping[str, ScoringItem],
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
        have = len(want & got)
        modes[mode] = {"planned": len(want), "answered": have, "missing": len(want) - have}
    planned = sum(m["planned"] for m in modes.values())
    have = sum(m["answered"] for m in modes.values())
    missing = planned - have
    return {"complete": missing == 0 and not shards_missing, "planned": planned, "answered": have,
            "missing": missing, "modes": modes, "unfinished_invocations": unfinished,
            "shards_missing": shards_missing}


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
