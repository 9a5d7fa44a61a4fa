"""A scratch file of pickled Cases, read back by plan index.

The builder realizes cases in whatever order suits the workers, but needs them twice afterwards in
plan order (pools and splits, then drafting). Keeping 40,000 Cases in memory would cost hundreds of
MB; the spool keeps only an offset per case and lets the page cache do the rest.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import tempfile
from pathlib import Path

from medr2.records import Case


class CaseSpool:
    def __init__(self, folder: Path) -> None:
        fd, name = tempfile.mkstemp(dir=folder, prefix=".cases.", suffix=".spool")
        self.path = Path(name)
        self._f = os.fdopen(fd, "w+b")
        # POSIX: the open file lives on unnamed, so a killed build leaves no scratch file behind
        # (where an open file cannot be removed, close() removes it)
        with contextlib.suppress(OSError):
            self.path.unlink()
        self._where: dict[int, tuple[int, int]] = {}
        self._end = 0

    def put(self, index: int, case: Case) -> None:
        data = pickle.dumps(case, protocol=pickle.HIGHEST_PROTOCOL)
        self._f.seek(self._end)
        self._f.write(data)
        self._where[index] = (self._end, len(data))
        self._end += len(data)

    def __contains__(self, index: int) -> bool:
        return index in self._where

    def get(self, index: int) -> Case:
        offset, size = self._where[index]
        self._f.seek(offset)
        case: Case = pickle.loads(self._f.read(size))
        return case

    def close(self) -> None:
        self._f.close()
        self.path.unlink(missing_ok=True)

    def __enter__(self) -> CaseSpool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
