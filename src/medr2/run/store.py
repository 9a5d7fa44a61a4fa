"""The run store: ``RUN/store.sqlite`` (WAL), one row per request hash, written as answers arrive.

This is the only module that touches SQLite. A row is committed the moment its response is
handed over (``put``/``put_many`` use one short transaction), so a process killed at any moment
loses at most what was in flight. ``request_hash`` is the primary key and ``(item_id, mode)`` is
unique, so nothing is ever stored twice; an ``ok`` row is never overwritten, an ``error`` row is
replaced when the request is retried (``--retry-errors``).

A writer holds an exclusive lock file (``RUN/.lock``) so two processes cannot write one run. Its WAL is
checkpointed by a background thread with its own connection (:class:`_Checkpointer`), so no commit
pays a checkpoint's fsyncs on the runner's event-loop thread.

The store gate (docs/reliability.md): :meth:`Store.open` is the only way any command opens a store. It refuses
a store of a newer schema version (naming the version; never relabelled), a file that is not a medr2 store
(zero bytes, another database, no ``predictions`` table) and one that fails SQLite's ``quick_check``; and
every SQLite error raised later by a :class:`Store` method (a corrupted page met while reading) is mapped to
a :class:`~medr2.errors.BadInput` naming the file (exit 2), or to the storage message (exit 1).
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from itertools import compress
from pathlib import Path
from typing import Any, TypeVar

from medr2 import jsonsafe
from medr2.errors import BadInput, WorkFailed
from medr2.outdir import LOCK, hold
from medr2.records import Prediction
from medr2.textfile import storable

STORE_FILE = "store.sqlite"
LOCK_FILE = LOCK  # the run folder's writer lock (medr2.outdir)
SCHEMA_VERSION = "3"  # 2: finish_reason and reasoning columns; 3: confidence (added to an older store opened to write)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS predictions (
  request_hash TEXT PRIMARY KEY,
  item_id TEXT NOT NULL,
  mode TEXT NOT NULL,
  model_key TEXT NOT NULL,
  step INTEGER,
  chain_id TEXT,
  raw TEXT,
  status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
  error TEXT,
  latency_s REAL,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  attempts INTEGER NOT NULL DEFAULT 1,
  created_at REAL NOT NULL,
  meta TEXT NOT NULL DEFAULT '{}',
  request TEXT,
  finish_reason TEXT,
  reasoning TEXT,
  confidence TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS predictions_item_mode ON predictions (item_id, mode);
CREATE TABLE IF NOT EXISTS store_info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

# the answer budget: what scoring, the rationale audit and the report read of an answer (the store keeps it whole):
# all of it up to ANSWER_READ_CHARS characters, else its first and last halves, cut by SQLite before Python
# holds it (the scorer reads 32,768 characters of that, ``score.truncation.scan_text``)
ANSWER_READ_CHARS = 1 << 20


def _windowed(column: str) -> str:
    """SQL reading ``column`` through the answer budget. An answer of at most ``ANSWER_READ_CHARS`` bytes is read
    whole; a longer one is cut by SQLite, except one holding a NUL: SQLite's ``length``, ``substr`` and ``replace``
    count characters only up to the first NUL, so such an answer is cut by :func:`_window_text`, one row at a
    time (the connection's function ``medr2_window``)."""
    n, h = ANSWER_READ_CHARS, ANSWER_READ_CHARS // 2
    return (f"CASE WHEN {column} IS NULL THEN NULL WHEN length(CAST({column} AS BLOB)) <= {n} THEN {column} "
            f"WHEN instr(CAST({column} AS BLOB), X'00') > 0 THEN medr2_window({column}) "
            f"WHEN length({column}) > {n} THEN substr({column}, 1, {h}) || char(10, 10) || substr({column}, -{h}) "
            f"ELSE {column} END")


def _window_text(text: str | None) -> str | None:
    """The answer budget of :func:`_windowed`, for the long answers SQLite cannot measure (they hold a NUL)."""
    if text is None or len(text) <= ANSWER_READ_CHARS:
        return text
    h = ANSWER_READ_CHARS // 2
    return f"{text[:h]}\n\n{text[-h:]}"


_KEY_INDEX = "predictions_item_mode"  # unique: one row per (item_id, mode)
_COLUMNS = ("request_hash", "item_id", "mode", "model_key", "step", "chain_id", "raw", "status", "error",
            "latency_s", "prompt_tokens", "completion_tokens", "attempts", "created_at", "meta", "request",
            "finish_reason", "reasoning", "confidence")
# columns added after schema version 1: ``ALTER TABLE`` adds them to an older store opened to write; a
# read-only reader of an older store reads them as NULL
_ADDED_COLUMNS = {"finish_reason": "TEXT", "reasoning": "TEXT", "confidence": "TEXT"}
_INT64 = (-(1 << 63), (1 << 63) - 1)

# an ok row is final; an error row gives way to a new answer for the same request
_UPSERT = (
    f"INSERT INTO predictions ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))}) "
    "ON CONFLICT (request_hash) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _COLUMNS[1:])
    + " WHERE predictions.status = 'error'"
)
# an error row of the same (item, mode) under another hash (e.g. a chain-own step whose earlier
# answer has since been retried) is replaced, never kept beside the new row
_CLEAR_STALE = "DELETE FROM predictions WHERE item_id = ? AND mode = ? AND status = 'error' AND request_hash != ?"


@dataclass(frozen=True)
class StoredPrediction:
    """A stored row: the prediction plus where it sits in a chain and its request metadata
    (``meta``: variant, misled_step, upstream errors, ...; ``request``: the rendered messages)."""

    prediction: Prediction
    step: int | None
    chain_id: str | None
    meta: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    request: list[Any] | None = None


@dataclass(frozen=True)
class Row:
    """What the runner hands the store for one finished request."""

    prediction: Prediction
    step: int | None = None
    chain_id: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    request: list[Any] | None = None


@dataclass(frozen=True, slots=True)
class CountedBatch:
    """A batch of :meth:`Store.counted_rows`, by column: the answer that counts per (item, mode), aligned
    columns (row ``k`` is ``item_id[k]``, ``mode[k]``, ...). Picklable: a scoring worker process receives it."""

    item_id: Sequence[str]
    mode: Sequence[str]
    model_key: Sequence[str]
    status: Sequence[str]
    raw: Sequence[str | None]  # through the answer budget (ANSWER_READ_CHARS)
    finish_reason: Sequence[str | None]
    reasoning: Sequence[str | None]  # through the answer budget; None unless the answer is ok
    first: Sequence[int]  # the rowid of the key's first stored row

    def __len__(self) -> int:
        return len(self.item_id)

    def where(self, keep: Sequence[bool]) -> CountedBatch:
        """The rows whose ``keep`` is true (the same batch when all are)."""
        if all(keep):
            return self
        return CountedBatch(*(list(compress(getattr(self, f), keep)) for f in self.__slots__))


@dataclass(frozen=True, slots=True)
class ModeCounts:
    """A batch of :meth:`Store.modes_per_item`, by column: per item, how many distinct modes it has answered."""

    item_id: Sequence[str]
    modes: Sequence[int]


@dataclass(frozen=True, slots=True)
class RowKeys:
    """A batch of :meth:`Store.item_rows`, by column: the request hash and item id of stored rows."""

    request_hash: Sequence[str]
    item_id: Sequence[str]


_Batch = TypeVar("_Batch", CountedBatch, ModeCounts, RowKeys)


def _batches(kind: type[_Batch], cur: sqlite3.Cursor, batch_rows: int) -> Iterator[_Batch]:
    """The rows of ``cur`` (its columns in ``kind``'s field order), ``batch_rows`` at a time, by column."""
    while rows := cur.fetchmany(batch_rows):
        yield kind(*zip(*rows, strict=True))


# what reading a damaged store can raise: SQLite's errors, and text of a changed page that is not UTF-8 (decoded by
# the sqlite3 module as it returns a row, sqlite_master's names included)
STORE_ERRORS: tuple[type[sqlite3.DatabaseError], type[UnicodeDecodeError]] = (sqlite3.DatabaseError, UnicodeDecodeError)
_OPEN_ERRORS = (*STORE_ERRORS, BadInput)  # what opening refuses with: the above, and the gate's own checks


def _mapped_error(e: Exception, path: Path, *, write: bool = True) -> Exception:
    """What a SQLite error (one of :data:`STORE_ERRORS`) becomes: the storage message (exit 1) where the storage is
    the problem, else BadInput naming the store (exit 2)."""
    if write and isinstance(e, sqlite3.OperationalError) and str(e) in _STORAGE_ERRORS:
        return WorkFailed(f"{path}: cannot write the run store ({e}); free space or use storage this "
                          "process can write, then rerun the same command")
    return BadInput(f"cannot read the run store: {e} (the file is damaged or is not a medr2 store)", file=str(path))


def _gated(fn: Any) -> Any:
    """A Store method whose SQLite errors are mapped by :func:`_mapped_error` (generators too)."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def gen(self: Store, *args: Any, **kwargs: Any) -> Any:
            try:
                yield from fn(self, *args, **kwargs)
            except STORE_ERRORS as e:
                raise _mapped_error(e, self.path) from e
        return gen

    @functools.wraps(fn)
    def call(self: Store, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except STORE_ERRORS as e:
            raise _mapped_error(e, self.path) from e
    return call


def _gate_methods(cls: type) -> type:
    """Every public method of the store goes through :func:`_gated` (by construction: a new method too)."""
    for name, value in list(vars(cls).items()):
        if callable(value) and not name.startswith("_") and name not in ("open", "close"):
            setattr(cls, name, _gated(value))
    return cls


_WRITERS: set[Path] = set()  # run folders with a writing Store open in this process


@contextmanager
def _one_writer(run_dir: Path) -> Iterator[None]:
    """One writing Store per run folder in this process too (the folder lock is re-entrant for the command)."""
    key = run_dir.resolve()
    if key in _WRITERS:
        raise BadInput("another process is writing this run (a store of it is open for writing here)",
                       file=str(run_dir), field="--out")
    _WRITERS.add(key)
    try:
        yield
    finally:
        _WRITERS.discard(key)


@_gate_methods
class Store:
    """``Store.open(run_dir)``; ``put``/``put_many``/``get``/``iter_predictions``; ``close``. Every read returns
    named values (:class:`StoredPrediction`, or a batch by column: :class:`CountedBatch`, :class:`ModeCounts`,
    :class:`RowKeys`), never positional tuples (``tests/test_run_store.py`` checks the annotations)."""

    def __init__(self, path: Path, conn: sqlite3.Connection, lock: Any | None,
                 checkpointer: _Checkpointer | None = None) -> None:
        self.path = path
        self._conn = conn
        self._lock = lock
        self._checkpointer = checkpointer
        self._select = list(_COLUMNS)  # what SELECT reads per column (NULL for a column an old store lacks)

    # -- opening -----------------------------------------------------------------------------
    @classmethod
    def open(cls, run_dir: Path | str, *, write: bool = False) -> Store:
        """Open ``RUN/store.sqlite``. ``write=True`` creates it if needed and takes the writer lock."""
        run_dir = Path(run_dir)
        path = run_dir / STORE_FILE
        lock = None
        if write:
            lock = ExitStack()
            lock.enter_context(hold(run_dir))  # the folder's writer lock (medr2.outdir), RUN/.lock
            lock.enter_context(_one_writer(run_dir))
        elif not path.is_file():
            raise BadInput("no store.sqlite: not a run folder", file=str(path))
        conn: sqlite3.Connection | None = None
        try:
            if write:
                conn = sqlite3.connect(str(path), isolation_level=None, timeout=30.0)
            else:
                conn = sqlite3.connect(_read_only_uri(path), uri=True, isolation_level=None, timeout=30.0)
            conn.execute("PRAGMA busy_timeout = 30000")
            conn.create_function("medr2_window", 1, _window_text, deterministic=True)
            # a writer initialises a store without any table (new, or left empty by an eval killed or stopped by
            # a full disk as it created it: nothing stored is lost); anything else passes the gate's checks
            if not (write and _no_tables(conn)):
                _check_store(conn, path)
            if write:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.executescript(_SCHEMA)
                _migrate(conn)
                conn.execute("PRAGMA wal_autocheckpoint = 0")  # the checkpointer thread does it
            present = _present_columns(conn, "main")
        except _OPEN_ERRORS as e:
            if lock is not None:
                lock.close()
            if conn is not None:
                conn.close()
            if isinstance(e, BadInput):
                raise
            raise _mapped_error(e, path, write=write) from e
        store = cls(path, conn, lock, _Checkpointer(path) if write else None)
        store._select = [c if c in present else "NULL" for c in _COLUMNS]
        return store

    def close(self) -> None:
        # the checkpointer stops first, so the writer's is the last connection: its close checkpoints what
        # is left and removes the WAL
        if self._checkpointer is not None:
            self._checkpointer.stop()
            self._checkpointer = None
        self._conn.close()
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -----------------------------------------------------------------------------
    def put(self, prediction: Prediction, *, step: int | None = None, chain_id: str | None = None,
            meta: dict[str, Any] | None = None, request: list[Any] | None = None) -> None:
        self.put_many([Row(prediction, step, chain_id, meta or {}, request)])

    def put_many(self, rows: Sequence[Row]) -> None:
        """Commit ``rows`` in one short transaction."""
        if not rows:
            return
        now = time.time()
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            for r in rows:
                p = r.prediction
                meta = r.meta
                pt, ct = _int64(p.prompt_tokens), _int64(p.completion_tokens)
                if (pt is None) != (p.prompt_tokens is None) or (ct is None) != (p.completion_tokens is None):
                    meta = {**meta, "notes": [*meta.get("notes", ()), "token usage out of range "
                                              f"({_digits(p.prompt_tokens)}/{_digits(p.completion_tokens)}): "
                                              "stored as NULL"]}
                conn.execute(_CLEAR_STALE, (p.item_id, p.mode, p.request_hash))
                conn.execute(_UPSERT, (
                    p.request_hash, p.item_id, p.mode, p.model_key, r.step, r.chain_id, _utf8(p.raw), p.status,
                    _utf8(p.error),
                    p.latency_s, pt, ct, p.attempts, now,
                    json.dumps(meta, sort_keys=True, default=str),
                    json.dumps(r.request, ensure_ascii=False) if r.request is not None else None,
                    _utf8(p.finish_reason), _utf8(p.reasoning),
                    None if p.confidence is None else json.dumps(p.confidence.model_dump(), sort_keys=True)))
            conn.execute("COMMIT")
        except sqlite3.IntegrityError as e:
            conn.execute("ROLLBACK")
            raise BadInput(f"an answer for the same item and mode is already stored under another request ({e}): "
                           "the run folder holds a different run, or its store was changed", file=str(self.path)) from e
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def copy_from(self, other: Path) -> int:
        """Insert every row of another store (merge), after it passed the gate (:meth:`open`). Conflicting rows
        raise WorkFailed; SQLite errors of the other store name it."""
        Store.open(other.parent).close()
        try:
            return self._copy_from(other)
        except STORE_ERRORS as e:
            raise _mapped_error(e, other, write=False) from e

    def _copy_from(self, other: Path) -> int:
        conn = self._conn
        before = self.count()
        try:
            conn.execute("ATTACH DATABASE ? AS src", (f"file:{other}?mode=ro",))
        except sqlite3.OperationalError:
            conn.execute("ATTACH DATABASE ? AS src", (str(other),))
        try:
            present = _present_columns(conn, "src")
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(f"INSERT INTO predictions ({', '.join(_COLUMNS)}) "
                         f"SELECT {', '.join(c if c in present else 'NULL' for c in _COLUMNS)} FROM src.predictions")
            conn.execute("COMMIT")
        except sqlite3.IntegrityError as e:
            conn.execute("ROLLBACK")
            raise WorkFailed(f"{other}: holds rows that are already in the merged store ({e})") from e
        finally:
            conn.execute("DETACH DATABASE src")
        return self.count() - before

    # -- reading -----------------------------------------------------------------------------
    def statuses(self, hashes: Iterable[str]) -> dict[str, str]:
        """Stored status (``ok``/``error``) of each of ``hashes`` that is stored."""
        out: dict[str, str] = {}
        batch: list[str] = []

        def flush() -> None:
            q = f"SELECT request_hash, status FROM predictions WHERE request_hash IN ({','.join('?' * len(batch))})"
            out.update(self._conn.execute(q, batch).fetchall())
            batch.clear()

        for h in hashes:
            batch.append(h)
            if len(batch) >= 500:
                flush()
        if batch:
            flush()
        return out

    def get(self, request_hash: str) -> StoredPrediction | None:
        row = self._conn.execute(f"SELECT {', '.join(self._select)} FROM predictions WHERE request_hash = ?",
                                 (request_hash,)).fetchone()
        return _to_stored(row) if row else None

    def get_item(self, item_id: str, mode: str, *, window: bool = True) -> StoredPrediction | None:
        """The stored row of (item, mode), its answer and reasoning read through the answer budget
        (:data:`ANSWER_READ_CHARS`: what the report shows, what a ``chain-own`` history feeds back);
        ``window=False``: whole (only :meth:`get` reads whole by default)."""
        cols = [_windowed(c) if window and c in ("raw", "reasoning") else c for c in self._select]
        row = self._conn.execute(f"SELECT {', '.join(cols)} FROM predictions WHERE item_id = ? AND mode = ?",
                                 (item_id, mode)).fetchone()
        return _to_stored(row) if row else None

    def iter_predictions(self, mode: str | None = None, *, with_request: bool = False,
                         window: bool = True) -> Iterator[StoredPrediction]:
        """Every stored prediction (optionally of one mode), in insertion order, answers and reasoning read
        through the answer budget (:data:`ANSWER_READ_CHARS`) unless ``window=False``."""
        cols = [c if (c != "request" or with_request) else "NULL" for c in self._select]
        cols = [_windowed(c) if window and c in ("raw", "reasoning") else c for c in cols]
        q = f"SELECT {', '.join(cols)} FROM predictions"
        args: tuple[Any, ...] = ()
        if mode is not None:
            q += " WHERE mode = ?"
            args = (mode,)
        cur = self._conn.execute(q + " ORDER BY rowid", args)
        while True:
            rows = cur.fetchmany(1000)
            if not rows:
                return
            for row in rows:
                yield _to_stored(row)

    def counted_rows(self, batch_rows: int = 10_000) -> Iterator[CountedBatch]:
        """The answer that counts per (item, mode), in batches (:class:`CountedBatch`, by column) ordered by
        (mode, item_id) (byte order, as Arrow sorts), where the answer that counts is the latest ok row, else the
        latest row (a later ok answer replaces an earlier one, an error never replaces an ok one),
        ``reasoning`` is None unless it is ok, and ``first`` is the rowid of the key's first stored row (the order
        scoring used to keep). Nothing here holds more than one batch.

        A store with its unique index on (item_id, mode) (every store this code wrote) holds one row per key:
        the rows are streamed mode by mode along that index, the first batch at once. A store without it is
        grouped and sorted by SQLite (on disk when large) before its first row."""
        finish = "finish_reason" if "finish_reason" in self._select else "NULL"
        reasoning = _windowed("reasoning") if "reasoning" in self._select else "NULL"
        if self._one_row_per_key():
            modes = [m for (m,) in self._conn.execute("SELECT DISTINCT mode FROM predictions ORDER BY mode")]
            for mode in modes:
                yield from _batches(CountedBatch, self._conn.execute(
                    f"SELECT item_id, mode, model_key, status, {_windowed('raw')}, {finish}, "
                    f"CASE WHEN status = 'ok' THEN {reasoning} END, rowid FROM predictions "
                    f"INDEXED BY {_KEY_INDEX} WHERE mode = ? ORDER BY item_id", (mode,)), batch_rows)
            return
        yield from _batches(CountedBatch, self._conn.execute(
            f"SELECT p.item_id, p.mode, p.model_key, p.status, {_windowed('p.raw')}, {_qualified(finish)}, "
            f"CASE WHEN p.status = 'ok' THEN {_windowed('p.reasoning') if reasoning != 'NULL' else 'NULL'} END, "
            "g.first FROM "
            "(SELECT item_id, mode, MIN(rowid) AS first, "
            "COALESCE(MAX(CASE WHEN status = 'ok' THEN rowid END), MAX(rowid)) AS pick "
            "FROM predictions GROUP BY item_id, mode) AS g "
            "JOIN predictions AS p ON p.rowid = g.pick ORDER BY p.mode, p.item_id"), batch_rows)

    def _one_row_per_key(self) -> bool:
        """Whether the store has its unique index on exactly (item_id, mode) (at most one row per key)."""
        for row in self._conn.execute("PRAGMA index_list(predictions)"):
            if row[1] == _KEY_INDEX and row[2]:
                cols = [r[2] for r in self._conn.execute(f"PRAGMA index_info({_KEY_INDEX})")]
                return cols == ["item_id", "mode"]
        return False

    def has_confidences(self) -> bool:
        """Whether some answer carries a confidence (the column, or an ``hf:`` log-likelihood choice note)."""
        conf = "confidence IS NOT NULL OR " if "confidence" in self._select else ""
        q = f"SELECT 1 FROM predictions WHERE {conf}meta LIKE '%choice by log-likelihood%' LIMIT 1"
        return self._conn.execute(q).fetchone() is not None

    def modes_per_item(self, batch_rows: int = 10_000) -> Iterator[ModeCounts]:
        """How many distinct modes each item has answered (how many answers count, before reading them), in
        batches by column (:class:`ModeCounts`)."""
        yield from _batches(ModeCounts, self._conn.execute(
            "SELECT item_id, COUNT(DISTINCT mode) FROM predictions GROUP BY item_id"), batch_rows)

    def item_rows(self, batch_rows: int = 10_000) -> Iterator[RowKeys]:
        """The request hash and item id of every row in insertion order (no answers read), in batches by column
        (:class:`RowKeys`)."""
        yield from _batches(RowKeys, self._conn.execute(
            "SELECT request_hash, item_id FROM predictions ORDER BY rowid"), batch_rows)

    def count(self, status: str | None = None, mode: str | None = None) -> int:
        q, args = "SELECT COUNT(*) FROM predictions WHERE 1=1", []
        if status:
            q += " AND status = ?"
            args.append(status)
        if mode:
            q += " AND mode = ?"
            args.append(mode)
        return int(self._conn.execute(q, args).fetchone()[0])

    def counts_by_mode(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for mode, status, n in self._conn.execute("SELECT mode, status, COUNT(*) FROM predictions GROUP BY 1, 2"):
            out.setdefault(mode, {})[status] = n
        return out


def _utf8(text: str | None) -> str | None:
    """Text SQLite can hold (:func:`medr2.textfile.storable`: lone surrogates from any adapter become U+FFFD)."""
    return None if text is None else storable(text)


def _int64(value: Any) -> int | None:
    """A token count SQLite can hold (a signed 64-bit integer), else None (a hostile server's 10**20 must
    not fail the run on every resume)."""
    if isinstance(value, int) and not isinstance(value, bool) and _INT64[0] <= value <= _INT64[1]:
        return value
    return None


def _digits(value: Any) -> str:
    """A short description of a token count for a note (a 10**20 is named by its digit count)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _INT64[1]:
        return f"{'-' if value < 0 else ''}{len(str(abs(value)))}-digit number"
    return repr(value)[:40]


def _qualified(column: str) -> str:
    """``p.column``, or NULL for a column the store lacks."""
    return column if column == "NULL" else f"p.{column}"


def _no_tables(conn: sqlite3.Connection) -> bool:
    return int(conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]) == 0


def _check_store(conn: sqlite3.Connection, path: Path) -> None:
    """The gate's checks of an existing store: a medr2 store, of a schema version this code reads, whose pages
    pass ``PRAGMA quick_check``. BadInput naming the file otherwise."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "predictions" not in tables:
        raise BadInput("not a medr2 run store (no predictions table"
                       + (": the file is empty)" if path.stat().st_size == 0 else ")"), file=str(path))
    if "store_info" in tables:
        row = conn.execute("SELECT value FROM store_info WHERE key = 'schema_version'").fetchone()
        version = str(row[0]) if row else None
        if version is not None and (not version.isdigit() or int(version) > int(SCHEMA_VERSION)):
            raise BadInput(f"the run store has schema version {version[:20]!r}, newer than this medr2 reads "
                           f"(up to {SCHEMA_VERSION}); use the medr2 that wrote it (the store is left as it is)",
                           file=str(path), field="store_info.schema_version")
    problems = [r[0] for r in conn.execute("PRAGMA quick_check(3)")]
    if problems != ["ok"]:
        raise BadInput(f"the run store is damaged (SQLite quick_check: {'; '.join(map(str, problems))[:300]}); "
                       "restore it from a copy, or rerun the eval into a new folder", file=str(path))


def _present_columns(conn: sqlite3.Connection, schema: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA {schema}.table_info(predictions)")}


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring an older store up to ``SCHEMA_VERSION`` (add the columns it lacks; nothing is rewritten)."""
    present = _present_columns(conn, "main")
    for name, typ in _ADDED_COLUMNS.items():
        if name not in present:
            conn.execute(f"ALTER TABLE predictions ADD COLUMN {name} {typ}")
    conn.execute("INSERT INTO store_info (key, value) VALUES ('schema_version', ?) "
                 "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (SCHEMA_VERSION,))


def _to_stored(row: Sequence[Any]) -> StoredPrediction:
    d = dict(zip(_COLUMNS, row, strict=True))
    pred = Prediction(model_key=d["model_key"], item_id=d["item_id"], mode=d["mode"], request_hash=d["request_hash"],
                      raw=d["raw"], latency_s=d["latency_s"], prompt_tokens=d["prompt_tokens"],
                      completion_tokens=d["completion_tokens"], status=d["status"], error=d["error"],
                      attempts=d["attempts"], finish_reason=d["finish_reason"], reasoning=d["reasoning"],
                      confidence=jsonsafe.loads(d["confidence"], record=d["item_id"], field="confidence",
                                                max_bytes=None) if d["confidence"] else None)
    return StoredPrediction(pred, d["step"], d["chain_id"],
                            jsonsafe.loads(d["meta"] or "{}", record=d["item_id"], field="meta", max_bytes=None),
                            d["created_at"], jsonsafe.loads(d["request"], record=d["item_id"], field="request",
                                                            max_bytes=None) if d["request"] else None)


class _Checkpointer(threading.Thread):
    """Checkpoints the WAL every ``interval_s`` from its own connection (``PRAGMA wal_checkpoint(PASSIVE)``:
    copies committed pages into the database without blocking the writer or waiting for it). SQLite's
    automatic checkpoint would run inside the commit that crosses its threshold, on the writer's thread,
    fsyncs included (5-32 ms on a busy disk). A failed checkpoint is retried on the next tick; the
    committed rows are safe in the WAL either way."""

    def __init__(self, path: Path, interval_s: float = 1.0) -> None:
        super().__init__(name="medr2-store-checkpoint", daemon=True)
        self.path = path
        self.interval_s = interval_s
        self._stopping = threading.Event()
        self.start()

    def run(self) -> None:
        conn = sqlite3.connect(str(self.path), isolation_level=None, timeout=30.0)
        try:
            while not self._stopping.wait(self.interval_s):
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                except sqlite3.Error:
                    continue
        finally:
            conn.close()

    def stop(self) -> None:
        self._stopping.set()
        self.join()


# what SQLite says when the storage, not the file, is the problem (a full disk, a read-only mount)
_STORAGE_ERRORS = ("disk I/O error", "database or disk is full", "unable to open database file",
                   "attempt to write a readonly database")


def _read_only_uri(path: Path) -> str:
    """The URI to read ``path`` without writing: ``mode=ro``; on storage that cannot be written (a read-only
    mount, a folder without write permission) also ``immutable=1``, since SQLite cannot create the WAL's
    shared-memory file there (no writer can be running on such storage either)."""
    from urllib.parse import quote

    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    if os.access(path.parent, os.W_OK):
        return uri
    wal = path.with_name(path.name + "-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        raise WorkFailed(f"{path}: the store has an unfinished write-ahead log ({wal.name}) on storage that cannot "
                         "be written; copy the run folder to writable storage to read it")
    return uri + "&immutable=1"
