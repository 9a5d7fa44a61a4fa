"""Eval's selection of items (docs/running.md, "Selecting items"), made over the bench query layer.

:func:`select_items` is the one selection every caller makes (``medr2 eval`` over a bench read by columns, a
caller holding a loaded :class:`~medr2.bench.format.Bench` over the same API on a table held in memory,
:meth:`~medr2.bench.table.BenchTable.held`): the predicates (split, variants, tasks, stages, item ids) are an
:class:`~medr2.bench.table.ItemFilter`; ``--limit`` keeps whole cases in bench order from the ``case_id`` counts of
the accepted rows, or with ``--stratify`` the items :func:`stratified_ids` samples from the columns it names;
``--shard`` keeps a shard's cases (:func:`shard_index`). The values it is given are checked against the bench's
(:func:`check_selection`) and an empty selection is refused (:func:`refuse_empty`). The selection itself, by
columns and without records, is :func:`selected_rows`: what scoring recomputes for each recorded invocation
(:mod:`medr2.scoring.completeness`).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, get_args

from medr2.errors import BadInput
from medr2.records import Item, Split, stable_hash
from medr2.variant_id import variant_matches

if TYPE_CHECKING:  # the table (pyarrow) is imported when a selection is made, not with the split names
    from medr2.bench.table import BenchTable, ItemFilter


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` with 0 <= I < N."""
    try:
        i_s, n_s = text.split("/")
        i, n = int(i_s), int(n_s)
    except ValueError:
        raise BadInput(f"--shard must look like I/N (e.g. 0/4), got {text!r}", field="--shard") from None
    if n < 1 or not 0 <= i < n:
        raise BadInput(f"--shard {text}: need 0 <= I < N (shards are numbered from 0)", field="--shard")
    return i, n


def parse_stages(stages: str | Sequence[int] | None) -> tuple[int, ...] | None:
    """``--stage``: stage numbers, or a comma list of them (None or empty: every stage)."""
    if stages is None:
        return None
    if isinstance(stages, str):
        parts = [p.strip() for p in stages.split(",") if p.strip()]
        if not all(p.isdigit() for p in parts):
            raise BadInput(f"--stage takes stage numbers (e.g. 1,3), got {stages[:40]!r}", field="--stage")
        return tuple(int(p) for p in parts) or None
    return tuple(int(s) for s in stages) or None


def shard_index(case_id: str, n: int) -> int:
    """Deterministic shard of a case (chains and variants of a case stay in one shard)."""
    return int(stable_hash(["shard", case_id]), 16) % n


SPLITS: tuple[str, ...] = get_args(Split)  # the splits an item can be in
ALL_SPLITS = "all"  # ``--split all``: every split
SPLIT_CHOICES = (*SPLITS, ALL_SPLITS)


def split_filter(split: str | None) -> str | None:
    """The items filter's split for a ``--split`` value (``all``, or None as older runs record it: every split);
    an unknown value is a usage error listing the valid ones."""
    if split is None or split == ALL_SPLITS:
        return None
    if split not in SPLITS:
        raise BadInput(f"unknown split {split!r}; valid: {', '.join(SPLIT_CHOICES)}", field="--split")
    return split


def _listed(counts: Mapping[Any, int], limit: int = 24) -> str:
    shown = [f"{v} ({n:,})" for v, n in sorted(counts.items(), key=lambda kv: str(kv[0]))]
    more = len(shown) - limit
    return ", ".join(shown[:limit]) + (f", ... ({more} more)" if more > 0 else "") if shown else "none"


def check_selection(present: Callable[[str], Mapping[Any, int]], *, variants: Sequence[str] | None = None,
                    split: str | None = None, tasks: Sequence[str] | None = None,
                    stages: Sequence[int] | None = None) -> None:
    """Refuse a selection value that is no value of the bench (a typo such as ``--split tset`` or ``--variants
    V10`` would otherwise select nothing): a usage error naming the option and listing the bench's values with
    their item counts. ``present(column)``: the bench's items per value of ``split``/``variant``/``task``/``stage``.
    The check :func:`select_items` (so every eval entry point) makes."""
    split_filter(split)
    if variants and "all" not in variants:
        have = {("clean" if v is None else v): n for v, n in present("variant").items()}
        unknown = [w for w in variants if not any(variant_matches(v, [w]) for v in have)]
        if unknown:
            raise BadInput(f"no variant of this bench matches {', '.join(map(repr, unknown))}; valid: all, "
                           f"{_listed(_variant_codes(have))} (a code matches its ids, e.g. V8 matches V8-noise-2)",
                           field="--variants")
    for option, column, wanted in (("--task", "task", tasks), ("--stage", "stage", stages)):
        if wanted is None:
            continue
        values = present(column)
        unknown = sorted({str(w) for w in wanted if w not in values})
        if unknown:
            raise BadInput(f"no {column} of this bench is {', '.join(unknown)}; valid: {_listed(values)}",
                           field=option)


def _variant_codes(ids: Mapping[str, int]) -> dict[str, int]:
    """Items per variant code and per id (``V8`` and ``V8-noise-2``), what ``--variants`` accepts."""
    out: dict[str, int] = defaultdict(int)
    for v, n in ids.items():
        code = v.split("-", 1)[0]
        out[code] += n
        if code != v:
            out[v] += n
    return dict(out)


def refuse_empty(n: int, present: Callable[[str], Mapping[Any, int]], *, split: str | None, allow_empty: bool,
                 what: str) -> None:
    """An empty selection is a usage error (exit 2) saying what the bench holds, unless ``allow_empty``."""
    if n or allow_empty:
        return
    hint = f"; this bench's items per split: {_listed(present('split'))}" if split is not None else ""
    raise BadInput(f"no item of the bench matches {what}{hint}. Choose another selection (e.g. --split all), or "
                   "pass --allow-empty to run an empty selection on purpose", field="selection")


def _describe(variants: Sequence[str] | None, split: str | None, tasks: Sequence[str] | None,
              stages: Sequence[int] | None, item_ids: frozenset[str] | None = None) -> str:
    parts = [f"--split {split}" if split is not None else "", f"--variants {','.join(variants)}" if variants else "",
             f"--task {','.join(tasks)}" if tasks else "", f"--stage {','.join(map(str, stages))}" if stages else "",
             f"--reviewed accepted ({len(item_ids):,} items accepted)" if item_ids is not None else ""]
    return " ".join(p for p in parts if p) or "the selection"




STRATA = ("task", "variant", "stage", "form")  # the item columns ``--stratify`` may name (scoring reads them too)


def parse_stratify(stratify: Sequence[str] | None, limit: int | None) -> tuple[str, ...] | None:
    """``--stratify``: item columns of :data:`STRATA` (None or empty: no stratification); it goes with ``--limit``."""
    keys = tuple(dict.fromkeys(stratify or ()))
    if not keys:
        return None
    unknown = [k for k in keys if k not in STRATA]
    if unknown:
        raise BadInput(f"cannot stratify by {', '.join(map(repr, unknown))}; valid: {', '.join(STRATA)}",
                       field="--stratify")
    if limit is None:
        raise BadInput("--stratify says how --limit samples; give --limit N too", field="--stratify")
    return keys


def _stratum_value(key: str, value: Any) -> str:
    """A stratum's value of ``key``: a variant by its code (``V8-blur-2`` is ``V8``), anything else as it is."""
    return str(value).split("-", 1)[0] if key == "variant" else str(value)


def stratified_ids(rows: Iterable[Mapping[str, Any]], limit: int, keys: Sequence[str], seed: int = 0) -> set[str]:
    """The items of a stratified ``--limit``: at most ``limit`` items (at least one), spread evenly over the values
    of each of ``keys`` (a variant by its code): the next item comes from the stratum (a combination of values)
    whose values have the fewest items so far, summed over the keys (ties in an order seeded by ``seed``), each
    stratum's items in an order seeded by ``seed``. A variant item comes with its clean item (``parent_id``) where
    that is in the selection too, the pair counting as two (a pick that would pass the limit gives way to the
    stratum's next item). ``rows``: ``item_id``, ``parent_id`` and the ``keys`` of each selected item."""
    parents: dict[str, str | None] = {}
    stratum_of: dict[str, tuple[str, ...]] = {}
    strata: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for r in rows:
        iid = r["item_id"]
        parents[iid] = r.get("parent_id")
        stratum_of[iid] = tuple(_stratum_value(k, r[k]) for k in keys)
        strata[stratum_of[iid]].append(iid)
    live = {st: deque(sorted(ids, key=lambda i: stable_hash(["stratify", seed, i]))) for st, ids in strata.items()}
    tie = {st: stable_hash(["stratum", seed, list(st)]) for st in live}
    counts: list[dict[str, int]] = [defaultdict(int) for _ in keys]
    chosen: set[str] = set()
    while live and len(chosen) < limit:
        st = min(live, key=lambda s: (sum(c[v] for c, v in zip(counts, s, strict=True)), tie[s]))
        queue = live[st]
        while queue:
            iid = queue.popleft()
            parent = parents.get(iid)
            need = [i for i in (iid, parent) if i is not None and i in parents and i not in chosen]
            if need and len(chosen) + len(need) <= limit:
                chosen.update(need)
                for i in need:
                    for c, v in zip(counts, stratum_of[i], strict=True):
                        c[v] += 1
                break
        if not queue:
            del live[st]
    return chosen



class ItemSelection:
    """The items a run asks (:func:`select_items`), streamed from a :class:`~medr2.bench.table.BenchTable`: ``len``
    comes from a columnar pass, and each iteration reads the items table again by its predicate, building records one
    batch at a time (a ``--limit`` selection, at most ``limit`` items or one case, is held)."""

    def __init__(self, table: BenchTable, flt: ItemFilter, n: int, held: list[Item] | None = None) -> None:
        self.table = table
        self.filter = flt
        self._n = n
        self._held = held

    def __len__(self) -> int:
        return self._n

    @property
    def held(self) -> list[Item] | None:
        """The items held in memory (a ``--limit`` selection), else None (streamed at each iteration)."""
        return self._held

    def __iter__(self) -> Iterator[Item]:
        return iter(self._held) if self._held is not None else self.table.iter_items(self.filter)

    def chain_ids(self) -> set[str]:
        """The chains of the selected items (a columnar pass)."""
        if self._held is not None:
            return {it.chain_id for it in self._held if it.chain_id is not None}
        out: set[str] = set()
        for cols in self.table.column_values(["chain_id"], self.filter):
            out.update(c for c in cols["chain_id"] if c is not None)
        return out


@dataclass(frozen=True)
class Selected:
    """A selection as a filter of the table's rows (:func:`selected_rows`): ``filter`` keeps exactly the rows
    selected; ``matched``: the rows the predicates accept before ``--limit`` and ``--shard``; ``n``: the rows
    selected where known without building records (None: a plain ``--limit``, counted by the records built)."""

    filter: ItemFilter
    matched: int
    n: int | None


def selected_rows(table: BenchTable, *, variants: Sequence[str] | None = None, split: str | None = None,
                  limit: int | None = None, shard: tuple[int, int] | None = None,
                  tasks: Sequence[str] | None = None, stages: Sequence[int] | None = None,
                  stratify: Sequence[str] | None = None, seed: int = 0,
                  item_ids: frozenset[str] | None = None) -> Selected:
    """The one selection (what :func:`select_items` asks, what scoring recomputes for a recorded invocation:
    :mod:`medr2.scoring.completeness`), made by columns, no record built: the predicates (split: ``all`` or None
    every split; variants, tasks, stages, ``item_ids``) as an :class:`~medr2.bench.table.ItemFilter`; ``limit``
    keeps whole cases in bench order (at least one case) up to ``limit`` items from the ``case_id`` counts of the
    accepted rows, or with ``stratify`` (item columns, :data:`STRATA`) the items :func:`stratified_ids` samples
    (seeded by ``seed``); then this shard's cases are kept (:func:`shard_index`). An unknown split is a BadInput
    (:func:`split_filter`); other values no item has select nothing."""
    from medr2.bench.table import ItemFilter

    strata = parse_stratify(stratify, limit)
    flt = ItemFilter(split=split_filter(split), variants=tuple(variants) if variants else None,
                     tasks=frozenset(tasks) if tasks is not None else None,
                     stages=frozenset(stages) if stages is not None else None, item_ids=item_ids)
    if limit is None and shard is None:
        n = table.count(flt)
        return Selected(flt, n, n)
    per_case = table.case_counts(flt)  # insertion order: the order cases first appear in the bench
    matched = sum(per_case.values())
    if limit is not None and strata is not None:
        columns = list(dict.fromkeys(["item_id", "parent_id", "case_id", *strata]))
        rows = (dict(zip(cols, values, strict=True)) for batch in table.column_values(columns, flt)
                for cols in [list(batch)] for values in zip(*batch.values(), strict=True))
        flt = replace(flt, item_ids=frozenset(stratified_ids(rows, limit, strata, seed)))
        if shard is not None:
            i, n_shards = shard
            flt = replace(flt, item_ids=frozenset(
                iid for cols in table.column_values(["item_id", "case_id"], flt)
                for iid, cid in zip(cols["item_id"], cols["case_id"], strict=True) if shard_index(cid, n_shards) == i))
        return Selected(flt, matched, len(flt.item_ids or ()))
    cases = list(per_case)
    if limit is not None:
        kept_n = 0
        kept: list[str] = []
        for cid in cases:
            if kept and kept_n + per_case[cid] > limit:
                break
            kept.append(cid)
            kept_n += per_case[cid]
        cases = kept
    if shard is not None:
        i, n_shards = shard
        cases = [cid for cid in cases if shard_index(cid, n_shards) == i]
    return Selected(replace(flt, case_ids=frozenset(cases)), matched,
                    sum(per_case[c] for c in cases) if limit is None else None)


def select_items(table: BenchTable, *, variants: Sequence[str] | None = None, split: str | None = None,
                 limit: int | None = None, shard: tuple[int, int] | None = None,
                 tasks: Sequence[str] | None = None, stages: Sequence[int] | None = None,
                 allow_empty: bool = True, stratify: Sequence[str] | None = None,
                 seed: int = 0, item_ids: frozenset[str] | None = None) -> ItemSelection:
    """The items of ``table`` a run asks, in bench order: the rows of :func:`selected_rows` (``item_ids``:
    ``--reviewed accepted``, :attr:`medr2.bench.reviews.Selection.item_ids`). Found from the columns (row groups
    pruned by their statistics), never a list of every record: a ``--limit`` selection (at most ``limit`` items
    or one case) is held as records, any other is streamed. A value no item has is refused
    (:func:`check_selection`); so is an empty selection unless ``allow_empty``."""
    check_selection(table.value_counts, variants=variants, split=split, tasks=tasks, stages=stages)
    got = selected_rows(table, variants=variants, split=split, limit=limit, shard=shard, tasks=tasks, stages=stages,
                        stratify=stratify, seed=seed, item_ids=item_ids)
    refuse_empty(got.matched, table.value_counts, split=split_filter(split), allow_empty=allow_empty,
                 what=_describe(variants, split, tasks, stages, item_ids))
    if limit is None:
        assert got.n is not None
        return ItemSelection(table, got.filter, got.n)
    held = list(table.iter_items(got.filter))  # bench order
    if parse_stratify(stratify, limit) is None:  # whole cases, each case's items together, cases in bench order
        by_case: dict[str, list[Item]] = {}
        for it in held:
            by_case.setdefault(it.case_id, []).append(it)
        held = [it for case_items in by_case.values() for it in case_items]
    return ItemSelection(table, got.filter, len(held), held)
