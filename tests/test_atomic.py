"""``medr2.atomic.publish_files`` with files given as bytes and as finished files on disk (moved into place)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from medr2.atomic import JOURNAL, PENDING_SUFFIX, file_mode, publish_files


def test_a_finished_file_is_moved_into_place_with_the_bytes_beside_it(tmp_path: Path) -> None:
    out = tmp_path / "run"
    (out / "spill").mkdir(parents=True)
    big = out / "spill" / "scores.parquet"
    big.write_bytes(b"streamed" * 1000)
    (out / "old.jsonl").write_text("old")
    publish_files(out, {"scores.parquet": big, "metrics.json": b"{}\n"}, remove=("old.jsonl",), command="t")
    assert (out / "scores.parquet").read_bytes() == b"streamed" * 1000
    assert (out / "metrics.json").read_bytes() == b"{}\n"
    assert not big.exists() and not (out / "old.jsonl").exists()
    assert not (out / JOURNAL).exists() and not list(out.rglob(f"*{PENDING_SUFFIX}*"))
    assert stat.S_IMODE(os.stat(out / "scores.parquet").st_mode) == file_mode()


def test_a_failed_publish_of_a_file_leaves_the_old_set(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    publish_files(out, {"scores.parquet": b"old", "metrics.json": b"old"})
    with pytest.raises(OSError):
        publish_files(out, {"metrics.json": b"new", "scores.parquet": tmp_path / "missing.parquet"})
    assert (out / "scores.parquet").read_bytes() == b"old" and (out / "metrics.json").read_bytes() == b"old"
    assert not (out / JOURNAL).exists() and not list(out.rglob(f"*{PENDING_SUFFIX}*"))
