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

:func:`staged` is how a command that writes many or large files (``medr2 convert``, ``medr2 export``) uses it:
it writes them into a staging folder inside its output folder, and on success every file there is published as
one set (a journal, then each file renamed from the staging folder into place); a failure removes the staging
folder, a kill before the journal leaves only it (hidden, not output: the next command into the folder removes
it; :func:`medr2.outdir.contents` does not count it), and one after it leaves a journal :func:`settle` completes.

A file too large to hold as bytes (``medr2 score``'s ``scores.parquet``) is given to :func:`publish_files` as the
path of a file the command wrote itself on the same file system (inside ``folder``, e.g. a spill folder that
its next run removes if it was killed): it is fsynced and moved into its pending name, then published as the
others.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from medr2 import jsonsafe
from medr2.errors import WorkFailed

JOURNAL = ".medr2-publish.json"
PENDING_SUFFIX = ".medr2-pending"
STAGING = ".medr2-staging"  # :func:`staged`'s folder inside the output folder

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
        from_stage = bool(plan.get("staged"))  # the set waits in the staging folder (:func:`staged`)
        for rel in [*files, *remove]:
            _check_rel(rel)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise WorkFailed(f"{journal}: unreadable publish journal ({e}); rerun the command that writes "
                         f"{folder}") from e
    try:
        parents = {folder}
        for rel in files:
            pending = folder / STAGING / rel if from_stage else folder / _pending_name(rel)
            if pending.exists():
                dest = folder / rel
                if dest.parent not in parents:
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    parents.add(dest.parent)
                os.replace(pending, dest)
        for rel in remove:
            (folder / rel).unlink(missing_ok=True)
        for d in parents:
            _fsync_dir(d)
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


@contextmanager
def staged(out: Path | str, command: str, *, manifest: Mapping[str, bytes] | None = None) -> Iterator[Path]:
    """A staging folder inside ``out`` (:data:`STAGING`) to write a command's files into; on success every file in
    it, and ``manifest`` (relative path -> bytes, filled in by the block before it ends), is published into ``out``
    as one set (same relative paths): each is fsynced where it is, a journal naming the set is written, and the
    files are renamed from the staging folder into place (:func:`settle`: a kill after the journal is completed by
    the next reader or writer). On failure the staging folder is removed; a kill before the journal leaves only
    the staging folder, which the next command into ``out`` removes. ``command`` names what to rerun."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    settle(out)
    stage = out / STAGING
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir()
    try:
        yield stage
        for rel, data in (manifest or {}).items():
            _check_rel(rel)
            (stage / rel).parent.mkdir(parents=True, exist_ok=True)
            (stage / rel).write_bytes(data)
        _publish_stage(out, stage, command)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _publish_stage(out: Path, stage: Path, command: str) -> None:
    """Every file of ``stage`` fsynced, then the journal, then the renames into ``out`` (:func:`settle`)."""
    rels: list[str] = []
    dirs = {stage}
    for p in sorted(stage.rglob("*")):
        if p.is_dir():
            dirs.add(p)
        elif p.is_file():
            with open(p, "rb") as f:  # read access is enough to fsync (a hard link to a read-only image)
                os.fsync(f.fileno())
            rels.append(p.relative_to(stage).as_posix())
    for d in dirs:
        _fsync_dir(d)
    plan = {"files": rels, "remove": [], "command": command, "staged": True}
    atomic_write_bytes(out / JOURNAL, (json.dumps(plan, indent=1) + "\n").encode("utf-8"))
    settle(out)
