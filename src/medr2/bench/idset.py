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

_HEX = frozenset("0123456789abcdef")


def _as_ints(ids: Sequence[str]) -> np.ndarray | None:
    """The ids as uint64 if every one is 16 lowercase hex digits, else None."""
    joined = "".join(ids)
    if len(joined) != 16 * len(ids) or any(len(x) != 16 for x in ids) or not _HEX.issuperset(joined):
        return None
    return np.frombuffer(bytes.fromhex(joined), dtype=">u8").astype(np.uint64)


class IdSet:
    def __init__(self) -> None:
        self._runs: list[np.ndarray] = []  # sorted, disjoint; sizes fall along the list
        self._other: set[str] = set()

    def __len__(self) -> int:
        return sum(len(r) for r in self._runs) + len(self._other)

    def __contains__(self, item_id: str) -> bool:
        ints = _as_ints([item_id])
        if ints is None:
            return item_id in self._other
        return bool(self._seen(ints)[0])

    def add_all(self, ids: Sequence[str]) -> int | None:
        """Add ``ids`` in order up to the first one already present (in the set or earlier in ``ids``);
        return its position, or None when all were new."""
        ints = _as_ints(ids)
        if ints is None:  # not all hex ids: one at a time
            for k, x in enumerate(ids):
                if _as_ints([x]) is not None:
                    if self.add_all([x]) is not None:
                        return k
                elif x in self._other:
                    return k
                else:
                    self._other.add(x)
            return None
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

    def contains_all(self, ids: Sequence[str]) -> list[bool]:
        """Membership of each of ``ids`` (vectorised for hex ids)."""
        ints = _as_ints(ids)
        if ints is None:
            return [x in self for x in ids]
        return [bool(v) for v in self._seen(ints)]
