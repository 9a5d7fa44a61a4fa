"""Dispatch orders: the order the items of a wave are sent in (``medr2 eval --order NAME``; docs/running.md).

The order changes nothing that is stored (a request's hash is its content, and every answer is stored under
it); it changes which requests a server sees back to back. That matters to a server with a prefix cache
(vLLM's automatic prefix caching, SGLang's radix cache): the items of one case share the system prompt and the
image (clean items, the other tasks of the case, the text variants), so asked one after another their common
prefix is still cached.

- ``bench``: the bench's own order (the items as given). ``items.parquet`` is sorted by split, clean items first,
  then variant by variant (docs/bench-format.md), so the variants of one case are a whole variant's worth of items
  apart.
- ``case`` (``medr2 eval``'s default, :data:`DEFAULT_ORDER`): the items of one case back to back (its clean items,
  then each variant's, in bench order), the cases in the order the bench first lists them.

An order is a registry entry (:data:`ORDERS`): a function ``(items) -> Iterable[Item]`` yielding every item it
is given exactly once. ``items`` is a list, or an :class:`~medr2.bench.select.ItemSelection` streamed from the
bench's columns; an order keeps what it holds bounded for the latter (``case``: one short batch per variant).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from medr2.registry import Registry

if TYPE_CHECKING:
    from medr2.bench.table import BenchTable, ItemFilter
    from medr2.records import Item

DEFAULT_ORDER = "case"  # medr2 eval's (docs/benchmarks.md "Dispatch order": more prefix-cache hits, less server CPU)
CURSOR_ROWS = 1_024  # rows each variant's cursor of the streamed case order holds (BenchTable.iter_items_held)

Order = Callable[[Iterable["Item"]], Iterable["Item"]]

ORDERS: Registry[Order] = Registry("order", field="--order")


def bench_order(items: Iterable[Item]) -> Iterable[Item]:
    """The items as given (the bench's order)."""
    return items


def case_order(items: Iterable[Item]) -> Iterable[Item]:
    """The items of each case back to back. A selection streamed from the bench is merged from one cursor
    per variant (each variant's rows list the cases in the same order, so the cursors advance together);
    anything else is grouped in memory (it is held already)."""
    from medr2.bench.select import ItemSelection

    if isinstance(items, ItemSelection) and items.held is None:
        return merge_by_case(variant_cursors(items.table, items.filter))
    return group_by_case(items)


def group_by_case(items: Iterable[Item]) -> list[Item]:
    """``items`` grouped by case, stably: cases in order of first appearance, each case's items in their order."""
    by_case: dict[str, list[Item]] = {}
    for it in items:
        by_case.setdefault(it.case_id, []).append(it)
    return [it for case_items in by_case.values() for it in case_items]


def variant_cursors(table: BenchTable, flt: ItemFilter) -> list[Iterator[Item]]:
    """One stream per variant in the rows ``flt`` accepts (in the order the variants first appear), each
    reading only that variant's rows and holding :data:`CURSOR_ROWS` of them at a time, with no Parquet reader
    kept open between them (:meth:`~medr2.bench.table.BenchTable.iter_items_held`: ~40 open readers held a
    decompressed row group each, ≈ 5 MB apiece; docs/benchmarks.md, "Memory of a full evaluation")."""
    seen = table.value_counts("variant", flt)  # the variants in order of first appearance (dictionary indices)
    return [table.iter_items_held(replace(flt, variant_ids=frozenset({v})), hold_rows=CURSOR_ROWS) for v in seen]


def merge_by_case(cursors: list[Iterator[Item]]) -> Iterator[Item]:
    """Every item of ``cursors`` once: the first cursor not exhausted names the next case, and each cursor then
    gives its items of that case at its head. Where every cursor lists cases in the first's order (and the first
    lists every case, as the clean variant does), each case comes out whole; otherwise a case may come out in
    more than one run, never an item twice or lost."""
    heads = [next(c, None) for c in cursors]
    while True:
        lead = next((h for h in heads if h is not None), None)
        if lead is None:
            return
        case = lead.case_id
        for k, cursor in enumerate(cursors):
            head = heads[k]
            while head is not None and head.case_id == case:
                yield head
                head = next(cursor, None)
            heads[k] = head


ORDERS.register("bench", bench_order)
ORDERS.register("case", case_order)


def get_order(name: str) -> Order:
    """The order registered as ``name`` (unknown: BadInput naming ``--order``)."""
    return ORDERS.lookup(name)
