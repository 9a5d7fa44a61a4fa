"""Atomic file writes: a reader (or a killed process) never leaves or sees half a file, nor half a set.

:func:`atomic_write_bytes` publishes one file (temporary file beside it, fsync, rename). Files written
this way get the permissions ``open()`` would give them (``0o666`` less the umask), not ``mkstemp``'s
``0o600``, so a shared bench or run stays readable by the group.

:func:`publish_files` publishes the outputs of one command *together* (``medr2 score``: scores.parquet
and metrics.json; ``medr2 report``: leaderboard.*, plots/*.png and index.html): every new file is
first written and fsynced under a hidden pending name, then a small journal naming the whole set is
written atomically, then the pending files are renamed into place and the journal removed. A process
killed before the journal exists leaves the previous set untouched (the pending files are swept by
the next publish); one killed after it leaves a journal that :func:`settle` completes (every reader
calls it first), so no reader ever sees a new file beside an old one.

A file too large to hold as bytes (``medr2 score``'s ``scores.parquet``) is given to :func:`publish_files` as the
path of a file the command wrote itself on the same file system (inside ``folder``, e.g. a spill folder that
its next run removes if it was killed): it is fsynced and moved into its pending name, then published as the
others.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from medr2 import jsonsafe
from medr2.errors import WorkFailed

JOURNAL = ".medr2-publish.json"
PENDING_SUFFIX = ".medr2-pending"

def current_umask() -> int:
    """The process umask, read without changing it where /proc allows (read each time: it is cheap, and a
    process may change its umask)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # pragma: no cover - no /proc
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode a plain ``open(path, "w")`` would give a new file."""
    return 0o666 & ~current_umask()


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_temp(folder: Path, prefix: str, suffix: str, data: bytes) -> str:
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=suffix)
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, fsync it, then rename it over ``path``."""
    path = Path(path)
    tmp = _write_temp(path.parent, f".{path.name}.", ".tmp", data)
    try:
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _pending_name(rel: str) -> str:
    head, _, name = rel.rpartition("/")
    return f"{head}/.{name}{PENDING_SUFFIX}" if head else f".{name}{PENDING_SUFFIX}"


def _check_rel(rel: str) -> None:
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"not a plain relative path: {rel!r}")


def settle(folder: Path | str) -> bool:
    """Complete a publish that was interrupted after its journal was written (renames the pending files
    it names into place, removes what it says to remove). Returns whether there was one to complete.
    On storage that cannot be written, an unfinished publish is an error naming what to rerun."""
    folder = Path(folder)
    journal = folder / JOURNAL
    if not journal.is_file():
        return False
    try:
        plan = jsonsafe.load_object(journal)
        files = [str(x) for x in plan["files"]]
        remove = [str(x) for x in plan.get("remove", [])]
        for rel in [*files, *remove]:
            _check_rel(rel)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise WorkFailed(f"{journal}: unreadable publish journal ({e}); rerun the command that writes "
                         f"{folder}") from e
    try:
        for rel in files:
            pending = folder / _pending_name(rel)
            if pending.exists():
                os.replace(pending, folder / rel)
        for rel in remove:
            (folder / rel).unlink(missing_ok=True)
        _fsync_dir(folder)
        journal.unlink()
        _fsync_dir(folder)
    except OSError as e:
        raise WorkFailed(f"{folder}: an interrupted write left a half-published set of files, and it cannot be "
                         f"completed here ({e.strerror or e}); rerun {plan.get('command') or 'the command'} "
                         "where the folder is writable") from e
    return True


def _sweep(folder: Path, subdirs: Iterable[Path]) -> None:
    """Pending files of a publish killed before its journal existed (never part of a visible set)."""
    for d in {folder, *subdirs}:
        if d.is_dir():
            for stale in d.glob(f".*{PENDING_SUFFIX}*"):
                stale.unlink(missing_ok=True)


def _move_temp(src: Path, folder: Path, prefix: str, suffix: str) -> str:
    """Move a finished file (same file system) to a new temporary name in ``folder``, fsynced, with the mode
    ``open()`` gives; the source path is gone afterwards."""
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=suffix)
    os.close(fd)
    try:
        with open(src, "rb+") as f:
            os.fsync(f.fileno())
        os.chmod(src, file_mode())
        os.replace(src, tmp)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def publish_files(folder: Path | str, files: Mapping[str, bytes | Path], *, remove: Iterable[str] = (),
                  command: str | None = None) -> None:
    """Publish ``files`` (relative path -> bytes, or the path of a finished file on the same file system, which
    is moved) into ``folder`` as one set and delete ``remove``; see the module docstring. ``command`` names
    what to rerun in messages (e.g. ``medr2 score RUN``)."""
    folder = Path(folder)
    rels = list(files)
    drop = [r for r in remove if r not in files]
    for rel in [*rels, *drop]:
        _check_rel(rel)
    folder.mkdir(parents=True, exist_ok=True)
    settle(folder)
    subdirs = {(folder / rel).parent for rel in rels}
    for d in subdirs:
        d.mkdir(parents=True, exist_ok=True)
    _sweep(folder, subdirs)
    written: list[Path] = []
    try:
        for rel in rels:
            dest = folder / rel
            data = files[rel]
            if isinstance(data, Path):
                tmp = _move_temp(data, dest.parent, f".{dest.name}.", f"{PENDING_SUFFIX}.tmp")
            else:
                tmp = _write_temp(dest.parent, f".{dest.name}.", f"{PENDING_SUFFIX}.tmp", data)
            pending = folder / _pending_name(rel)
            os.replace(tmp, pending)
            written.append(pending)
        for d in subdirs:
            _fsync_dir(d)
        plan = {"files": rels, "remove": drop, "command": command}
        atomic_write_bytes(folder / JOURNAL, (json.dumps(plan, indent=1) + "\n").encode("utf-8"))
    except BaseException:
        for p in written:
            p.unlink(missing_ok=True)
        raise
    settle(folder)
