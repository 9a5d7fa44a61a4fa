"""The bench items a report reads, without loading the benches (docs/report.md, "Memory").

:class:`BenchItems` stands for the items of the benches of a report's runs (an id held by two benches is the
later bench's item, as when their items were merged into one dict). It never holds every item: the browser asks
whether a scored row's item is in a bench by the 64-bit hash of its id that orders the browser anyway
(:func:`id_hashes`; one sorted ``uint64`` per bench item), fetches the items it shows by id
(:meth:`~medr2.bench.table.BenchTable.items_by_id`, row groups pruned by their id statistics), and reads the
columns a plot needs in batches (:meth:`ReportItems.column_batches`). Items already in memory (tests, callers with
a loaded bench) are read through the same API over them held as a table (:func:`report_items`,
:meth:`~medr2.bench.table.BenchTable.held`).
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from hashlib import sha256
from pathlib import Path
from typing import Any

import numpy as np

from medr2.bench.idset import hex_ints
from medr2.bench.table import BenchTable, ItemFilter
from medr2.records import Item

HASH_CHARS = 16  # hex characters of ``medr2.records.stable_hash`` (64 bits)


def stable_id_hash(item_id: str) -> str:
    """``medr2.records.stable_hash(item_id)`` (what orders the browser), with the string case inlined."""
    return sha256(json.dumps(item_id, ensure_ascii=False).encode("utf-8")).hexdigest()[:HASH_CHARS]


def hash_ints(hex_hashes: Sequence[str]) -> np.ndarray:
    """16-hex-character hashes as ``uint64`` (big-endian, so their order is the strings' order):
    :func:`medr2.bench.idset.hex_ints`, which the bench's id set uses for the same conversion."""
    ints = hex_ints(hex_hashes)
    if ints is None:
        raise ValueError("not 16-hex-digit hashes")
    return ints


def id_hashes(ids: Iterable[str]) -> np.ndarray:
    return hash_ints([stable_id_hash(i) for i in ids])


class ReportItems(Mapping[str, Item]):
    """What a report reads of its benches' items; see the module docstring."""

    sources: int = 1  # tables an id may be in more than once (a later one's item wins)

    @abstractmethod
    def present(self, ids: Sequence[str], hashes: np.ndarray) -> np.ndarray:
        """Whether each item (``ids``, their :func:`id_hashes`) is held: a boolean array."""

    @abstractmethod
    def fetch(self, ids: Iterable[str]) -> dict[str, Item]:
        """The items of ``ids`` that are held, by id."""

    @abstractmethod
    def column_batches(self, columns: Sequence[str], flt: ItemFilter | None = None,
                       ) -> Iterator[dict[str, list[Any]]]:
        """``columns`` of the items ``flt`` accepts, one dict of lists per batch, bench by bench in their order
        (a caller that keys by ``item_id`` and overwrites gets the later bench's item)."""

    def __getitem__(self, item_id: str) -> Item:
        got = self.fetch([item_id]).get(item_id)
        if got is None:
            raise KeyError(item_id)
        return got


class BenchItems(ReportItems):
    """The items of benches read by columns (:class:`~medr2.bench.table.BenchTable`), later benches first for
    an id both hold. Membership is decided by the 64-bit hash of the id (computed once per bench, 8 bytes an
    item); an id outside the benches whose hash equals a held id's would count as held (chance below
    ``n_scored * n_items / 2**64``), and :meth:`fetch` is exact."""

    def __init__(self, tables: Sequence[BenchTable]) -> None:
        self.tables = list(tables)
        self.sources = len(self.tables)
        self._hashes: list[np.ndarray] | None = None

    def _bench_hashes(self) -> list[np.ndarray]:
        if self._hashes is None:
            self._hashes = []
            for t in self.tables:
                parts = [id_hashes(cols["item_id"]) for cols in t.column_values(["item_id"])]
                self._hashes.append(np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.uint64))
        return self._hashes

    def present(self, ids: Sequence[str], hashes: np.ndarray) -> np.ndarray:
        out = np.zeros(len(hashes), dtype=bool)
        for held in self._bench_hashes():
            if len(held):
                k = np.minimum(np.searchsorted(held, hashes), len(held) - 1)
                out |= held[k] == hashes
        return out

    def fetch(self, ids: Iterable[str]) -> dict[str, Item]:
        wanted = set(ids)
        out: dict[str, Item] = {}
        for t in self.tables:
            out.update(t.items_by_id(wanted))
        return out

    def column_batches(self, columns: Sequence[str], flt: ItemFilter | None = None,
                       ) -> Iterator[dict[str, list[Any]]]:
        for t in self.tables:
            yield from t.column_values(columns, flt)

    def __iter__(self) -> Iterator[str]:
        """Every held id once (an id of an earlier bench that a later one also holds is given with the later)."""
        hashes = self._bench_hashes()
        for k, t in enumerate(self.tables):
            for cols in t.column_values(["item_id"]):
                ids = cols["item_id"]
                later = np.zeros(len(ids), dtype=bool)
                h = id_hashes(ids)
                for held in hashes[k + 1:]:
                    if len(held):
                        later |= held[np.minimum(np.searchsorted(held, h), len(held) - 1)] == h
                yield from (i for i, dup in zip(ids, later, strict=True) if not dup)

    def __len__(self) -> int:
        """Held ids: the bench's row count for one bench, the distinct id hashes of several."""
        if len(self.tables) == 1:
            return self.tables[0].n_items
        hashes = self._bench_hashes()
        return int(len(np.unique(np.concatenate(hashes)))) if hashes else 0


def report_items(items: Mapping[str, Item]) -> ReportItems:
    """``items`` with the report's face: a :class:`ReportItems` as it is, a plain mapping read through the bench
    query layer over its records held as a table (:meth:`~medr2.bench.table.BenchTable.held`; no bench folder)."""
    if isinstance(items, ReportItems):
        return items
    return BenchItems([BenchTable.held(Path("."), {}, list(items.values()))])
