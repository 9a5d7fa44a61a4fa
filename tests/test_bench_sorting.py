"""The one out-of-core sort (``medr2.bench.sorting.Sorter``, DuckDB): any rows, added in any pieces, come back
as Python's stable sort by the keys (each ascending, nulls last) would give them, in batches and groups of any
size; a sort larger than its memory limit spills inside the caller's folder, and the folder is left as it was
after success and after an error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from medr2 import WorkFailed
from medr2.bench import sorting
from medr2.bench.sorting import Sorter, quoted

SCHEMA = pa.schema([("k", pa.int64()), ("s", pa.string()), ("b", pa.bool_()), ("v", pa.int64())])
ROWS = st.lists(st.fixed_dictionaries({
    "k": st.none() | st.integers(-3, 3),
    "s": st.none() | st.sampled_from(["", "a", "B", "é", "z", "\u00e9a", "\U0001f600"]),
    "b": st.none() | st.booleans(),
}), max_size=60)


def _stable(rows: list[dict[str, Any]], keys: list[str]) -> list[dict[str, Any]]:
    """Python's stable sort, each key ascending with nulls last (strings by code point: UTF-8 byte order)."""
    return sorted(rows, key=lambda r: tuple((r[k] is None, r[k] if r[k] is not None else 0) for k in keys))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=ROWS, keys=st.permutations(["k", "s", "b"]).flatmap(lambda p: st.integers(1, 3).map(lambda n: p[:n])),
       piece=st.integers(1, 9), batch=st.integers(1, 9))
def test_rows_come_back_as_a_stable_sort(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         rows: list[dict[str, Any]], keys: list[str], piece: int, batch: int) -> None:
    rows = [{**r, "v": n} for n, r in enumerate(rows)]
    monkeypatch.setattr(sorting, "BATCH_ROWS", batch)
    with Sorter(tmp_path, [quoted(k) for k in keys], schema=SCHEMA) as s:
        for start in range(0, len(rows), piece):
            s.add(pa.Table.from_pylist(rows[start:start + piece], SCHEMA))
        got = [r for b in s.batches() for r in b.to_pylist()]
        groups = [t.to_pylist() for t in s.groups(keys[:1])]
        assert all(b.schema.equals(SCHEMA) for b in s.batches())
    want = _stable(rows, keys)
    assert got == want  # equal keys: in the order added (v ascending)
    assert [r for g in groups for r in g] == want
    assert all(len({r[keys[0]] for r in g}) == 1 for g in groups)  # one key value per group, each value whole
    assert len({g[0][keys[0]] for g in groups}) == len(groups)
    assert not list(tmp_path.iterdir())


def _wide(n: int, width: int, rng: np.random.Generator) -> pa.Array:
    """``n`` random binary values of ``width`` bytes each (built without Python objects)."""
    offsets = pa.py_buffer((np.arange(n + 1, dtype=np.int32) * width).tobytes())
    return pa.Array.from_buffers(pa.binary(), n, [None, offsets, pa.py_buffer(rng.bytes(n * width))])


def test_a_sort_larger_than_its_memory_spills_in_the_callers_folder(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sorting, "SORT_MEMORY", "64MiB")
    rng = np.random.default_rng(0)
    n, pieces = 20_000, 20  # 20 x 20,000 rows of 200 B: about 80 MB, above the limit
    with Sorter(tmp_path, ['"k"']) as s:
        for p in range(pieces):
            s.add(pa.table({"k": rng.integers(0, 50, n), "v": np.arange(p * n, (p + 1) * n), "w": _wide(n, 200, rng)}))
        spilled = [f for f in tmp_path.rglob("*") if f.is_file()]
        assert spilled and all(f.parent.parent == s.folder and s.folder.parent == tmp_path for f in spilled)
        prev = (-1, -1)
        for b in s.batches():
            k, v = b.column("k").to_numpy(), b.column("v").to_numpy()
            assert (np.lexsort((v, k)) == np.arange(len(k))).all() and (k[0], v[0]) > prev
            prev = (k[-1], v[-1])
    assert not list(tmp_path.iterdir())


def test_a_sort_short_of_memory_is_medr2s_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Below its floor (rows of 1 kB need more than 16 MiB) the engine's out-of-memory is a WorkFailed naming
    the limit; the folder is left as it was."""
    monkeypatch.setattr(sorting, "SORT_MEMORY", "16MiB")
    rng = np.random.default_rng(0)
    with pytest.raises(WorkFailed, match="SORT_MEMORY"), Sorter(tmp_path, ['"k"']) as s:
        for _ in range(4):
            s.add(pa.table({"k": rng.integers(0, 50, 10_000), "w": _wide(10_000, 1000, rng)}))
        list(s.batches())
    assert not list(tmp_path.iterdir())


def test_an_error_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "kept").write_text("x")
    with pytest.raises(RuntimeError, match="stop"), Sorter(tmp_path, ['"k"']) as s:
        s.add(pa.table({"k": [2, 1]}))
        next(s.batches())
        raise RuntimeError("stop")
    assert [p.name for p in tmp_path.iterdir()] == ["kept"]


def test_nothing_added_reads_back_nothing(tmp_path: Path) -> None:
    with Sorter(tmp_path, ['"k"'], schema=SCHEMA) as s:
        s.add(SCHEMA.empty_table())
        assert list(s.batches()) == [] and list(s.groups(["k"])) == [] and len(s) == 0
    assert not list(tmp_path.iterdir())
