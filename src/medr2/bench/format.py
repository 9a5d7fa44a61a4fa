"""Write and load a bench folder (docs/bench-format.md).

Layout: ``manifest.json``, ``cases.parquet``, ``items.parquet``, ``images/<sha256>.png`` and
``quarantine.jsonl``. Parquet columns are the record fields (nested ones as canonical JSON strings)
under an explicit schema, written with fixed settings, so the same records give the same bytes.
The manifest is written last, atomically, and ends with ``"complete": true``: a bench whose build
was interrupted never reads as complete.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

import medr2
from medr2 import jsonsafe
from medr2.arrowmem import open_parquet
from medr2.atomic import atomic_write_bytes
from medr2.bench.idset import IdSet
from medr2.bench.schema import RecordSchema, _FieldError, record_schema
from medr2.bench.sorting import Sorter
from medr2.errors import BadInput
from medr2.images import CURRENT_IDENTITY, IDENTITY_RULES, IdentityRule, InsideRoot, identity_of_version, sha256_file
from medr2.records import Case, Item, canonical_json, check_box, regions_by_kind

if TYPE_CHECKING:
    from medr2.bench.table import BenchTable, ItemFilter

FORMAT_NAME = "medr2-bench"
FORMAT_VERSION = 1
# version 2 = version 1 + renders.parquet (deferred images, medr2.renders); version 3 = images named by their
# pixels, with or without renders.parquet (medr2.images.PIXELS). Versions 1 and 2 are read (and perturbed) under
# their own rule, medr2.images.PNG_BYTES; every new bench is version 3 (medr2.images.identity_of_version decides),
# or version 4 where some item shows several images (issue 49: version 3 + the ``images`` column in use)
RENDERS_FORMAT_VERSION = 2
PIXELS_FORMAT_VERSION = CURRENT_IDENTITY.format_version(renders=False)
READ_VERSIONS = tuple(sorted({v for rule in IDENTITY_RULES for v in rule.read_versions}))
MANIFEST = "manifest.json"
CASES_FILE = "cases.parquet"
ITEMS_FILE = "items.parquet"
QUARANTINE_FILE = "quarantine.jsonl"
ROW_GROUP_SIZE = 20_000
CASE_ROW_GROUP_SIZE = 4_096  # case rows are larger; a bench of up to this many cases has one row group
RECORD_BATCH_ROWS = 256  # rows of a table decoded into records at a time (_read_records)
IMAGE_CHECKS_KEPT = 65_536  # image paths whose check (and hash) validation remembers

CASE_SCHEMA: RecordSchema = record_schema(Case)
ITEM_SCHEMA: RecordSchema = record_schema(Item)

# manifest keys the writer owns; manifest_extra may not override them
CHECKED_KEY = "checked"  # the manifest's record that the writer's checks passed (medr2.bench.columns.is_checked)
# the manifest keys the writer owns: manifest_extra may not set them (a rewrite copies every other key)
WRITER_KEYS = ("format", "format_version", "medr2_version", "counts", "cases", "checksums", CHECKED_KEY, "complete")
_WRITE_OPTS: dict[str, Any] = {
    "compression": "zstd",
    "compression_level": 3,
    "use_dictionary": True,
    "write_statistics": False,
    "version": "2.6",
}
# the items table is sorted by these columns (clean items first within a split) and records their min/max per
# row group, so readers filtering on them skip row groups (docs/bench-format.md)
ITEM_SORT_COLUMNS = ("split", "variant")
_ITEM_WRITE_OPTS: dict[str, Any] = {**_WRITE_OPTS, "write_statistics": list(ITEM_SORT_COLUMNS)}
# the order of items.parquet's rows (DuckDB expressions, each ascending, nulls last, then the order written):
# split (none first), clean before other variants, variant; :func:`item_sort_key` for one record
ITEM_ORDER = ('coalesce("split", \'\')', '"variant" <> \'clean\'', '"variant"')


def _sorted(obj: Any) -> Any:
    """Deterministic key order for nested manifest values."""
    return jsonsafe.loads(canonical_json(obj), max_bytes=None)


class _Counts:
    """Counts of items per stage / task / variant / split / form, chains and yes/no pairs."""

    def __init__(self) -> None:
        self.total = 0
        self.by: dict[str, Counter[str]] = {k: Counter() for k in ("stage", "task", "variant", "split", "form")}
        self.task_variant: Counter[str] = Counter()
        self.task_split: Counter[str] = Counter()
        self.chains: set[str] = set()
        self.chain_steps: Counter[int] = Counter()
        self.pairs: set[str] = set()

    def add(self, it: Item) -> None:
        self.total += 1
        self.by["stage"][str(it.stage)] += 1
        self.by["task"][it.task] += 1
        self.by["variant"][it.variant] += 1
        self.by["split"][it.split or "none"] += 1
        self.by["form"][it.form] += 1
        self.task_variant[f"{it.task}|{it.variant}"] += 1
        self.task_split[f"{it.task}|{it.split or 'none'}"] += 1
        if it.chain_id and it.variant == "clean":
            self.chains.add(it.chain_id)
        if it.pair_id:
            self.pairs.add(it.pair_id)

    def as_dict(self) -> dict[str, Any]:
        nested_tv: dict[str, dict[str, int]] = {}
        for key, n in self.task_variant.items():
            task, variant = key.split("|", 1)
            nested_tv.setdefault(task, {})[variant] = n
        nested_ts: dict[str, dict[str, int]] = {}
        for key, n in self.task_split.items():
            task, split = key.split("|", 1)
            nested_ts.setdefault(task, {})[split] = n
        return _sorted({
            "items": self.total,
            **{k: dict(v) for k, v in self.by.items()},
            "task_variant": nested_tv,
            "task_split": nested_ts,
            "chains": len(self.chains),
            "pairs": len(self.pairs),
        })


class _CaseSummary:
    """The manifest's ``cases`` block, accumulated one case at a time."""

    def __init__(self) -> None:
        self.n = 0
        self.synthetic = 0
        self.by: dict[str, Counter[str]] = {k: Counter() for k in ("sources", "licenses", "access", "splits",
                                                                   "modalities")}
        self.patients: set[str] = set()
        self.synthetic_by_field: Counter[str] = Counter()  # how many cases have each field synthetic

    def add(self, c: Case) -> None:
        self.n += 1
        fields = set(c.synthetic_fields)
        if any(f.synthetic for f in c.findings):
            fields.add("findings")
        if any(s.synthetic for s in c.structures):
            fields.add("structures")
        if fields:
            self.synthetic += 1
            self.synthetic_by_field.update(fields)
        for key, value in (("sources", c.source), ("licenses", c.license), ("access", c.access),
                           ("splits", c.split or "none"), ("modalities", c.modality)):
            self.by[key][value] += 1
        self.patients.add(c.patient_id)

    def as_dict(self) -> dict[str, Any]:
        return _sorted({"n": self.n, "real": self.n - self.synthetic, "synthetic": self.synthetic,
                        "synthetic_by_field": dict(self.synthetic_by_field),
                        **{k: dict(v) for k, v in self.by.items()}, "patients": len(self.patients)})


def item_sort_key(item: Item) -> tuple[str, bool, str]:
    """Where an item sits in ``items.parquet``: sorted by this key, stably (the order rows were written within
    a key). :data:`ITEM_ORDER`, for one record."""
    return (item.split or "", item.variant != "clean", item.variant)


class BenchWriter:
    """Streams items into ``items.parquet`` and cases into ``cases.parquet`` in fixed-size row groups,
    then writes the manifest.

    Records are turned into rows as they arrive (only rows of the current row group are held), and
    row-group boundaries depend only on the number of records written, never on how ``add_items`` /
    ``add_cases`` calls were batched, so the bytes are the same for any batching. Use as a context
    manager: on an exception the temporary files are removed and no manifest is written.
    """

    def __init__(self, root: Path | str, *, name: str | None = None, row_group_size: int = ROW_GROUP_SIZE,
                 case_row_group_size: int = CASE_ROW_GROUP_SIZE, identity: IdentityRule = CURRENT_IDENTITY) -> None:
        self.root = Path(root)
        self.identity = identity  # the rule the images were named by (its format version is written)
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "images").mkdir(exist_ok=True)
        self.name = name or self.root.name
        self.row_group_size = row_group_size
        # an old manifest must not make a half-rewritten bench look complete
        (self.root / MANIFEST).unlink(missing_ok=True)
        self._items_tmp = self.root / f".{ITEMS_FILE}.partial"
        self._sorter = Sorter(self.root, ITEM_ORDER, schema=ITEM_SCHEMA.schema)  # its temporary folder: .medr2-sort-*
        self._writer: pq.ParquetWriter | None = None
        self._buffer: list[dict[str, Any]] = []
        self._item_ids = IdSet()  # compact: ~16 B per id, for millions of items
        self.case_row_group_size = case_row_group_size
        self._cases_tmp = self.root / f".{CASES_FILE}.partial"
        self._case_writer: pq.ParquetWriter | None = None
        self._case_buffer: list[dict[str, Any]] = []
        self._case_summary = _CaseSummary()
        self._case_ids: set[str] = set()
        self._item_case_ids: set[str] = set()
        self._several = False  # some item shows several images (format version 4, issue 49)
        self._counts = _Counts()
        self.closed = False

    def __enter__(self) -> BenchWriter:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None and not self.closed:
            self.abort()

    def add_cases(self, cases: Iterable[Case]) -> None:
        for c in cases:
            if c.case_id in self._case_ids:
                raise BadInput("duplicate case_id", file=CASES_FILE, record=c.case_id, field="case_id")
            self._case_ids.add(c.case_id)
            self._case_summary.add(c)
            self._case_buffer.append(CASE_SCHEMA.to_row(c))
            if len(self._case_buffer) >= self.case_row_group_size:
                self._flush_cases()

    def add_items(self, items: Iterable[Item]) -> None:
        source = iter(items)
        while block := list(islice(source, 1024)):  # ids are checked a block at a time
            first_dup = self._item_ids.add_all([it.item_id for it in block])
            for it in block if first_dup is None else block[:first_dup]:
                self._item_case_ids.add(it.case_id)
                self._counts.add(it)
                self._several = self._several or bool(it.images)
                self._buffer.append(ITEM_SCHEMA.to_row(it))
                if len(self._buffer) >= self.row_group_size:
                    self._flush()
            if first_dup is not None:
                rid = block[first_dup].item_id
                raise BadInput("duplicate item_id", file=ITEMS_FILE, record=rid, field="item_id")

    @property
    def n_items(self) -> int:
        return self._counts.total

    def _flush(self) -> None:
        if self._buffer:
            self._sorter.add(ITEM_SCHEMA.rows_table(self._buffer))
            self._buffer = []

    def _flush_cases(self, *, final: bool = False) -> None:
        """Write buffered case rows as one row group (the last call writes even an empty bench)."""
        if not self._case_buffer and not (final and self._case_writer is None):
            return
        if self._case_writer is None:
            self._case_writer = pq.ParquetWriter(str(self._cases_tmp), CASE_SCHEMA.schema, **_WRITE_OPTS)
        self._case_writer.write_table(CASE_SCHEMA.rows_table(self._case_buffer),
                                      row_group_size=max(1, len(self._case_buffer)))
        self._case_buffer = []

    def abort(self) -> None:
        for w in (self._writer, self._case_writer):
            if w is not None:
                w.close()
        self._writer = self._case_writer = None
        self._sorter.close()
        self._items_tmp.unlink(missing_ok=True)
        self._cases_tmp.unlink(missing_ok=True)
        self.closed = True

    def close(self, manifest_extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """Finish the files and write the manifest; returns the manifest."""
        extra = dict(manifest_extra or {})
        clash = [k for k in WRITER_KEYS if k in extra]
        if clash:
            raise ValueError(f"manifest_extra may not set {clash}")
        missing = sorted(self._item_case_ids - self._case_ids)
        if missing:
            self.abort()
            raise BadInput(f"{len(missing)} item(s) refer to unknown cases, e.g. {missing[0]}",
                           file=ITEMS_FILE, record=missing[0], field="case_id")
        self._flush()
        self._writer = pq.ParquetWriter(str(self._items_tmp), ITEM_SCHEMA.schema, **_ITEM_WRITE_OPTS)
        pending: list[pa.Table] = []
        n_pending = 0
        for batch in self._sorter.batches():  # fixed-size row groups, whatever the batches
            pending.append(pa.Table.from_batches([batch]))
            n_pending += batch.num_rows
            while n_pending >= self.row_group_size:
                whole = pa.concat_tables(pending)
                self._writer.write_table(whole.slice(0, self.row_group_size), row_group_size=self.row_group_size)
                rest = whole.slice(self.row_group_size)
                pending, n_pending = [rest], rest.num_rows
        if n_pending:
            self._writer.write_table(pa.concat_tables(pending), row_group_size=self.row_group_size)
        self._writer.close()
        self._writer = None
        self._sorter.close()
        os.replace(self._items_tmp, self.root / ITEMS_FILE)
        cases_path = self.root / CASES_FILE
        self._flush_cases(final=True)
        assert self._case_writer is not None
        self._case_writer.close()
        self._case_writer = None
        os.replace(self._cases_tmp, cases_path)
        items_sha = sha256_file(self.root / ITEMS_FILE)
        cases_sha = sha256_file(cases_path)
        manifest: dict[str, Any] = {
            "format": FORMAT_NAME,
            "format_version": self.identity.format_version(renders="renders" in extra, several=self._several),
            "name": extra.pop("name", self.name),
            "medr2_version": medr2.__version__,
        }
        for key in sorted(extra):
            manifest[key] = _sorted(extra[key])
        manifest["counts"] = self._counts.as_dict()
        manifest["cases"] = self._case_summary.as_dict()
        manifest["checksums"] = {
            CASES_FILE: cases_sha,
            ITEMS_FILE: items_sha,
            "bench": bench_checksum(items_sha, cases_sha, self.identity),
        }
        stamp = _checked_by_writer(self.root, items_sha, cases_sha)
        if stamp is not None:
            manifest[CHECKED_KEY] = stamp
        manifest["complete"] = True  # last key, and the file appears atomically
        atomic_write_bytes(self.root / MANIFEST, (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode())
        self.closed = True
        return manifest


def _checked_by_writer(root: Path, items_sha: str, cases_sha: str) -> dict[str, Any] | None:
    """The checks ``medr2 eval`` makes before its first request, made once on the tables just written; their
    record for the manifest, or None where they fail (the bench is then written without it, and every reader
    makes the checks and names the defect)."""
    from medr2.bench.columns import check_tables, checked_stamp

    try:
        check_tables(root)
    except BadInput:
        return None
    return checked_stamp(items_sha, cases_sha)


def prepare_bench_folder(out: Path | str) -> Path:
    """Make ``out`` ready to be (re)written as a bench (``medr2 build``, ``medr2 import``): refuse a file or a
    non-empty folder that is not a bench; for an existing bench remove its manifest *first* (so a rewrite
    killed at any point reads as incomplete, never as the old bench beside new files), then its quarantine."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise BadInput("output path exists and is not a folder", file=str(out), field="--out")
    if out.is_dir():
        known = {MANIFEST, CASES_FILE, ITEMS_FILE, QUARANTINE_FILE, "images", "renders.parquet"}
        foreign = [p.name for p in out.iterdir() if p.name not in known and not p.name.startswith(".")]
        if foreign:
            raise BadInput(f"output folder is not empty and not a bench (found {foreign[0]!r}); choose another --out",
                           file=str(out), field="--out")
    out.mkdir(parents=True, exist_ok=True)
    if (out / MANIFEST).exists():
        (out / MANIFEST).unlink()
        fd = os.open(out, os.O_RDONLY)
        try:
            os.fsync(fd)  # the old manifest is gone on disk before anything new is written
        finally:
            os.close(fd)
    (out / QUARANTINE_FILE).unlink(missing_ok=True)
    return out


def bench_checksum(items_sha: str, cases_sha: str, identity: IdentityRule = CURRENT_IDENTITY) -> str:
    """One hash for the bench content. Images are covered by the identities the records hold (their
    ``image_sha256`` and content-addressed paths); under the pixel rule the rule's name is hashed too, so the
    checksum says which rule those identities follow (a format 1/2 bench's checksum is as it always was)."""
    parts: dict[str, str] = {"cases": cases_sha, "items": items_sha}
    if identity.pixels:
        parts["images"] = identity.name
    return hashlib.sha256(canonical_json(parts).encode()).hexdigest()


def write_bench(root: Path | str, cases: Iterable[Case], items: Iterable[Item],
                manifest_extra: dict[str, Any] | None = None, *,
                row_group_size: int = ROW_GROUP_SIZE, identity: IdentityRule = CURRENT_IDENTITY) -> dict[str, Any]:
    """Write a whole bench in one call (items may be any iterable, consumed streaming; ``identity``: the rule its
    images were stored under)."""
    with BenchWriter(root, row_group_size=row_group_size, identity=identity) as w:
        w.add_cases(cases)
        w.add_items(items)
        return w.close(manifest_extra)


class BenchFace:
    """What every view of a bench folder answers from its manifest and root (a loaded :class:`Bench`, a
    column-wise :class:`medr2.bench.table.BenchTable`): checksum, name, image paths."""

    root: Path
    manifest: dict[str, Any]

    @property
    def checksum(self) -> str:
        return str(self.manifest["checksums"]["bench"])

    @property
    def identity(self) -> IdentityRule:
        """The rule this bench's images are named and checked by (from its format version)."""
        return identity_of_version(self.manifest.get("format_version"), file=str(self.root / MANIFEST))

    @property
    def name(self) -> str:
        return str(self.manifest.get("name", self.root.name))

    @property
    def items_path(self) -> Path:
        """The items table's file (what messages name; read through :class:`medr2.bench.table.BenchTable`)."""
        return self.root / ITEMS_FILE

    @property
    def cases_path(self) -> Path:
        """The cases table's file (read through :class:`medr2.bench.table.BenchTable`)."""
        return self.root / CASES_FILE

    def path(self, rel: str) -> Path:
        """Absolute path of a relative image path, refusing paths that escape the bench; a deferred image is
        rendered (and cached) first (:func:`medr2.renders.image_path`)."""
        from medr2.renders import image_path

        return image_path(self.root, rel)


@dataclass
class Bench(BenchFace):
    """A loaded bench folder."""

    root: Path
    manifest: dict[str, Any]
    cases: list[Case]
    items: list[Item]
    _cases_by_id: dict[str, Case] = field(default_factory=dict, repr=False)
    _rows: tuple[int, int, pa.Table] | None = field(default=None, repr=False, compare=False)  # (id, len, table)

    def __post_init__(self) -> None:
        self._cases_by_id = {c.case_id: c for c in self.cases}

    def case(self, case_id: str) -> Case:
        try:
            return self._cases_by_id[case_id]
        except KeyError:
            raise BadInput("unknown case", file=str(self.root / CASES_FILE), record=case_id, field="case_id") from None

    @cached_property
    def items_by_id(self) -> dict[str, Item]:
        return {it.item_id: it for it in self.items}

    def clean_items(self) -> list[Item]:
        return [it for it in self.items if it.variant == "clean"]

    def table(self) -> BenchTable:
        """A new :class:`BenchTable` over these items (:meth:`BenchTable.held`: the same API as a bench read by
        columns, over the records held as an Arrow table). The table of the records is made once for the list
        ``items`` holds (callers running many evals of one loaded bench); a list assigned in its place, or grown,
        is made again."""
        from medr2.bench.table import BenchTable

        key = (id(self.items), len(self.items))
        if self._rows is None or self._rows[:2] != key:
            self._rows = (*key, ITEM_SCHEMA.to_table(self.items))
        return BenchTable.held(self.root, self.manifest, self._rows[2])

    def iter_items(self, flt: ItemFilter | None = None) -> Iterator[Item]:
        """The items ``flt`` accepts, in bench order (:meth:`BenchTable.iter_items` over :meth:`table`)."""
        return self.table().iter_items(flt)


def case_clusters(root: Path | str) -> dict[str, str]:
    """Case id -> its patient group (cases sharing a patient or a source image:
    :func:`medr2.bench.clusters.patient_groups`), read from the bench's ``cases.parquet`` by columns: the clusters
    the score's bootstrap resamples."""
    from medr2.bench.clusters import ClusterKey, patient_groups

    path = Path(root) / CASES_FILE
    names = set(pq.read_schema(path).names)
    cols = [c for c in ("case_id", "patient_id", "background") if c in names]
    t = pq.read_table(path, columns=cols)
    case_ids = t.column("case_id").to_pylist()
    patients = t.column("patient_id").to_pylist() if "patient_id" in names else case_ids
    backgrounds = t.column("background").to_pylist() if "background" in names else [None] * len(case_ids)
    return patient_groups([ClusterKey(c, p or c, b) for c, p, b in zip(case_ids, patients, backgrounds,
                                                                          strict=True)])


def read_manifest(root: Path | str) -> dict[str, Any]:
    path = Path(root) / MANIFEST
    if not path.is_file():
        raise BadInput("no manifest.json: not a bench folder, or its build did not finish", file=str(path))
    try:
        manifest = jsonsafe.load_file(path)
    except BadInput as e:
        raise BadInput(f"manifest is not valid JSON: {e.reason}", file=str(path)) from e
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise BadInput(f"not a {FORMAT_NAME} manifest", file=str(path), field="format")
    if manifest.get("complete") is not True:
        raise BadInput("bench is incomplete (its build was interrupted)", file=str(path), field="complete")
    identity_of_version(manifest.get("format_version"), file=str(path))  # a version no rule declares is refused
    sums = manifest.get("checksums")
    if not isinstance(sums, dict):
        raise BadInput(f"checksums must be an object of file -> sha256, got {type(sums).__name__}", file=str(path),
                       field="checksums")
    for key in (CASES_FILE, ITEMS_FILE, "bench"):
        if not isinstance(sums.get(key), str):
            raise BadInput("missing or not a sha256 text", file=str(path), field=f"checksums.{key}")
    for key in ("counts", "cases"):
        if key in manifest and not isinstance(manifest[key], dict):
            raise BadInput(f"{key} must be an object", file=str(path), field=key)
    if "name" in manifest and not isinstance(manifest["name"], str):
        raise BadInput("name must be text", file=str(path), field="name")
    return manifest


def verified_file(root: Path | str, name: str) -> tuple[dict[str, Any], Path]:
    """(manifest, path of the bench file ``name``) of a bench folder whose checksums verify (a bench changed after
    its build is refused); BadInput naming the file if it is missing."""
    manifest = read_manifest(root)
    verify_checksums(root, manifest)
    path = Path(root) / name
    if not path.is_file():
        raise BadInput("missing file", file=str(path))
    return manifest, path


def _open_table(path: Path, rs: RecordSchema) -> pq.ParquetFile:
    """The Parquet file of a record table, with the record's required columns (BadInput otherwise)."""
    if not path.is_file():
        raise BadInput("missing file", file=str(path))
    try:
        f = open_parquet(path)
        names = f.schema_arrow.names
    except (OSError, pa.ArrowException) as e:
        raise BadInput(f"cannot read parquet: {e}", file=str(path)) from e
    missing = [n for n in rs.schema.names if n not in names and rs.model.model_fields[n].is_required()]
    if missing:
        f.close()
        raise BadInput("missing column(s)", file=str(path), field=",".join(missing))
    return f


def _record_columns(f: pq.ParquetFile, rs: RecordSchema) -> list[str]:
    return [n for n in f.schema_arrow.names if n in rs.model.model_fields]


def batch_records(batch: pa.RecordBatch | pa.Table, rs: RecordSchema, id_field: str, path: Path,
                  first_row: int = 0) -> Iterator[Any]:
    """The records of rows of a table (``first_row``: the file row of the first, for messages)."""
    fields = rs.field_names
    extra = any(name not in fields for name in batch.schema.names)
    validate = rs.model.model_validate
    for i, row in enumerate(batch.to_pylist(), start=first_row):
        rid = str(row.get(id_field) or f"row {i}")
        try:
            data = rs.decode_row({k: v for k, v in row.items() if k in fields} if extra else row)
            yield validate(data)
        except _FieldError as e:
            raise BadInput(e.reason, file=str(path), record=rid, field=e.field) from e
        except ValidationError as e:
            err = e.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            raise BadInput(err["msg"], file=str(path), record=rid, field=loc) from e


def _read_records(path: Path, rs: RecordSchema, id_field: str) -> Iterator[Any]:
    """Every record of a table, read :data:`RECORD_BATCH_ROWS` rows at a time (only those rows are held as Python
    values: a cases table of 4,096-row groups held ≈ 15 KB per case while a whole group was decoded)."""
    f = _open_table(path, rs)
    with f:
        batches = f.iter_batches(RECORD_BATCH_ROWS, columns=_record_columns(f, rs), use_threads=False)
        start = 0
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                return
            except (OSError, pa.ArrowException) as e:
                raise BadInput(f"cannot read parquet: {e}", file=str(path)) from e
            yield from batch_records(batch, rs, id_field, path, start)
            start += batch.num_rows


class _ImageChecker:
    """Checks that referenced files exist inside the bench with the recorded identity under ``identity`` (the
    bench's rule); with ``hashes=False`` only that they are files inside the bench. A path checked among the
    last :data:`IMAGE_CHECKS_KEPT` is not looked up (or hashed) again."""

    def __init__(self, root: Path, hashes: bool = True, remember: int = IMAGE_CHECKS_KEPT,
                 identity: IdentityRule | None = None) -> None:
        self.hashes = hashes
        self.identity = identity
        self._inside = InsideRoot(root)
        # rel -> its sha256 (None: not hashed), the last ``remember`` paths checked: a path the items of a case
        # share is resolved (and hashed) once, and memory stays bounded on a bench of millions of images
        self._seen: OrderedDict[str, str | None] = OrderedDict()
        self._remember = remember

    def check(self, rel: str, sha: str | None, *, file: str, record: str, field_name: str) -> None:
        if rel in self._seen:
            self._seen.move_to_end(rel)
        else:
            try:
                path = self._inside.resolve(rel)
            except BadInput as e:
                raise BadInput(e.reason, file=file, record=record, field=field_name) from e
            if not os.path.isfile(path):
                from medr2.renders import is_deferred  # rendered on first use: its spec is there, not its file

                if not is_deferred(self._inside.root, rel):
                    raise BadInput(f"referenced image {rel} is missing", file=file, record=record, field=field_name)
                self._seen[rel] = None
            else:
                self._seen[rel] = self._hash(path, file=file, record=record, field_name=field_name)
            if len(self._seen) > self._remember:
                self._seen.popitem(last=False)
        actual = self._seen[rel]
        if actual is None:
            return
        expected = sha if sha is not None else Path(rel).stem  # content-addressed name
        if actual != expected:
            rule = self._identity()
            raise BadInput(f"image {rel} has {rule.name} {actual[:12]}..., recorded {expected[:12]}... (the rule "
                           "of this bench's format version)", file=file, record=record, field=field_name)

    def _hash(self, path: str, *, file: str, record: str, field_name: str) -> str | None:
        if not self.hashes:
            return None
        try:
            return self._identity().of_file(path)
        except BadInput as e:  # an image that does not decode, named by the record that refers to it
            raise BadInput(f"{e.reason} ({path})", file=file, record=record, field=field_name) from e

    def _identity(self) -> IdentityRule:
        if self.identity is None:  # a bench's checks: its manifest's rule (a writer's checks name theirs)
            from medr2.images import bench_identity

            self.identity = bench_identity(self._inside.root)
        return self.identity


def verify_checksums(root: Path | str, manifest: dict[str, Any]) -> str:
    """Check that ``cases.parquet`` and ``items.parquet`` are the files the manifest's checksums name, and
    that its bench checksum is the one they make; returns that checksum. The one check every command
    reading a bench makes (``eval``, ``score``, ``report``, ``convert``, ``export``, ``merge``): it hashes
    the two table files, not the images (14 ms for a 33,000-item bench; see docs/reliability.md)."""
    root = Path(root)
    sums = manifest.get("checksums")
    if not isinstance(sums, dict):
        raise BadInput("the manifest has no checksums object", file=str(root / MANIFEST), field="checksums")
    actual: dict[str, str] = {}
    for fname in (CASES_FILE, ITEMS_FILE):
        path = root / fname
        if not path.is_file():
            raise BadInput("missing file", file=str(path))
        actual[fname] = sha256_file(path)
        if sums.get(fname) != actual[fname]:
            raise BadInput(f"checksum mismatch (file changed after the build): {actual[fname][:12]}... vs manifest",
                           file=str(path), field=f"checksums.{fname}")
    _verify_renders(root, manifest)
    rule = identity_of_version(manifest.get("format_version"), file=str(root / MANIFEST))
    bench = bench_checksum(actual[ITEMS_FILE], actual[CASES_FILE], rule)
    if sums.get("bench") != bench:
        raise BadInput(f"bench checksum mismatch (manifest edited after the build): {bench[:12]}... vs manifest",
                       file=str(root / MANIFEST), field="checksums.bench")
    return bench


def _verify_renders(root: Path, manifest: dict[str, Any]) -> None:
    """A bench with deferred images (format version 2): ``renders.parquet`` is the file its manifest names."""
    entry = manifest.get("renders")
    if entry is None:
        return
    mfile = str(root / MANIFEST)
    if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("file", "sha256")):
        raise BadInput("renders must be an object with file and sha256", file=mfile, field="renders")
    path = root / entry["file"]
    if entry["file"] != "renders.parquet" or not path.is_file():
        raise BadInput("missing file", file=str(path), field="renders.file")
    got = sha256_file(path)
    if got != entry["sha256"]:
        raise BadInput(f"checksum mismatch (file changed after the build): {got[:12]}... vs manifest",
                       file=str(path), field="renders.sha256")


class Validator:
    """The per-record checks of a bench's one validation (:meth:`BenchTable.validate
    <medr2.bench.table.BenchTable.validate>`): every case, each suspect row of the column-wise checks and each item
    built (its case reference, referenced images, boxes); the repeated ids of ids that are not 16 hex digits kept
    compactly (:class:`~medr2.bench.idset.IdSet`). Each failure is a BadInput naming the file, the record and the
    field."""

    def __init__(self, root: Path, image_hashes: bool = True, identity: IdentityRule | None = None) -> None:
        self.root = root
        self.checker = _ImageChecker(root, image_hashes, identity=identity)
        self.case_ids: set[str] = set()
        self.item_ids = IdSet()
        self.cfile = str(root / CASES_FILE)
        self.ifile = str(root / ITEMS_FILE)

    def case(self, c: Case) -> None:
        cfile, checker = self.cfile, self.checker
        if c.case_id in self.case_ids:
            raise BadInput("duplicate case_id", file=cfile, record=c.case_id, field="case_id")
        self.case_ids.add(c.case_id)
        checker.check(c.image, c.image_sha256, file=cfile, record=c.case_id, field_name="image")
        for kind, recs in regions_by_kind(c.structures, c.findings):
            for j, r in enumerate(recs):
                try:
                    check_box(r.box, c.width, c.height)
                except ValueError as e:
                    raise BadInput(str(e), file=cfile, record=c.case_id, field=f"{kind}[{j}].box") from e
                if r.mask:
                    checker.check(r.mask, None, file=cfile, record=c.case_id, field_name=f"{kind}[{j}].mask")

    def item(self, it: Item, *, duplicate: bool = False) -> None:
        """The checks of one item beyond its ids (its case, image and answer box); ``duplicate``: its id was
        found to repeat an earlier one (the first failure named)."""
        ifile = self.ifile
        if duplicate:
            raise BadInput("duplicate item_id", file=ifile, record=it.item_id, field="item_id")
        if it.case_id not in self.case_ids:
            raise BadInput("refers to an unknown case", file=ifile, record=it.item_id, field="case_id")
        if it.image is not None:
            self.checker.check(it.image, it.image_sha256, file=ifile, record=it.item_id, field_name="image")
        if it.images:
            self._images(it)
        if it.answer_box is not None and it.image_width and it.image_height:
            try:
                check_box(it.answer_box, it.image_width, it.image_height)
            except ValueError as e:
                raise BadInput(str(e), file=ifile, record=it.item_id, field="answer_box") from e

    def _images(self, it: Item) -> None:
        """Several images (issue 49): each file checked as ``image`` is, and ``image`` among them exactly once,
        with role current."""
        ifile = self.ifile
        for j, ref in enumerate(it.images):
            self.checker.check(ref.path, ref.sha256, file=ifile, record=it.item_id, field_name=f"images[{j}].path")
        current = [j for j, ref in enumerate(it.images) if ref.role == "current"]
        if len(current) != 1 or it.images[current[0]].path != it.image:
            raise BadInput(f"images must hold the item's image {it.image!r} exactly once, with role current "
                           f"({len(current)} images have role current)", file=ifile, record=it.item_id,
                           field="images")
        ref = it.images[current[0]]
        if (ref.sha256, ref.width, ref.height) != (it.image_sha256, it.image_width, it.image_height):
            raise BadInput("the current entry of images differs from image_sha256/image_width/image_height",
                           file=ifile, record=it.item_id, field=f"images[{current[0]}]")

    def parent_missing(self, item_id: str) -> BadInput:
        """The error of an item whose parent is not an item of the bench."""
        return BadInput("parent item not in the bench", file=self.ifile, record=item_id, field="parent_id")


def load_bench(root: Path | str, validate: bool = True, *, image_hashes: bool = True) -> Bench:
    """Load a bench; with ``validate`` make the bench's one validation (:meth:`BenchTable.validate
    <medr2.bench.table.BenchTable.validate>`: the tables by columns, then each item as it is built), BadInput on
    error. ``image_hashes=False`` checks that every referenced image is a file inside the bench without reading
    it, for callers that verify each image's sha256 when they use it."""
    from medr2.bench.table import BenchTable

    root = Path(root)
    table = BenchTable.open(root, validate, image_hashes=image_hashes)
    try:
        cases = list(table.iter_cases())
        items = list(table.iter_items())
    finally:
        table.close()
    return Bench(root=root, manifest=table.manifest, cases=cases, items=items)


def read_parquet(path: Path | str, columns: Sequence[str] | None = None) -> pa.Table:
    """One Parquet file as a table. ``ParquetFile.read`` rather than ``pq.read_table``: the same table for a
    single file, without importing ``pyarrow.dataset`` (and pandas with it: ~0.25 s on every command)."""
    with pq.ParquetFile(str(path)) as f:
        return f.read(columns=list(columns) if columns else None)


def read_items_table(root: Path | str, columns: Sequence[str] | None = None) -> pa.Table:
    """The raw items table (for fast column scans without building records)."""
    return read_parquet(Path(root) / ITEMS_FILE, columns)
