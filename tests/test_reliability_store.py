"""The store gate (docs/reliability.md, issue 41 item 3): every command that opens a run store goes through
``Store.open``, which refuses a store of a newer schema version (naming it, never relabelling it), a file that
is not a store (zero bytes, garbage), a store failing SQLite's ``quick_check``; and maps any later SQLite error
to a message naming the file.

- ``test_only_the_store_module_touches_sqlite``: an ``ast`` walk of ``src/medr2``: ``sqlite3`` is imported by
  ``run/store.py`` alone (and the judge's own cache, which is not a run store);
- ``test_every_store_method_is_gated``: every public ``Store`` method maps SQLite errors;
- ``test_damaged_store_at_every_command``: real SQLite files damaged in generated ways (zero bytes, truncated,
  a page header or the file header overwritten, bytes overwritten anywhere, schema text that is not UTF-8, a
  newer schema version) under each
  command that opens a store (eval resume, score, report, merge): exit 2 naming the file, or (bytes changed
  inside a record, which SQLite cannot see) a normal run; never a traceback; a newer store left byte-for-byte.
"""

from __future__ import annotations

import ast
import hashlib
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import medr2
from medr2 import BadInput
from medr2.run.store import SCHEMA_VERSION, STORE_FILE, Store
from tests.cli_inproc import run_cli

SRC = Path(medr2.__file__).parent
SQLITE_USERS = {SRC / "run" / "store.py": "the run store",
                SRC / "scoring" / "judge.py": "the judge's answer cache (a cache it rebuilds, not a run store)",
                SRC / "bench" / "reviews.py": "the bench's append-only reviews table (docs/review.md; its sqlite "
                                              "errors are BadInput naming reviews.sqlite, tests/test_review.py)"}


def test_only_the_store_module_touches_sqlite() -> None:
    bad = []
    for p in SRC.rglob("*.py"):
        if p in SQLITE_USERS:
            continue
        for node in ast.walk(ast.parse(p.read_text("utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            bad += [f"{p}:{node.lineno}: imports {n}" for n in names if n.split(".")[0] == "sqlite3"]
    assert not bad, "open run stores through medr2.run.store.Store.open:\n" + "\n".join(bad)


def test_every_store_method_is_gated() -> None:
    public = [n for n, v in vars(Store).items() if callable(v) and not n.startswith("_") and n not in ("open", "close")]
    assert len(public) > 10
    ungated = [n for n in public if not hasattr(getattr(Store, n), "__wrapped__")]
    assert not ungated


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("store-gate")
    bench = root / "bench"
    assert run_cli("build", "--source", "sample", "--cases", "3", "--out", str(bench), "--workers", "1")[0] == 0
    out = {"bench": bench}
    for i in range(2):
        out[f"shard{i}"] = root / f"shard{i}"
        code, shown = run_cli("eval", "--split", "all", "--bench", str(bench), "--model", "baseline:random", "--out",
                              str(out[f"shard{i}"]), "--shard", f"{i}/2", "--no-progress")
        assert code == 0, shown
    assert run_cli("score", str(out["shard0"]), "--resamples", "0")[0] == 0
    return out


def _pages(path: Path) -> int:
    return max(1, path.stat().st_size // 4096)


Damage = Callable[[Path], None]


@st.composite
def damage(draw: st.DrawFn) -> tuple[str, Damage]:
    kind = draw(st.sampled_from(["zero bytes", "truncated", "file header", "page header", "bytes anywhere",
                                 "text not UTF-8", "newer schema"]))
    frac = draw(st.floats(0.05, 0.95))
    junk = draw(st.binary(min_size=8, max_size=64))
    newer = st.integers(int(SCHEMA_VERSION) + 1, 10**6).map(str)  # a version this medr2 does not read
    version = draw(newer | st.sampled_from(["2b", "x", "99999999999999999999"]))

    def apply(p: Path) -> None:
        data = bytearray(p.read_bytes())
        if kind == "zero bytes":
            data = bytearray()
        elif kind == "truncated":
            data = data[:max(1, int(len(data) * frac))]
        elif kind == "file header":
            data[:len(junk)] = junk
        elif kind == "page header":
            page = 1 + int(frac * (_pages(p) - 1))
            start = page * 4096
            data[start:start + 12] = (junk * 2)[:12]
        elif kind == "text not UTF-8":  # a byte of the schema's text (sqlite_master) that no UTF-8 string holds
            at = data.find(b"CREATE TABLE")
            data[at + int(frac * 12)] = 0x80
        elif kind == "bytes anywhere":
            start = int(len(data) * frac)
            data[start:start + len(junk)] = junk
        else:
            con = sqlite3.connect(p)
            con.execute("UPDATE store_info SET value = ? WHERE key = 'schema_version'", (version,))
            con.commit()
            con.close()
            return
        p.write_bytes(bytes(data))

    return kind, apply


def _eval(runs: dict[str, Path], root: Path) -> tuple[list[str], Path]:
    run = shutil.copytree(runs["shard0"], root / "run")
    return ["eval", "--split", "all",
            "--bench", str(runs["bench"]), "--model", "baseline:random", "--out", str(run), "--shard",
            "0/2", "--no-progress"], run / STORE_FILE


def _score(runs: dict[str, Path], root: Path) -> tuple[list[str], Path]:
    run = shutil.copytree(runs["shard0"], root / "run")
    return ["score", str(run), "--resamples", "0"], run / STORE_FILE


def _report(runs: dict[str, Path], root: Path) -> tuple[list[str], Path]:
    run = shutil.copytree(runs["shard0"], root / "run")
    return ["report", str(run), "--out", str(root / "rep"), "--max-items", "3"], run / STORE_FILE


def _merge(runs: dict[str, Path], root: Path) -> tuple[list[str], Path]:
    a = shutil.copytree(runs["shard0"], root / "a")
    b = shutil.copytree(runs["shard1"], root / "b")
    return ["merge", str(a), str(b), "--out", str(root / "merged")], b / STORE_FILE


COMMANDS = {"eval (resume)": _eval, "score": _score, "report": _report, "merge (a shard's store)": _merge}


@pytest.mark.filterwarnings("ignore")
@settings(max_examples=24, deadline=None, suppress_health_check=list(HealthCheck))
@given(command=st.sampled_from(sorted(COMMANDS)), hurt=damage())
def test_damaged_store_at_every_command(runs: dict[str, Path], command: str, hurt: tuple[str, Damage]) -> None:
    kind, apply = hurt
    with tempfile.TemporaryDirectory() as d:
        args, store = COMMANDS[command](runs, Path(d))
        apply(store)
        before = hashlib.sha256(store.read_bytes()).hexdigest()
        code, shown = run_cli(*args)
        flat = shown.replace("\n", "")
        if kind == "bytes anywhere":  # bytes changed inside a record are data SQLite cannot tell from any other
            assert code == 0 or (code == 2 and str(store) in flat), (command, kind, shown[-2000:])
            return
        if kind == "zero bytes" and command == "eval (resume)":  # a store without tables holds nothing to lose:
            assert code == 0, shown[-2000:]                     # the writer initialises it and asks again
            return
        assert code == 2 and str(store) in flat, (command, kind, shown[-2000:])
        if kind == "newer schema":
            assert "newer than this medr2 reads" in flat
            assert hashlib.sha256(store.read_bytes()).hexdigest() == before  # never relabelled or written


def test_damage_found_while_reading_names_the_file(tmp_path: Path) -> None:
    """A page damaged after the store was opened: the error raised mid-read names the file (the mapping of
    every method, not only the checks on open)."""
    with Store.open(tmp_path, write=True) as s:
        from medr2 import Prediction

        s.put_many([])
        for i in range(300):
            s.put(Prediction(model_key="m", item_id=f"i{i}", mode="m", request_hash=f"h{i}", raw="x" * 500,
                             latency_s=0.0, status="ok"))
    store = Store.open(tmp_path)
    data = bytearray((tmp_path / STORE_FILE).read_bytes())
    for page in range(2, len(data) // 4096):
        data[page * 4096:page * 4096 + 8] = b"\xff" * 8
    (tmp_path / STORE_FILE).write_bytes(bytes(data))
    store._conn.execute("PRAGMA shrink_memory")  # drop the pages the open's quick_check left in the cache
    with pytest.raises(BadInput) as e:
        list(store.iter_predictions())
    store.close()
    assert e.value.file == str(tmp_path / STORE_FILE)
