"""The bench writer's compact id set: exact membership for hex and other ids, first duplicate found."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from medr2 import BadInput
from medr2.bench.format import BenchWriter, load_bench
from medr2.bench.idset import IdSet
from medr2.builder.pipeline import build_bench
from tests.build_fixtures import BuildTestSource


def _ids(n: int, salt: str = "") -> list[str]:
    return [hashlib.sha256(f"{salt}{i}".encode()).hexdigest()[:16] for i in range(n)]


def test_idset_is_exact_across_merged_runs() -> None:
    s, ids = IdSet(), _ids(20_000)
    for k in range(0, len(ids), 97):
        assert s.add_all(ids[k:k + 97]) is None
    assert len(s) == 20_000 and all(x in s for x in ids[::37])
    assert not any(x in s for x in _ids(2_000, "other"))
    assert s.add_all([*_ids(3, "new"), ids[123]]) == 3  # the first repeat, after three new ids
    assert all(x in s for x in _ids(3, "new"))
    assert s.add_all(["ffffffffffffffff", "0000000000000000", "ffffffffffffffff"]) == 2


def test_idset_keeps_other_ids_apart() -> None:
    s = IdSet()
    assert s.add_all(["i1", "ABCDEF0123456789", "abcdef0123456789"]) is None
    assert s.add_all(["i2", "i1"]) == 1 and "i2" in s and "i3" not in s
    assert s.add_all(["abcdef0123456789"]) == 0 and s.add_all(["ABCDEF0123456789"]) == 0


def test_writer_reports_the_duplicate_item(tmp_path: Path) -> None:
    root = tmp_path
    build_bench(BuildTestSource(None), root / "b", seed=0, n_cases=3, workers=1)
    items = load_bench(root / "b").items
    with pytest.raises(BadInput) as e, BenchWriter(root / "w") as w:
        w.add_items([*items, items[2]])
    assert e.value.record == items[2].item_id and e.value.field == "item_id"


def test_idset_contains_all() -> None:
    """Membership of a block at once (the bench validator's parent check), hex and other ids alike."""
    s = IdSet()
    ids = _ids(5_000, "a")
    s.add_all(ids[:2_500])
    s.add_all(["x1"])
    assert s.contains_all([*ids[2_495:2_505], "x1", "x2"]) == [True] * 5 + [False] * 5 + [True, False]
    assert IdSet().contains_all(ids[:3]) == [False] * 3


def test_hex_ids_of_an_arrow_column() -> None:
    """The vectorised conversion the column-wise check uses gives the integers of ``add_all`` (sliced arrays,
    large strings) and refuses what ``add_all`` keeps as text (upper case, another length, a null)."""
    import numpy as np
    import pyarrow as pa

    from medr2.bench.idset import hex_ids, hex_ints

    ids = _ids(300, "h")
    for arr in (pa.array(["x", *ids]).slice(1), pa.array(ids, type=pa.large_string())):
        got = hex_ids(arr)
        assert got is not None and np.array_equal(got, hex_ints(ids))
    for odd in ("ABCDEF0123456789", "abc", None, "abcdef012345678g"):
        assert hex_ids(pa.array([ids[0], odd], type=pa.string())) is None
    s = IdSet()
    assert s.add_ints(hex_ints(ids[:10])) is None and s.add_all(ids[5:6]) == 0  # one set, either way in
    assert list(s.contains_ints(hex_ints(ids[8:12]))) == [True, True, False, False]
