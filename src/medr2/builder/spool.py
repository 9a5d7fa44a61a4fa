"""Scratch files of pickled records (Cases, or the clean Items of one case), read back by index.

The builder realizes cases in whatever order suits the workers, but needs them twice afterwards in
plan order (pools and splits, then drafting), and with ``--variants`` a third time with their clean
items. Keeping 40,000 Cases (or a million Items) in memory would cost hundreds of MB (GBs); a spool
keeps only an offset per key and lets the page cache do the rest.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import Generic, TypeVar

from medr2.records import Case, Item

T = TypeVar("T")
SPOOL_GLOB = ".*.spool"  # what _prepare_out removes after a killed build


class Spool(Generic[T]):
    """Append-only pickles keyed by an int, in one unnamed scratch file in ``folder``."""

    prefix = ".spool."

    def __init__(self, folder: Path) -> None:
        fd, name = tempfile.mkstemp(dir=folder, prefix=self.prefix, suffix=".spool")
        self.path = Path(name)
        self._f = os.fdopen(fd, "w+b")
        # POSIX: the open file lives on unnamed, so a killed build leaves no scratch file behind
        # (where an open file cannot be removed, close() removes it)
        with contextlib.suppress(OSError):
            self.path.unlink()
        self._where: dict[int, tuple[int, int]] = {}
        self._end = 0

    def put(self, index: int, value: T) -> None:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        self._f.seek(self._end)
        self._f.write(data)
        self._where[index] = (self._end, len(data))
        self._end += len(data)

    def __contains__(self, index: int) -> bool:
        return index in self._where

    def get(self, index: int) -> T:
        offset, size = self._where[index]
        self._f.seek(offset)
        value: T = pickle.loads(self._f.read(size))
        return value

    def close(self) -> None:
        self._f.close()
        self.path.unlink(missing_ok=True)

    def __enter__(self) -> Spool[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CaseSpool(Spool[Case]):
    """Realized Cases by plan index."""

    prefix = ".cases."

    def __enter__(self) -> CaseSpool:
        return self


class ItemSpool(Spool[list[Item]]):
    """The clean Items of each case, by the case's position among the accepted cases."""

    prefix = ".items."

    def __enter__(self) -> ItemSpool:
        return self
