"""A compact, exact set of item ids for the bench writer's duplicate check.

Every id medr2 builds is 16 lowercase hex digits (``records.stable_hash``). Such ids are kept as 8-byte
integers in sorted numpy runs, merged as they grow (a log-structured set: about 8 bytes per id, against
about 110 for a ``set`` of ``str``, so ten million ids take 80 MB, not 1.1 GB); any other id is kept
in a plain set. The two kinds never collide, so no id is ever reported as a duplicate by mistake.
Ids are checked a block at a time (vectorised).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

_HEX = frozenset("0123456789abcdef")


def hex_ints(ids: Sequence[str]) -> np.ndarray | None:
    """The ids as uint64 if every one is 16 lowercase hex digits, else None."""
    joined = "".join(ids)
    if len(joined) != 16 * len(ids) or any(len(x) != 16 for x in ids) or not _HEX.issuperset(joined):
        return None
    return np.frombuffer(bytes.fromhex(joined), dtype=">u8").astype(np.uint64)


_NIBBLE = np.full(256, 255, dtype=np.uint8)
_NIBBLE[np.frombuffer(b"0123456789abcdef", dtype=np.uint8)] = np.arange(16, dtype=np.uint8)


def hex_ids(arr: pa.Array) -> np.ndarray | None:
    """The ids of an Arrow string array as uint64 (as :func:`hex_ints`), vectorised; None if any is null or not
    16 lowercase hex digits."""
    if arr.null_count or not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return None
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    width = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    _, offsets_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=width, count=n + 1, offset=arr.offset * np.dtype(width).itemsize)
    if not (np.diff(offsets) == 16).all():
        return None
    nib = _NIBBLE[np.frombuffer(data_buf, dtype=np.uint8, count=16 * n, offset=int(offsets[0]))]
    if (nib == 255).any():
        return None
    pairs = nib.reshape(n * 8, 2)
    return ((pairs[:, 0] << 4) | pairs[:, 1]).view(">u8").astype(np.uint64)


class IdSet:
    def __init__(self) -> None:
        self._runs: list[np.ndarray] = []  # sorted, disjoint; sizes fall along the list
        self._other: set[str] = set()

    def __len__(self) -> int:
        return sum(len(r) for r in self._runs) + len(self._other)

    def __contains__(self, item_id: str) -> bool:
        ints = hex_ints([item_id])
        if ints is None:
            return item_id in self._other
        return bool(self._seen(ints)[0])

    def add_all(self, ids: Sequence[str]) -> int | None:
        """Add ``ids`` in order up to the first one already present (in the set or earlier in ``ids``);
        return its position, or None when all were new."""
        ints = hex_ints(ids)
        if ints is None:  # not all hex ids: one at a time
            for k, x in enumerate(ids):
                if hex_ints([x]) is not None:
                    if self.add_all([x]) is not None:
                        return k
                elif x in self._other:
                    return k
                else:
                    self._other.add(x)
            return None
        return self.add_ints(ints)

    def add_ints(self, ints: np.ndarray) -> int | None:
        """:meth:`add_all` for hex ids already as uint64 (:func:`hex_ids`)."""
        dup = self._seen(ints)
        order = np.argsort(ints, kind="stable")
        s = ints[order]
        repeat = np.zeros(len(ints), dtype=bool)
        repeat[order[1:][s[1:] == s[:-1]]] = True  # a later copy of an id within the block
        bad = np.flatnonzero(dup | repeat)
        first = int(bad[0]) if len(bad) else None
        keep = ints if first is None else ints[:first]
        if len(keep):
            self._push(np.sort(keep))
        return first

    def _seen(self, ints: np.ndarray) -> np.ndarray:
        hit = np.zeros(len(ints), dtype=bool)
        for run in self._runs:
            idx = np.minimum(np.searchsorted(run, ints), len(run) - 1)
            hit |= run[idx] == ints
        return hit

    def _push(self, run: np.ndarray) -> None:
        self._runs.append(run)
        while len(self._runs) >= 2 and len(self._runs[-2]) <= 2 * len(self._runs[-1]):
            b, a = self._runs.pop(), self._runs.pop()
            self._runs.append(np.sort(np.concatenate([a, b]), kind="stable"))

    def contains_ints(self, ints: np.ndarray) -> np.ndarray:
        """Membership of hex ids already as uint64 (a bool array)."""
        return self._seen(ints)

    def contains_all(self, ids: Sequence[str]) -> list[bool]:
        """Membership of each of ``ids`` (vectorised for hex ids)."""
        ints = hex_ints(ids)
        if ints is None:
            return [x in self for x in ids]
        return [bool(v) for v in self._seen(ints)]
