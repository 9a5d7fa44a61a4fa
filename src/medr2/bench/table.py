"""Columnar access to a bench folder (docs/bench-format.md, "Reading a bench by columns").

:class:`BenchTable` opens a bench without building its records: the items table is read by columns and
predicates (:class:`ItemFilter`: split, variants, tasks, stages, cases, chains), row groups whose column
statistics rule a predicate out are skipped, the rest is read one record batch at a time, and an
:class:`~medr2.records.Item` is built only for the rows a caller takes. Cases are built one at a time, on
request (:meth:`BenchTable.case`). ``BenchTable.open(validate=True)`` makes the bench's one validation
(:meth:`BenchTable.validate`: the tables by columns, each item as it is built), the one every reader makes.
:meth:`BenchTable.held` is the same API over items held in memory (a loaded
:class:`~medr2.bench.format.Bench`): every read of items goes through it, whatever holds them.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from medr2.arrowmem import open_parquet
from medr2.bench.format import (
    CASE_SCHEMA,
    ITEM_SCHEMA,
    BenchFace,
    Validator,
    _open_table,
    _record_columns,
    batch_records,
    read_manifest,
    verify_checksums,
)
from medr2.errors import BadInput
from medr2.records import Case, Item
from medr2.variant_id import variant_matches

BATCH_ROWS = 4_096  # rows per record batch when streaming the items table
SCAN_ROWS = 65_536  # rows per batch of a scan of a few columns (counts), at most a row group
HOLD_ROWS = 2_048  # rows a stream of BenchTable.iter_items_held holds (decoded, copied) between reads
RECORD_ROWS = 64  # rows made records at a time by iter_items_held
CASE_CACHE = 256  # decoded cases kept (a run asks the items of a case together)
ID_PRUNE_MAX = 1_024  # a filter on at most this many case / chain ids reads their column to skip row groups


class BenchSource(Protocol):
    """What adapters and the runner read from a bench, loaded (:class:`~medr2.bench.format.Bench`) or
    columnar (:class:`BenchTable`)."""

    root: Path
    manifest: dict[str, Any]

    @property
    def checksum(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def items_path(self) -> Path: ...

    def path(self, rel: str) -> Path: ...

    def case(self, case_id: str) -> Case: ...

    def iter_items(self, flt: ItemFilter | None = None) -> Iterator[Item]: ...


@dataclass(frozen=True)
class ItemFilter:
    """A predicate on items. Every given part must hold; ``None`` leaves a column free. ``variants`` entries
    match as in ``medr2 eval --variants`` (an id, or a code prefix; ``all`` matches every variant)."""

    split: str | None = None
    variants: tuple[str, ...] | None = None
    tasks: frozenset[str] | None = None
    stages: frozenset[int] | None = None
    case_ids: frozenset[str] | None = None
    chain_ids: frozenset[str] | None = None
    item_ids: frozenset[str] | None = None
    variant_ids: frozenset[str] | None = None  # exact variant ids (``variants`` also matches code prefixes)

    def value_tests(self) -> dict[str, Callable[[Any], bool]]:
        """Column -> test of one value, for each constrained column."""
        tests: dict[str, Callable[[Any], bool]] = {}
        if self.split is not None:
            split = self.split
            tests["split"] = lambda v: v == split
        if self.variants and "all" not in self.variants:
            wanted = self.variants
            tests["variant"] = lambda v: v is not None and variant_matches(v, wanted)
        if self.variant_ids is not None:
            exact, prefix = self.variant_ids, tests.get("variant")
            tests["variant"] = exact.__contains__ if prefix is None else lambda v: v in exact and prefix(v)
        for column, values in (("task", self.tasks), ("stage", self.stages), ("case_id", self.case_ids),
                               ("chain_id", self.chain_ids), ("item_id", self.item_ids)):
            if values is not None:
                tests[column] = values.__contains__
        return tests

    def matches(self, item: Item) -> bool:
        return all(test(getattr(item, column)) for column, test in self.value_tests().items())


def _sorted_if_possible(values: list[Any]) -> tuple[list[Any], bool]:
    """``values`` sorted, and whether they could be (mixed types, e.g. a stage key that is not a number, stay as
    they are and are scanned)."""
    try:
        return sorted(values), True
    except TypeError:
        return values, False


def _any_within(values: list[Any], is_sorted: bool, rng: tuple[Any, Any]) -> bool:
    """Whether any of ``values`` lies in ``rng`` (inclusive); a sorted list is searched by bisection."""
    if is_sorted:
        k = bisect.bisect_left(values, rng[0])
        return k < len(values) and values[k] <= rng[1]
    return any(rng[0] <= v <= rng[1] for v in values)


def _stat_range(md: pq.RowGroupMetaData, index: int) -> tuple[Any, Any] | None:
    stats = md.column(index).statistics
    if stats is None or not stats.has_min_max:
        return None
    return stats.min, stats.max


class BenchTable(BenchFace):
    """A bench folder read by columns (see the module docstring)."""

    def __init__(self, root: Path | str, manifest: dict[str, Any] | None = None) -> None:
        self.root = Path(root)
        self.manifest = manifest if manifest is not None else read_manifest(self.root)
        self._items_file: pq.ParquetFile | None = None
        self._case_index: dict[str, tuple[int, int]] | None = None  # case_id -> (row group, row)
        self._case_cache: OrderedDict[str, Case] = OrderedDict()
        self.row_groups_read = 0  # row groups a filtered read did not skip (for measurements)
        self._record_check: Validator | None = None  # per-record checks of each item built (validate)
        self.checks_trusted = False  # validate trusted the checks recorded by the bench's writer
        self.added: pa.Table | None = None  # items read after the table's rows (add_items: the settled review fixes)
        self._held: pa.Table | None = None  # the items held in memory in place of the items file (held)

    @classmethod
    def open(cls, root: Path | str, validate: bool = True, *, image_hashes: bool = True,
             every_item: bool = False) -> BenchTable:
        """Open a bench; with ``validate`` make the bench's one validation (:meth:`validate`: the tables by
        columns, then each item as it is built; ``every_item``: every item built and checked now)."""
        table = cls(root)
        if validate:
            table.validate(image_hashes=image_hashes, every_item=every_item)
        return table

    @classmethod
    def held(cls, root: Path | str, manifest: dict[str, Any], items: Sequence[Item] | pa.Table) -> BenchTable:
        """The same API over ``items`` held in memory as one Arrow table (records, or their table made by
        ``ITEM_SCHEMA.to_table``), in their order, in place of the items file (which is never read): what a loaded
        :class:`~medr2.bench.format.Bench` is read through. Its rows have no row groups to prune; every read
        filters them as it filters the rows :meth:`add_items` adds."""
        table = cls(root, manifest)
        table._held = items if isinstance(items, pa.Table) else ITEM_SCHEMA.to_table(list(items))
        return table

    # -- the bench (checksum, name, path: BenchFace) -------------------------------------------
    @property
    def items_file(self) -> pq.ParquetFile:
        if self._held is not None:
            raise BadInput("the items are held in memory, not read from the file", file=str(self.items_path))
        if self._items_file is None:
            self._items_file = _open_table(self.items_path, ITEM_SCHEMA)
        return self._items_file

    @property
    def schema(self) -> pa.Schema:
        """The items table's columns (the file's, or those of the items held)."""
        return self._held.schema if self._held is not None else self.items_file.schema_arrow

    def _record_cols(self) -> list[str]:
        """The columns of the items table that are record fields."""
        return [n for n in self.schema.names if n in ITEM_SCHEMA.model.model_fields]

    @property
    def n_items(self) -> int:
        """Rows of the items table (from the Parquet footer), or of the items held."""
        return self._held.num_rows if self._held is not None else int(self.items_file.metadata.num_rows)

    @property
    def n_cases(self) -> int:
        """Rows of the cases table (from the Parquet footer)."""
        with _open_table(self.cases_path, CASE_SCHEMA) as f:
            return int(f.metadata.num_rows)

    def add_items(self, items: Sequence[Item]) -> None:
        """Read ``items`` after the items table's rows, as if they were its last rows, by every read of items
        (``iter_items``, ``iter_items_held``, ``items_by_id``, ``iter_batches``/``column_values``, ``count``,
        ``case_counts``/``value_counts``): the items a clinician review's settled fixes make
        (:func:`medr2.bench.reviews.reviewed_selection`; they show their parent's image, so the per-record
        checks of :meth:`iter_items` apply to them as to any row). Replaces items added before."""
        if not items:
            self.added = None
            return
        made = ITEM_SCHEMA.to_table(list(items))
        schema = self.schema
        cols = [made.column(f.name).cast(f.type) if f.name in made.column_names else pa.nulls(len(items), f.type)
                for f in schema]
        self.added = pa.table(cols, schema=schema)

    def _tail_batches(self, columns: list[str], batch_rows: int) -> Iterator[pa.RecordBatch]:
        """``columns`` of the rows read after the file's (none read with no file: :meth:`held`) as record
        batches: the items held, then the added items."""
        for rows in (self._held, self.added):
            if rows is not None:
                yield from rows.select(columns).to_batches(max_chunksize=batch_rows)

    # -- validation ----------------------------------------------------------------------------
    def validate(self, *, image_hashes: bool = True, every_item: bool = False) -> None:
        """The one validation of a bench, which every reader of it makes (``load_bench``, ``medr2 info --check``,
        eval, ``perturb/add``, export, report, view): the checksums; every case as a record and the items table by
        columns (:func:`medr2.bench.columns.check_tables`: ids, references, nulls, literals, JSON shapes, paths,
        boxes, parents; a suspect row is given the record checks); from then on each item built
        (:meth:`iter_items`, :meth:`iter_items_held`, :meth:`items_by_id`) is given the per-record checks (its
        JSON and model, case, image file, answer box) before it is returned. A bench whose manifest records that
        the column checks passed on these very tables (:func:`medr2.bench.columns.is_checked`, written by the
        bench's writer, which checks without hashing images) is not checked by columns again when images are not
        hashed and not ``every_item``: only its case ids are read. ``every_item`` (``medr2 info --check``): every
        item is built, and so checked, now. A failed check is a BadInput naming file, record and field."""
        from medr2.bench.columns import case_ids_validator, check_tables, is_checked

        verify_checksums(self.root, self.manifest)
        self.checks_trusted = not image_hashes and not every_item and is_checked(self.manifest)
        check = case_ids_validator if self.checks_trusted else check_tables
        self._record_check = check(self.root, image_hashes=image_hashes)
        if every_item:
            for _ in self.iter_items():
                pass

    # -- cases ---------------------------------------------------------------------------------
    def iter_cases(self) -> Iterator[Case]:
        from medr2.bench.format import _read_records

        return _read_records(self.cases_path, CASE_SCHEMA, "case_id")  # type: ignore[no-any-return]

    def case_columns(self, columns: Sequence[str]) -> dict[str, list[Any]]:
        """Python lists of ``columns`` of the cases table, in file order (a column the file lacks: every value
        None), read by columns only."""
        with _open_table(self.cases_path, CASE_SCHEMA) as f:
            names = f.schema_arrow.names
            n = int(f.metadata.num_rows)
            have = [c for c in columns if c in names]
            try:
                got = f.read(columns=have, use_threads=False).to_pydict() if have else {}
            except (OSError, pa.ArrowException) as e:
                raise BadInput(f"cannot read parquet: {e}", file=str(self.cases_path)) from e
        return {c: got[c] if c in got else [None] * n for c in columns}

    def case(self, case_id: str) -> Case:
        """One case, decoded from its row (the last :data:`CASE_CACHE` kept)."""
        hit = self._case_cache.get(case_id)
        if hit is not None:
            self._case_cache.move_to_end(case_id)
            return hit
        if self._case_index is None:
            self._case_index = {}
            with _open_table(self.cases_path, CASE_SCHEMA) as f:
                for rg in range(f.num_row_groups):
                    ids = f.read_row_group(rg, columns=["case_id"]).column(0).to_pylist()
                    for row, cid in enumerate(ids):
                        self._case_index.setdefault(cid, (rg, row))
        where = self._case_index.get(case_id)
        if where is None:
            raise BadInput("unknown case", file=str(self.cases_path), record=case_id, field="case_id")
        with _open_table(self.cases_path, CASE_SCHEMA) as f:
            rows = f.read_row_group(where[0], columns=_record_columns(f, CASE_SCHEMA)).slice(where[1], 1)
        case: Case = next(batch_records(rows, CASE_SCHEMA, "case_id", self.cases_path))
        self._case_cache[case_id] = case
        if len(self._case_cache) > CASE_CACHE:
            self._case_cache.popitem(last=False)
        return case

    # -- items ---------------------------------------------------------------------------------
    def row_groups(self, flt: ItemFilter | None) -> list[int]:
        """Row groups a filter may match: those whose statistics (where written) admit a value it accepts.
        The candidate values of a column are the manifest's counts of it (split, variant, task, stage);
        other columns and files without statistics are never pruned."""
        if self._held is not None:
            return []
        f = self.items_file
        every = list(range(f.num_row_groups))
        if flt is None:
            return every
        counts = self.manifest.get("counts") or {}
        tests = flt.value_tests()
        candidates: dict[str, tuple[list[Any], bool]] = {}
        for column, key in (("split", "split"), ("variant", "variant"), ("task", "task"), ("stage", "stage")):
            known = counts.get(key)
            if column not in tests or not isinstance(known, dict):
                continue
            values: list[Any] = [int(k) if column == "stage" and k.lstrip("-").isdigit() else k for k in known]
            if column == "split":
                values = [v for v in values if v != "none"]
            candidates[column] = _sorted_if_possible([v for v in values if tests[column](v)])
        for column, ids in (("case_id", flt.case_ids), ("chain_id", flt.chain_ids), ("item_id", flt.item_ids)):
            if ids is not None:
                candidates[column] = _sorted_if_possible(list(ids))
        names = f.schema_arrow.names
        kept = []
        for rg in every:
            md = f.metadata.row_group(rg)
            ok = True
            for column, (values, is_sorted) in candidates.items():
                if column not in names:
                    continue
                rng = _stat_range(md, names.index(column))
                if rng is not None and not _any_within(values, is_sorted, rng):
                    ok = False
                    break
            if ok:
                kept.append(rg)
        return self._groups_holding(kept, flt)

    def _groups_holding(self, groups: list[int], flt: ItemFilter) -> list[int]:
        """Of ``groups``, those whose ``case_id`` / ``chain_id`` column holds one of the few ids ``flt`` asks
        (at most :data:`ID_PRUNE_MAX`: a ``--limit`` selection, the chains it asks): that column is read,
        dictionary-encoded, so the record columns of the other groups are never read."""
        for column, ids in (("case_id", flt.case_ids), ("chain_id", flt.chain_ids)):
            if ids is None or len(ids) > ID_PRUNE_MAX or column not in self.items_file.schema_arrow.names:
                continue
            wanted = pa.array(sorted(ids), type=pa.string())
            kept = []
            with open_parquet(self.items_path, read_dictionary=[column]) as f:
                for rg in groups:
                    try:
                        col = f.read_row_group(rg, columns=[column]).column(0)
                    except (OSError, pa.ArrowException) as e:
                        raise BadInput(f"cannot read parquet: {e}", file=str(self.items_path)) from e
                    if any(pc.any(pc.is_in(_distinct_values(chunk), value_set=wanted)).as_py() for chunk in col.chunks):
                        kept.append(rg)
            groups = kept
        return groups

    def _row_group_starts(self) -> list[int]:
        """The file row of each row group's first row (then the number of rows of the file; ``[0]`` without one)."""
        starts = [0]
        if self._held is not None:
            return starts
        md = self.items_file.metadata
        for rg in range(md.num_row_groups):
            starts.append(starts[-1] + md.row_group(rg).num_rows)
        return starts

    def iter_batches(self, flt: ItemFilter | None = None, columns: Sequence[str] | None = None,
                     batch_rows: int = BATCH_ROWS) -> Iterator[tuple[pa.RecordBatch, int]]:
        """Record batches of the rows ``flt`` accepts, in file order, with the file row of each batch's first
        row before filtering; ``columns`` (None: every record column) plus what the filter reads; at most
        ``batch_rows`` rows read at a time."""
        tests = flt.value_tests() if flt is not None else {}
        cols = list(columns) if columns is not None else self._record_cols()
        read_cols = cols + [c for c in tests if c not in cols]
        starts = self._row_group_starts()
        for rg in self.row_groups(flt):
            self.row_groups_read += 1
            row = starts[rg]
            for batch in _batches(self.items_file, rg, read_cols, self.items_path, batch_rows):
                n = batch.num_rows
                if tests:
                    batch = batch.filter(_mask(batch, tests)).select(cols)
                elif read_cols != cols:
                    batch = batch.select(cols)
                yield batch, row
                row += n
        row = starts[-1]  # the added items, numbered after the table's rows
        for batch in self._tail_batches(read_cols, batch_rows):
            n = batch.num_rows
            yield (batch.filter(_mask(batch, tests)) if tests else batch).select(cols), row
            row += n

    def iter_items(self, flt: ItemFilter | None = None, batch_rows: int = BATCH_ROWS) -> Iterator[Item]:
        """The items ``flt`` accepts, in file order, built one batch (of at most ``batch_rows`` rows) at a time
        (each given the per-record checks after :meth:`validate`)."""
        for batch, row in self.iter_batches(flt, batch_rows=batch_rows):
            yield from self._checked(batch_records(batch, ITEM_SCHEMA, "item_id", self.items_path, row))

    def records(self, rows: pa.RecordBatch | pa.Table, first_row: int = 0) -> Iterator[Item]:
        """The records of ``rows`` (item columns read from this bench, ``first_row`` the file row of the first, for
        messages), each given the per-record checks after :meth:`validate`: how a reader reading batches
        (:meth:`iter_batches`) builds items."""
        return self._checked(batch_records(rows, ITEM_SCHEMA, "item_id", self.items_path, first_row))

    def _checked(self, records: Iterator[Item]) -> Iterator[Item]:
        """``records``, each given the per-record checks after :meth:`validate`."""
        check = self._record_check
        if check is None:
            yield from records
            return
        for it in records:
            check.item(it)
            yield it

    def iter_items_held(self, flt: ItemFilter | None = None, hold_rows: int = HOLD_ROWS,
                        record_rows: int = RECORD_ROWS) -> Iterator[Item]:
        """:meth:`iter_items` (the same items, in the same order) holding at most ``hold_rows`` rows between two
        items it yields, with no Parquet reader left open: for many streams open at once (the ``case`` order's
        cursor per variant), where an open reader holds a decompressed page of every column (≈ 5 MB for a
        20,000-row group). A row group is read whole for each ``hold_rows`` of its accepted rows (its filter
        columns once), and only those rows are kept, copied; records are built ``record_rows`` at a time."""
        tests = flt.value_tests() if flt is not None else {}
        cols = self._record_cols()
        starts = self._row_group_starts()
        for rg in self.row_groups(flt):
            f = self.items_file
            self.row_groups_read += 1
            rows = _accepted_rows(_read_group(f, rg, list(tests), self.items_path), tests) if tests else None
            n = f.metadata.row_group(rg).num_rows if rows is None else len(rows)
            for pos in range(0, n, hold_rows):
                take = pa.array(range(pos, min(pos + hold_rows, n))) if rows is None else rows.slice(pos, hold_rows)
                held = _read_group(f, rg, cols, self.items_path).take(take)
                first = starts[rg] + int(take[0].as_py())  # the file row of the first held row (for messages)
                for k in range(0, held.num_rows, record_rows):
                    yield from self._checked(batch_records(held.slice(k, record_rows), ITEM_SCHEMA, "item_id",
                                                           self.items_path, first + k))
        row = starts[-1]
        for batch in self._tail_batches(cols + [c for c in tests if c not in cols], record_rows):
            kept = (batch.filter(_mask(batch, tests)) if tests else batch).select(cols)
            yield from self._checked(batch_records(kept, ITEM_SCHEMA, "item_id", self.items_path, row))
            row += batch.num_rows

    def items_by_id(self, ids: Iterable[str]) -> dict[str, Item]:
        """The items of ``ids`` that the bench holds (ids it lacks are left out), by id. Row groups whose
        ``item_id`` statistics rule every id out are skipped; of the rest the ``item_id`` column is read first
        and the record columns only of row groups holding a wanted id, one row group at a time."""
        wanted = frozenset(ids)
        out: dict[str, Item] = {}
        if not wanted:
            return out
        cols = self._record_cols()
        starts = self._row_group_starts()
        for rg in self.row_groups(ItemFilter(item_ids=wanted)):
            f = self.items_file
            self.row_groups_read += 1
            try:
                got = f.read_row_group(rg, columns=["item_id"], use_threads=False).column(0)
                rows = pc.indices_nonzero(pc.fill_null(pc.is_in(got, value_set=pa.array(sorted(wanted),
                                                                                         type=got.type)), False))
                if len(rows) == 0:
                    continue
                table = f.read_row_group(rg, columns=cols, use_threads=False).take(rows)
            except (OSError, pa.ArrowException) as e:
                raise BadInput(f"cannot read parquet: {e}", file=str(self.items_path)) from e
            for it in self._checked(batch_records(table, ITEM_SCHEMA, "item_id", self.items_path, starts[rg])):
                out[it.item_id] = it
        for batch in self._tail_batches(cols, BATCH_ROWS):
            kept = batch.filter(_mask(batch, {"item_id": wanted.__contains__}))
            for it in self._checked(batch_records(kept, ITEM_SCHEMA, "item_id", self.items_path, starts[-1])):
                out[it.item_id] = it
        return out

    def column_values(self, columns: Sequence[str], flt: ItemFilter | None = None) -> Iterator[dict[str, list[Any]]]:
        """Python lists of ``columns`` of the rows ``flt`` accepts, one dict per batch."""
        for batch, _ in self.iter_batches(flt, columns):
            yield batch.to_pydict()

    def count(self, flt: ItemFilter | None = None) -> int:
        """Rows ``flt`` accepts: from the footer without a filter, else from the filter's own columns."""
        if flt is None or not flt.value_tests():
            return self.n_items + (self.added.num_rows if self.added is not None else 0)
        return sum(batch.num_rows if rows is None else len(rows) for batch, rows in self._accepted(flt, []))

    def case_counts(self, flt: ItemFilter | None = None) -> dict[str, int]:
        """The rows ``flt`` accepts per case, the cases in the order they first appear in the items table."""
        return self.value_counts("case_id", flt)

    def value_counts(self, column: str, flt: ItemFilter | None = None) -> dict[Any, int]:
        """The rows ``flt`` accepts per (non-null) value of ``column``, the values in the order they first appear in
        the items table: the column read dictionary-encoded and counted by its indices (no Python value per row)."""
        names, counts, firsts = [], [], []
        seen = 0  # accepted rows before this batch (the position of a value's first row among them)
        tested = flt is not None and column in flt.value_tests()  # a test reads the column's values as they are
        is_text = pa.types.is_string(self.schema.field(column).type)
        for batch, rows in self._accepted(flt, [column], read_dictionary=[column] if is_text and not tested else []):
            col = batch.column(0)
            if not pa.types.is_dictionary(col.type):  # a column not read dictionary-encoded: encoded here
                col = pc.dictionary_encode(col)
            indices = col.indices.take(rows) if rows is not None else col.indices
            codes = pc.fill_null(indices, -1).to_numpy(zero_copy_only=False)
            valid = codes >= 0
            distinct, first = np.unique(codes[valid], return_index=True)
            if len(distinct):
                names.append(col.dictionary.take(pa.array(distinct)))
                counts.append(np.bincount(codes[valid])[distinct])
                firsts.append(np.flatnonzero(valid)[first] + seen)
            seen += len(codes)
        if not names:
            return {}
        per_batch = pa.table({"value": pa.concat_arrays(names),
                              "n": np.concatenate(counts), "first": np.concatenate(firsts)})
        per_value = per_batch.group_by("value").aggregate([("n", "sum"), ("first", "min")]).sort_by("first_min")
        return dict(zip(per_value.column("value").to_pylist(), per_value.column("n_sum").to_pylist(), strict=True))

    def column_batches(self, columns: Sequence[str], *, read_dictionary: Sequence[str] = (),
                       batch_rows: int = SCAN_ROWS) -> Iterator[pa.RecordBatch]:
        """Every row's ``columns`` (the file's rows, then the rows held or added), in order, as record batches of at
        most ``batch_rows`` rows; the text columns of ``read_dictionary`` dictionary-encoded (as read: per batch)."""
        return self._scan(self.row_groups(None), list(columns), read_dictionary, batch_rows)

    def _accepted(self, flt: ItemFilter | None, columns: list[str], read_dictionary: Sequence[str] = ()
                  ) -> Iterator[tuple[pa.RecordBatch, pa.Array | None]]:
        """Record batches of ``columns`` (plus the filter's) of the row groups ``flt`` may match, each with the rows
        of it ``flt`` accepts (None: every row), in file order; string columns of ``read_dictionary`` read
        dictionary-encoded."""
        tests = flt.value_tests() if flt is not None else {}
        read_cols = columns + [c for c in tests if c not in columns]
        for batch in self._scan(self.row_groups(flt), read_cols, read_dictionary, SCAN_ROWS):
            yield batch, (_accepted_rows(batch, tests) if tests else None)

    def _scan(self, groups: list[int], columns: list[str], read_dictionary: Sequence[str], batch_rows: int
              ) -> Iterator[pa.RecordBatch]:
        """The record batches of ``columns`` of those row groups, then of the rows held or added (its text columns
        of ``read_dictionary`` encoded as the file's are read)."""
        if groups:
            with open_parquet(self.items_path, read_dictionary=list(read_dictionary)) as f:
                for rg in groups:
                    self.row_groups_read += 1
                    yield from _batches(f, rg, columns, self.items_path, batch_rows)
        encode = [c for c in read_dictionary if c in columns]
        for batch in self._tail_batches(columns, batch_rows):
            for c in encode:
                i = batch.schema.get_field_index(c)
                if pa.types.is_string(batch.schema.field(i).type):
                    batch = batch.set_column(i, c, pc.dictionary_encode(batch.column(i)))
            yield batch

    def close(self) -> None:
        if self._items_file is not None:
            self._items_file.close()
            self._items_file = None


def _distinct_values(chunk: pa.Array) -> pa.Array:
    """The values a chunk holds: its dictionary where dictionary-encoded."""
    return chunk.dictionary if pa.types.is_dictionary(chunk.type) else chunk


def _batches(f: pq.ParquetFile, rg: int, columns: list[str], path: Path,
             batch_rows: int = BATCH_ROWS) -> Iterator[pa.RecordBatch]:
    """The record batches of one row group, read as they are taken (a read error is a BadInput)."""
    it = f.iter_batches(batch_rows, row_groups=[rg], columns=columns, use_threads=False)
    while True:
        try:
            batch = next(it)
        except StopIteration:
            return
        except (OSError, pa.ArrowException) as e:
            raise BadInput(f"cannot read parquet: {e}", file=str(path)) from e
        yield batch


def _read_group(f: pq.ParquetFile, rg: int, columns: list[str], path: Path) -> pa.Table:
    """One row group's ``columns`` (a read error is a BadInput)."""
    try:
        return f.read_row_group(rg, columns=columns, use_threads=False)
    except (OSError, pa.ArrowException) as e:
        raise BadInput(f"cannot read parquet: {e}", file=str(path)) from e


def _accepted_rows(table: pa.Table, tests: dict[str, Callable[[Any], bool]]) -> pa.Array:
    """The row numbers of ``table`` passing every test."""
    mask = _mask(table, tests)
    return pc.indices_nonzero(mask.combine_chunks() if isinstance(mask, pa.ChunkedArray) else mask)


def _mask(batch: pa.RecordBatch | pa.Table, tests: dict[str, Callable[[Any], bool]]) -> pa.Array:
    """Rows of ``batch`` passing every test; each test runs once per distinct value of its column."""
    mask: pa.Array | None = None
    for column, test in tests.items():
        arr = batch.column(column)
        distinct = pc.unique(arr).to_pylist()
        passing = [v for v in distinct if v is not None and test(v)]
        m = pc.is_in(arr, value_set=pa.array(passing, type=arr.type))
        m = pc.fill_null(m, False)
        mask = m if mask is None else pc.and_(mask, m)
    assert mask is not None
    return mask

