"""The folder ``medr2 score`` spills its chunks of cases to (``RUN/.score-chunks-*``), and the removal of the
ones a killed ``medr2 score`` left.

A scorer holds an exclusive ``flock`` on the folder's ``lock`` file for as long as it uses the folder; the
operating system drops the lock when the process ends, however it ends. A later ``medr2 score`` of the same run
removes each ``.score-chunks-*`` folder whose lock it can take (its owner is gone) and leaves the others (a
scorer still running). A folder without a ``lock`` file (made by a scorer before this module, or one killed
before it locked) is left alone; so is every folder where ``flock`` is not available (non-POSIX systems).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from types import TracebackType
from typing import IO, Any

try:
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX
    fcntl = None  # type: ignore[assignment]

SPILL_PREFIX = ".score-chunks-"
LOCK_NAME = "lock"


def _try_lock(f: IO[Any]) -> bool:
    """Take the exclusive lock without waiting: False when another process holds it."""
    if fcntl is None:  # pragma: no cover - non-POSIX
        return False
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def remove_stale(run_dir: Path) -> list[Path]:
    """Remove the spill folders in ``run_dir`` whose scorer is gone (their lock is free); the removed ones."""
    removed: list[Path] = []
    for folder in sorted(run_dir.glob(SPILL_PREFIX + "*")):
        lock = folder / LOCK_NAME
        if not folder.is_dir() or not lock.is_file():
            continue
        try:
            f = lock.open("a+")
        except OSError:
            continue
        try:
            if _try_lock(f):
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
        finally:
            f.close()
    return removed


class SpillFolder:
    """``with SpillFolder(run_dir) as folder``: a new ``.score-chunks-*`` folder in ``run_dir``, locked while
    in use and removed at the end; stale folders of killed scorers are removed first."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.path: Path | None = None
        self._lock: IO[Any] | None = None

    def __enter__(self) -> Path:
        remove_stale(self.run_dir)
        path = Path(tempfile.mkdtemp(prefix=SPILL_PREFIX, dir=self.run_dir))
        # locked under another name, then renamed: a scorer removing stale folders never sees an unlocked ``lock``
        making = path / (LOCK_NAME + ".new")
        f = making.open("a+")
        _try_lock(f)
        os.replace(making, path / LOCK_NAME)
        self.path, self._lock = path, f
        return path

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)
        if self._lock is not None:
            self._lock.close()
