"""Checking a bench's items table by columns (docs/bench-format.md, "Checking the items by columns").

A bench's one validation (:meth:`medr2.bench.table.BenchTable.validate`, which every reader makes) does not build
a record of every item first. It checks the whole items table column-wise, one row group at a time
(:func:`check_items`: pyarrow compute and numpy, string columns read dictionary-encoded so that a test runs once
per distinct value), and makes the per-record checks on the items it builds. The column-wise checks, each derived
from the :class:`~medr2.records.Item` model where it can be:

- every ``item_id`` distinct (16-hex ids as 8-byte integers in an :class:`~medr2.bench.idset.IdSet`);
- ``case_id`` a case of ``cases.parquet``; ``parent_id`` an item of the bench;
- fields that may not be None not null; literal fields (``form``, ``split``) one of their values;
- JSON fields shaped as their type (``[...]`` for lists and boxes, ``{...}`` for objects and sub-records);
- image paths: not empty, no NUL, not absolute, no ``..`` part, at most ``MAX_PATH_CHARS`` characters; the
  paths inside ``images`` (several images, issue 49): none empty, absolute, with a NUL or a ``..`` part (that
  ``images`` holds ``image`` once, with role current, is a per-record check);
- answer boxes: four finite numbers with positive size inside ``image_width`` x ``image_height``;
- each column of the type the schema gives it (a column of another type makes every row a suspect).

A row failing one of these is a *suspect*: its record is built and given the per-record checks
(:class:`~medr2.bench.format.Validator`), which raise the BadInput naming file, record and field; a suspect that
passes them (e.g. a ``..`` path that stays inside the bench) is no error. Rows are checked in file order, so the
first bad row is the one named. What only the per-record checks find (JSON that does not parse or does not fit
its model, an image file that is missing or a symlink leading out) is found in the items a reader builds, before
they are used (a run: before they are sent), and in every item by ``medr2 info --check``
(``BenchTable.open(every_item=True)``) and ``load_bench`` (which builds every item).

The writer of a bench makes these checks once, on the bytes it wrote (:func:`check_tables`), and records that
they passed in the manifest (:func:`checked_stamp`: the rules version and the checksums of the two tables it
checked). ``medr2 eval`` trusts that record only for those exact bytes under the same rules
(:func:`is_checked`, after the checksums are verified): a table changed since (another checksum) or checked
under older rules (another :data:`RULES_VERSION`) is checked again in full before the first request.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import BaseModel

from medr2.arrowmem import open_parquet, release_unused
from medr2.bench.format import (
    CASE_SCHEMA,
    CASES_FILE,
    CHECKED_KEY,
    ITEM_SCHEMA,
    ITEMS_FILE,
    Validator,
    _open_table,
    _read_records as read_records,
    _record_columns,
    batch_records,
)
from medr2.bench.idset import hex_ids
from medr2.bench.schema import RecordSchema
from medr2.errors import BadInput
from medr2.images import MAX_PATH_CHARS
from medr2.records import Item

# the version of the checks of this module and of Validator's per-record checks: bump it when a check is added or
# changed, so that benches checked under older rules are checked again (``is_checked``)
RULES_VERSION = 2  # 2: the paths inside ``images`` (issue 49)

PATH_COLUMNS = ("image",)  # relative paths of bench files
PATH_LIST_COLUMNS = ("images",)  # canonical JSON lists of records with a relative ``path`` (records.ImageRef)
BOX_COLUMNS = {"answer_box": ("image_width", "image_height")}  # box column -> the image size it lies in
PLAIN_COLUMNS = frozenset({"item_id", "question", "answer_box"})  # string columns read as plain (mostly distinct)
_PARENT_DOTS = r"(^|/)\.\.(/|$)"


def _unwrap(annotation: Any) -> tuple[bool, Any]:
    """(whether None is allowed, the annotation without None)."""
    if typing.get_origin(annotation) in (Union, types.UnionType):
        args = typing.get_args(annotation)
        rest = [a for a in args if a is not type(None)]
        inner = rest[0] if len(rest) == 1 else Union[tuple(rest)]  # noqa: UP007 (built from a tuple)
        return len(rest) < len(args), inner
    return False, annotation


def _brackets(annotation: Any) -> tuple[str, str] | None:
    """The JSON brackets a nested field's text opens and closes with."""
    origin = typing.get_origin(annotation) or annotation
    if origin in (list, tuple):
        return "[", "]"
    if origin is dict or (isinstance(origin, type) and issubclass(origin, BaseModel)):
        return "{", "}"
    return None


@dataclass(frozen=True)
class ColumnRules:
    """What the columns of one record type must hold, read from its model and schema."""

    required: tuple[str, ...]  # columns that may not be null
    literals: dict[str, tuple[str, ...]]  # column -> its allowed values
    brackets: dict[str, tuple[str, str]]  # JSON column -> (opening, closing) bracket
    types: dict[str, pa.DataType]  # column -> its type in the schema


def column_rules(rs: RecordSchema) -> ColumnRules:
    required: list[str] = []
    literals: dict[str, tuple[str, ...]] = {}
    brackets: dict[str, tuple[str, str]] = {}
    for name, info in rs.model.model_fields.items():
        nullable, inner = _unwrap(info.annotation)
        if not nullable:
            required.append(name)
        if typing.get_origin(inner) is Literal:
            literals[name] = tuple(str(v) for v in typing.get_args(inner))
        if name in rs.json_fields and (b := _brackets(inner)) is not None:
            brackets[name] = b
    return ColumnRules(tuple(required), literals, brackets, {f.name: f.type for f in rs.schema})


ITEM_RULES = column_rules(ITEM_SCHEMA)
# the columns the row checks read (one pass, a row group at a time); ``parent_id`` is read in the parent pass only
ROW_CHECKED = frozenset({"item_id", "case_id", *ITEM_RULES.required, *ITEM_RULES.literals, *ITEM_RULES.brackets,
                         *PATH_COLUMNS, *PATH_LIST_COLUMNS,
                         *(c for box, size in BOX_COLUMNS.items() for c in (box, *size))})
PARENTS_HELD = 1 << 20  # distinct parents (8 B each) gathered before they are made distinct again (_parent_unknown)
TYPE_CHECKED = ROW_CHECKED | {"parent_id"}  # columns of another type than the schema's make every row a suspect


def _mistyped(field: pa.Field, rules: ColumnRules) -> bool:
    """Whether a column is not of the type ``rules`` give it (a dictionary of that type is of it)."""
    typ = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
    return field.name in rules.types and typ != rules.types[field.name]


def _rows(col: pa.ChunkedArray, test: Callable[[pa.Array], pa.Array]) -> np.ndarray:
    """``test`` (a bool per value) of every non-null row, run once per distinct value where the column is
    dictionary-encoded; null rows are False."""
    out = []
    for chunk in col.chunks:
        if pa.types.is_dictionary(chunk.type):
            per_value = pc.fill_null(test(chunk.dictionary), False)
            if not pc.any(per_value).as_py():  # the common case: no value fails, no row to look up
                out.append(np.zeros(len(chunk), dtype=bool))
                continue
            res = per_value.take(chunk.indices)
        else:
            res = pc.and_(test(chunk), chunk.is_valid())
        out.append(pc.fill_null(res, False).to_numpy(zero_copy_only=False))
    return np.concatenate(out) if out else np.zeros(0, dtype=bool)


def _bad_path(a: pa.Array) -> pa.Array:
    length = pc.utf8_length(a)
    bad = pc.or_(pc.or_(pc.equal(length, 0), pc.greater(length, MAX_PATH_CHARS)),
                 pc.or_(pc.match_substring(a, "\x00"), pc.starts_with(a, "/")))
    dots = pc.fill_null(pc.match_substring(a, ".."), False)  # the regex only where ".." is (a fast substring test)
    if pc.any(dots).as_py():
        bad = pc.or_(bad, pc.and_(dots, pc.match_substring_regex(a, _PARENT_DOTS)))
    return bad


# a ``"path"`` value of JSON (canonical or not) that is empty, absolute, holds an escaped control character (a NUL) or a
# ``..`` part
_BAD_LISTED_PATH = r'"path"\s*:\s*"(/|"|[^"]*\\u00|([^"]*/)?\.\.(/|"))'


def _bad_listed_paths(a: pa.Array) -> pa.Array:
    """Rows of a JSON list of path records (``images``) with a path :func:`_bad_path` would refuse."""
    listed = pc.invert(pc.equal(a, "[]"))
    if not pc.any(pc.fill_null(listed, False)).as_py():
        return listed
    return pc.and_(listed, pc.match_substring_regex(a, _BAD_LISTED_PATH))


def _bad_brackets(opening: str, closing: str) -> Callable[[pa.Array], pa.Array]:
    return lambda a: pc.invert(pc.and_(pc.starts_with(a, opening), pc.ends_with(a, closing)))


def _plain(col: pa.ChunkedArray) -> pa.Array:
    arr = col.combine_chunks()
    return arr.dictionary_decode() if pa.types.is_dictionary(arr.type) else arr


def _bad_boxes(t: pa.Table, box: str, width: str, height: str) -> np.ndarray:
    """Rows whose box is not four finite numbers of positive size inside the image (where its size is set)."""
    bad = np.zeros(t.num_rows, dtype=bool)
    text = _plain(t.column(box))
    rows = np.flatnonzero(text.is_valid().to_numpy(zero_copy_only=False))
    if not len(rows):
        return bad
    parts = pc.split_pattern(pc.utf8_slice_codeunits(text.take(pa.array(rows)), 1, -1), ",")
    four = pc.equal(pc.list_value_length(parts), 4).to_numpy(zero_copy_only=False)
    bad[rows[~four]] = True
    rows = rows[four]
    try:
        flat = pc.cast(pc.utf8_trim_whitespace(pc.list_flatten(parts.filter(pa.array(four)))), pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # a value that is not a number: each row checked
        bad[rows] = True
        return bad
    x1, y1, x2, y2 = flat.to_numpy(zero_copy_only=False).reshape(-1, 4).T
    idx = pa.array(rows)
    w = pc.cast(_plain(t.column(width)).take(idx), pa.float64()).to_numpy(zero_copy_only=False)
    h = pc.cast(_plain(t.column(height)).take(idx), pa.float64()).to_numpy(zero_copy_only=False)
    sized = ~np.isnan(w) & (w != 0) & ~np.isnan(h) & (h != 0)  # check_box runs where both are set
    with np.errstate(invalid="ignore"):
        wrong = (~np.isfinite(flat.to_numpy(zero_copy_only=False).reshape(-1, 4)).all(axis=1) | ~(x2 > x1)
                 | ~(y2 > y1) | (x1 < 0) | (y1 < 0) | (x2 > w) | (y2 > h))
    bad[rows[sized & wrong]] = True
    return bad


def suspects(t: pa.Table, case_ids: pa.Array, rules: ColumnRules = ITEM_RULES) -> np.ndarray:
    """Rows of a block of the items table that fail a column-wise check (see the module docstring)."""
    names = set(t.column_names)
    bad = np.zeros(t.num_rows, dtype=bool)
    if any(_mistyped(field, rules) for field in t.schema):
        return np.ones(t.num_rows, dtype=bool)  # a column of another type: every row given the record checks
    for name in rules.required:
        if name in names and t.column(name).null_count:
            bad |= t.column(name).is_null().to_numpy(zero_copy_only=False)
    tests: list[tuple[str, Callable[[pa.Array], pa.Array]]] = [
        *((name, lambda a, v=pa.array(values): pc.invert(pc.is_in(a, value_set=v)))
          for name, values in rules.literals.items()),
        *((name, _bad_brackets(*b)) for name, b in rules.brackets.items()),
        *((name, _bad_path) for name in PATH_COLUMNS),
        *((name, _bad_listed_paths) for name in PATH_LIST_COLUMNS),
        ("case_id", lambda a: pc.invert(pc.is_in(a, value_set=case_ids))),
    ]
    for name, test in tests:
        if name in names:
            bad |= _rows(t.column(name), test)
    for box, (width, height) in BOX_COLUMNS.items():
        if {box, width, height} <= names:
            bad |= _bad_boxes(t, box, width, height)
    return bad


def check_items(f: pq.ParquetFile, v: Validator) -> None:
    """Check every row of the items table ``f`` by columns (after ``v`` has seen every case); the first bad row
    found raises the BadInput its record checks raise. Three passes, each in file order: the row checks
    (:func:`suspects`, one row group at a time), repeated ids, unknown parents."""
    path = v.ifile
    record_cols = _record_columns(f, ITEM_SCHEMA)
    cols = [c for c in record_cols if c in ROW_CHECKED]
    read_dict = [c for c in cols if c not in PLAIN_COLUMNS and pa.types.is_string(ITEM_RULES.types.get(c, pa.int64()))]
    # a column checked for its type but not read by the row checks (the parents): its type from the schema
    mistyped = any(_mistyped(f.schema_arrow.field(c), ITEM_RULES) for c in record_cols
                   if c in TYPE_CHECKED and c not in cols)
    cf = open_parquet(path, read_dictionary=read_dict)
    case_ids = pa.array(sorted(v.case_ids), type=pa.string())
    ids: np.ndarray | None = np.empty(f.metadata.num_rows, dtype=np.uint64)  # None: some id is not 16 hex digits
    start = 0
    with cf:
        for rg in range(cf.num_row_groups):
            t = _read(cf, rg, cols, path)
            bad = np.ones(t.num_rows, dtype=bool) if mistyped else suspects(t, case_ids)
            full: pa.Table | None = None
            for r in np.flatnonzero(bad):
                if full is None:
                    full = _read(f, rg, record_cols, path)
                v.item(_record(full, int(r), start, path))
            if ids is not None:
                ints = hex_ids(_plain(t.column("item_id")))
                if ints is None:
                    ids = None
                else:
                    ids[start:start + len(ints)] = ints
            start += t.num_rows
            del t, full
            release_unused()  # what the pool keeps from this row group (docs/benchmarks.md)
    known = _repeated_ids(f, ids, v) if ids is not None else _repeated_text_ids(f, v)
    if "parent_id" not in record_cols:
        return
    with open_parquet(path, read_dictionary=["parent_id"]) as pf:
        if ids is None or _parent_unknown(pf, known, ids, path):
            for rg in range(pf.num_row_groups):  # a row group's distinct parents at a time, the first unknown named
                values = _distinct(_read(pf, rg, ["parent_id"], path).column(0))
                found = known(values)
                if not found.all():
                    _raise_parent(f, rg, values.filter(pa.array(~found)), v)


def _parent_unknown(pf: pq.ParquetFile, known: Callable[[pa.Array], np.ndarray], ids: np.ndarray, path: str) -> bool:
    """Whether some parent (in the ``parent_id`` column, read a row group at a time) is not a known item: the
    distinct 16-hex parents of the row groups gathered (as 8-byte integers, made distinct again whenever they pass
    :data:`PARENTS_HELD`) and looked up once, sorted, at the end (looked up a row group at a time, each lookup
    searched the whole id array: 0.2 µs per parent at 839,468 items, growing with the bench). A row group with a
    parent of another form is looked up at once. Only says whether; the caller names the row."""
    held: list[np.ndarray] = []
    n_held, limit = 0, PARENTS_HELD
    for rg in range(pf.num_row_groups):
        values = _distinct(_read(pf, rg, ["parent_id"], path).column(0))
        ints = hex_ids(values)
        if ints is None:
            if not known(values).all():
                return True
            continue
        held.append(ints)
        n_held += len(ints)
        if n_held > limit:
            held = [_sorted_distinct(np.concatenate(held))]
            n_held = len(held[0])
            limit = max(PARENTS_HELD, 2 * n_held)
    parents = _sorted_distinct(np.concatenate(held)) if held else np.zeros(0, dtype=np.uint64)
    return not bool(_in_sorted(ids, parents).all())


def _sorted_distinct(ints: np.ndarray) -> np.ndarray:
    """The distinct values of ``ints``, sorted (``np.unique`` hashed first here: ≈ 6× slower on 632,725 parents)."""
    ints.sort()
    return ints[np.concatenate(([True], ints[1:] != ints[:-1]))] if len(ints) else ints


def _record(table: pa.Table, row: int, first_row: int, path: str) -> Item:
    """The record of one row of a row group (``first_row``: the file row of the group's first)."""
    item: Item = next(batch_records(table.slice(row, 1), ITEM_SCHEMA, "item_id", Path(path), first_row + row))
    return item


def _repeated_ids(f: pq.ParquetFile, ids: np.ndarray, v: Validator) -> Callable[[pa.Array], np.ndarray]:
    """Refuse the first row (in file order) whose 16-hex id an earlier row has: every id as an 8-byte integer,
    sorted once. Returns the membership test of the parent check."""
    ids.sort()
    repeated = ids[1:][ids[1:] == ids[:-1]]
    if len(repeated):
        seen: set[int] = set()
        start = 0
        for rg in range(f.num_row_groups):
            t = _read(f, rg, ["item_id"], v.ifile)
            ints = hex_ids(_plain(t.column(0)))
            assert ints is not None  # every id was 16 hex digits in the first pass
            for r in np.flatnonzero(np.isin(ints, repeated)):
                if int(ints[r]) in seen:
                    full = _read(f, rg, _record_columns(f, ITEM_SCHEMA), v.ifile)
                    v.item(_record(full, int(r), start, v.ifile), duplicate=True)
                seen.add(int(ints[r]))
            start += t.num_rows

    def known(values: pa.Array) -> np.ndarray:
        ints = hex_ids(values)
        if ints is None:  # some value is not 16 hex digits: no item has it
            return np.array([_is_hex_id(x, ids) for x in values.to_pylist()], dtype=bool)
        return _in_sorted(ids, ints)

    return known


def _in_sorted(ids: np.ndarray, ints: np.ndarray) -> np.ndarray:
    """Membership of ``ints`` in the sorted ``ids``, looked up in sorted order (the search walks the ids forward)."""
    if not len(ids):
        return np.zeros(len(ints), dtype=bool)
    order = np.argsort(ints)
    at = np.minimum(np.searchsorted(ids, ints[order]), len(ids) - 1)
    found = np.empty(len(ints), dtype=bool)
    found[order] = ids[at] == ints[order]
    return found


def _is_hex_id(value: str, ids: np.ndarray) -> bool:
    ints = hex_ids(pa.array([value]))
    if ints is None or not len(ids):
        return False
    at = min(int(np.searchsorted(ids, ints[0])), len(ids) - 1)
    return bool(ids[at] == ints[0])


def _repeated_text_ids(f: pq.ParquetFile, v: Validator) -> Callable[[pa.Array], np.ndarray]:
    """:func:`_repeated_ids` for tables with ids of another form: a pass adding them to ``v.item_ids``."""
    start = 0
    for rg in range(f.num_row_groups):
        t = _read(f, rg, ["item_id"], v.ifile)
        first_dup = v.item_ids.add_all([str(x) for x in t.column(0).to_pylist()])
        if first_dup is not None:
            full = _read(f, rg, _record_columns(f, ITEM_SCHEMA), v.ifile)
            v.item(_record(full, first_dup, start, v.ifile), duplicate=True)
        start += t.num_rows
    return lambda values: np.array(v.item_ids.contains_all(values.to_pylist()), dtype=bool)


def _read(f: pq.ParquetFile, rg: int, columns: list[str], path: str) -> pa.Table:
    try:
        return f.read_row_group(rg, columns=columns, use_threads=False)
    except (OSError, pa.ArrowException) as e:
        raise BadInput(f"cannot read parquet: {e}", file=path) from e


def _distinct(col: pa.ChunkedArray) -> pa.Array:
    """The distinct non-null values of a column (of a dictionary-encoded one: the dictionary's entries its rows use,
    found from the indices, without decoding the rows)."""
    if col.num_chunks and all(pa.types.is_dictionary(c.type) for c in col.chunks):
        used = [c.dictionary.take(pc.unique(pc.drop_null(c.indices))) for c in col.chunks]
        return pc.unique(pa.concat_arrays(used)) if len(used) > 1 else pc.unique(used[0])
    return pc.unique(pc.drop_null(_plain(col)))


def _raise_parent(f: pq.ParquetFile, rg: int, missing: pa.Array, v: Validator) -> None:
    """Name the first row of row group ``rg`` whose parent is one of ``missing``."""
    t = _read(f, rg, ["item_id", "parent_id"], v.ifile)
    hit = pc.fill_null(pc.is_in(_plain(t.column("parent_id")), value_set=missing), False)
    first = int(np.flatnonzero(hit.to_numpy(zero_copy_only=False))[0])
    raise v.parent_missing(str(t.column("item_id")[first].as_py()))


def check_tables(root: Path, *, image_hashes: bool = False) -> Validator:
    """The checks ``medr2 eval`` makes before its first request: every case as a record, the items table by
    columns (:func:`check_items`). Returns the validator holding the case ids, for the per-record checks of the
    items built later; raises the BadInput of the first defect."""
    v = Validator(root, image_hashes)
    for c in read_records(root / CASES_FILE, CASE_SCHEMA, "case_id"):
        v.case(c)
    with _open_table(root / ITEMS_FILE, ITEM_SCHEMA) as f:
        check_items(f, v)
    return v


def checked_stamp(items_sha256: str, cases_sha256: str) -> dict[str, Any]:
    """The manifest's record that :func:`check_tables` passed on the tables with these checksums."""
    return {"rules": RULES_VERSION, CASES_FILE: cases_sha256, ITEMS_FILE: items_sha256}


def is_checked(manifest: dict[str, Any]) -> bool:
    """Whether the manifest records that the checks passed, under these rules, on the tables its checksums
    name (call it after those checksums are verified against the files)."""
    sums = manifest.get("checksums")
    if not isinstance(sums, dict):
        return False
    return bool(manifest.get(CHECKED_KEY) == checked_stamp(str(sums.get(ITEMS_FILE)), str(sums.get(CASES_FILE))))


def case_ids_validator(root: Path, *, image_hashes: bool = False) -> Validator:
    """A validator for the per-record checks of items, knowing the bench's case ids (read as one column) without
    checking the cases again (a bench whose checks passed: :func:`is_checked`)."""
    v = Validator(root, image_hashes)
    with open_parquet(root / CASES_FILE) as f:
        for rg in range(f.num_row_groups):
            v.case_ids.update(_read(f, rg, ["case_id"], str(root / CASES_FILE)).column(0).to_pylist())
    return v
