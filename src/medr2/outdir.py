"""Output folders (docs/reliability.md): one output-path check and one writer lock for every command that
writes a folder.

- :func:`check_out`: ``--out`` (or the folder a command writes into) that exists and is not a folder — a
  regular file, a device — is refused with exit 2 naming it, before anything is read or written.
- :func:`hold`: an exclusive ``flock`` on ``FOLDER/.lock`` for as long as the command writes there. A second
  process wanting the same folder is refused at once with exit 2 (:class:`~medr2.errors.BadInput`: the folder
  is the user's choice, and waiting silently behind a long run would look like a hang); it names the folder and
  what to do. The lock is re-entrant within a process (``eval``'s store takes the same lock its command holds),
  and its file is removed when released (the inode is checked after locking, so a process that opened a file
  removed meanwhile locks the new one instead).
- :func:`check_out_file` / :func:`writes_file`: the same check for the commands writing one file (an existing
  folder, or a path under a file, is refused).
- :func:`writes`: the decorator every :mod:`medr2.api` function that writes a folder carries (it names the
  parameter holding the folder); ``tests/test_reliability_outdir.py`` lists every command that writes and runs
  each against a lock held by another real process.

``score`` writes into a run folder that an ``eval`` may still be appending to (scoring a run in progress is
supported), so it holds ``RUN/.lock-score`` instead of ``RUN/.lock``.
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

from medr2.atomic import STAGING
from medr2.errors import BadInput

try:
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX
    fcntl = None  # type: ignore[assignment]

LOCK = ".lock"
SCORE_LOCK = ".lock-score"

F = TypeVar("F", bound=Callable[..., Any])

_HELD: dict[Path, list[Any]] = {}  # lock file -> [open file, depth] held by this process
_GUARD = threading.Lock()


def _parent_not_a_folder(p: Path) -> Path | None:
    """The nearest existing ancestor of ``p`` if it is not a folder (``--out FILE/sub``), else None."""
    for a in p.absolute().parents:
        if a.exists():
            return None if a.is_dir() else a
    return None


def _check_path(path: Path | str, field: str, wrong_kind: Callable[[Path], bool], wrong: str) -> Path:
    """``path`` as a Path, refused (BadInput, exit 2) where ``wrong_kind`` holds (message ``wrong``) or it lies
    under a file: the one output-path check behind :func:`check_out` and :func:`check_out_file`."""
    p = Path(path)
    try:
        bad_kind = p.exists() and wrong_kind(p)
        under = _parent_not_a_folder(p)
    except (OSError, ValueError) as e:
        raise BadInput(f"unusable output path: {e}", file=str(path)[:300], field=field) from None
    if bad_kind:
        raise BadInput(wrong, file=str(p), field=field)
    if under is not None:
        raise BadInput(f"the output path lies under {under}, which is a file, not a folder", file=str(p),
                       field=field)
    return p


def check_out(folder: Path | str, field: str = "--out") -> Path:
    """``folder`` as a Path, refused (BadInput, exit 2) if it exists and is not a folder, or lies under a file."""
    return _check_path(folder, field, lambda p: not p.is_dir(), "the output path is an existing file, not a "
                       "folder; choose a folder (new or one this command wrote)")


def check_out_file(path: Path | str, field: str = "--out") -> Path:
    """The output check of a command writing one file (``contact-sheet``, ``variants-sheet``): ``path`` as a
    Path, refused (BadInput, exit 2) if it is an existing folder (or not a regular file) or lies under a file."""
    return _check_path(path, field, lambda p: not p.is_file(), "the output path is an existing folder (or not a "
                       "regular file); name the file to write")


def contents(folder: Path) -> list[Path]:
    """The entries of ``folder`` other than writer locks and the staging folder a killed command left
    (:data:`medr2.atomic.STAGING`: never output; the next command into the folder removes it): what "an empty
    output folder" looks at."""
    return [p for p in folder.iterdir() if p.name not in (LOCK, SCORE_LOCK, STAGING)]


def _busy(path: Path, folder: Path, field: str) -> BadInput:
    return BadInput(f"another process is writing this folder (a medr2 command holds {path.name}); wait for it to "
                    "finish, or choose another folder", file=str(folder), field=field)


def _open_locked(path: Path, folder: Path, field: str) -> Any:
    while True:
        f = path.open("a+")
        if fcntl is None:  # pragma: no cover
            return f
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            raise _busy(path, folder, field) from None
        try:
            same = os.fstat(f.fileno()).st_ino == path.stat().st_ino
        except FileNotFoundError:
            same = False
        if same:
            return f
        f.close()  # the file was removed by the holder that released it: lock the one there now


@contextmanager
def hold(folder: Path | str, *, name: str = LOCK, field: str = "--out") -> Iterator[Path]:
    """Hold the writer lock of ``folder`` (created if missing) while the block runs."""
    folder = check_out(folder, field)
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    path = (folder / name).resolve()
    with _GUARD:
        held = _HELD.get(path)
        if held is not None:
            held[1] += 1
        else:
            _HELD[path] = [_open_locked(path, folder, field), 1]
    try:
        yield folder
    finally:
        with _GUARD:
            entry = _HELD[path]
            entry[1] -= 1
            if entry[1] == 0:
                del _HELD[path]
                with suppress(OSError):
                    path.unlink()  # while still locked: a waiter that opened it re-checks the inode
                entry[0].close()
                if created and not contents(folder):  # a command that failed before writing leaves nothing
                    with suppress(OSError):
                        folder.rmdir()


def writes_file(param: str, *, field: str = "--out") -> Callable[[F], F]:
    """Decorator of a :mod:`medr2.api` function writing one file (given as ``param``): :func:`check_out_file`
    before the call (the file itself is written atomically by the function)."""

    def deco(fn: F) -> F:
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            check_out_file(sig.bind(*args, **kwargs).arguments[param], field)
            return fn(*args, **kwargs)

        call.writes_file = param  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]

    return deco


def writes(param: str, *, name: str = LOCK, field: str = "--out", create: bool = True,
           lock: bool = True) -> Callable[[F], F]:
    """Decorator: the call holds the writer lock of the folder given as ``param`` (after :func:`check_out`).
    ``create=False``: a folder that does not exist yet is only checked. ``lock=False``: only checked; the
    command takes the same lock itself after its own checks (``eval``: its run store, ``Store.open``)."""

    def deco(fn: F) -> F:
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            folder = check_out(sig.bind(*args, **kwargs).arguments[param], field)
            if not lock or (not create and not folder.is_dir()):
                return fn(*args, **kwargs)
            with hold(folder, name=name, field=field):
                return fn(*args, **kwargs)

        call.writes_folder = param  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]

    return deco
