"""One writer lock per output folder and one output-path check (docs/reliability.md, issue 41 items 4 and 7):
:mod:`medr2.outdir`.

- ``test_every_api_function_writing_a_folder_is_marked``: every public function of :mod:`medr2.api` with an
  ``out`` parameter (or perturb's/materialise's ``bench``, score's ``run``) carries :func:`medr2.outdir.writes`,
  or :func:`medr2.outdir.writes_file` for the two whose ``out`` is one PNG file;
- ``test_second_writer_is_refused_for_every_command``: for every command kind that writes a folder (build,
  import, perturb, materialise, eval, score, report, export, convert, merge, finetune, tiny-vlm, vllm-export,
  demo) a second, real process holds that folder's lock while the command runs: exit 2 with the message, and
  the folder is left as it was;
- ``test_out_that_is_a_file_is_exit_2_for_every_command``: ``--out`` naming an existing regular file.
"""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from medr2 import api
from medr2.outdir import LOCK, SCORE_LOCK
from tests.cli_inproc import run_cli

FOLDER_PARAMS = ("out", "bench", "run")


def test_every_api_function_writing_a_folder_is_marked() -> None:
    fns = {n: f for n, f in vars(api).items() if inspect.isfunction(f) and not n.startswith("_")
           and f.__module__ == "medr2.api"}
    assert len(fns) > 15
    writers = {n for n, f in fns.items() if "out" in inspect.signature(f).parameters}
    unmarked = [n for n in writers if not hasattr(fns[n], "writes_folder") and not hasattr(fns[n], "writes_file")]
    assert not unmarked, f"api functions writing without medr2.outdir.writes / writes_file: {unmarked}"
    assert {n for n in writers if hasattr(fns[n], "writes_file")} == {"variants_sheet", "contact_sheet"}  # one PNG
    for n in ("add_variants", "materialise", "score"):  # they write into the folder they are given
        assert hasattr(fns[n], "writes_folder"), n


@contextmanager
def _held_by_another_process(folder: Path, name: str) -> Iterator[None]:
    """A real second process holding ``folder``'s writer lock (``medr2.outdir.hold``) until the block ends."""
    code = ("import sys, time\nfrom medr2.outdir import hold\n"
            f"with hold(sys.argv[1], name={name!r}):\n    print('held', flush=True)\n    sys.stdin.read()\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    p = subprocess.Popen([sys.executable, "-c", code, str(folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, env=env)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "held"
        yield
    finally:
        assert p.stdin is not None
        p.stdin.close()
        p.wait(timeout=30)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("outdir")
    bench, run = root / "bench", root / "run"
    assert run_cli("build", "--source", "sample", "--cases", "3", "--out", str(bench), "--workers", "1")[0] == 0
    assert run_cli("eval", "--split", "all", "--bench", str(bench), "--model", "baseline:random", "--out", str(run),
                   "--no-progress")[0] == 0
    assert run_cli("score", str(run), "--resamples", "0")[0] == 0
    rad = root / "rad"
    rad.mkdir()
    (rad / "VQA_RAD Dataset Public.json").write_text("[]")
    return {"bench": bench, "run": run, "rad": rad, "root": root}


# command kind -> (args for an output folder OUT, the folder the command writes, its lock name)
Args = Callable[[dict[str, Path], Path], tuple[list[str], Path, str]]
COMMANDS: dict[str, Args] = {
    "build": lambda i, o: (["build", "--source", "sample", "--cases", "2", "--out", str(o)], o, LOCK),
    "import": lambda i, o: (["import", "vqa-rad", str(i["rad"]), "--out", str(o)], o, LOCK),
    "perturb": lambda i, o: (["perturb", str(o), "--variants", "T1"], o, LOCK),
    "materialise": lambda i, o: (["materialise", str(o)], o, LOCK),
    "eval": lambda i, o: (["eval", "--split", "all", "--bench", str(i["bench"]), "--model", "baseline:random",
                           "--out", str(o), "--no-progress"], o, LOCK),
    "score": lambda i, o: (["score", str(o), "--resamples", "0"], o, SCORE_LOCK),
    "report": lambda i, o: (["report", str(i["run"]), "--out", str(o)], o, LOCK),
    "export": lambda i, o: (["export", "--bench", str(i["bench"]), "--format", "hf", "--out", str(o)], o, LOCK),
    "convert": lambda i, o: (["convert", str(i["bench"]), "--to", "hf", "--out", str(o)], o, LOCK),
    "merge": lambda i, o: (["merge", str(i["run"]), "--out", str(o)], o, LOCK),
    "finetune": lambda i, o: (["finetune", "--base", str(i["root"] / "no-model"), "--bench", str(i["bench"]),
                               "--out", str(o)], o, LOCK),
    "tiny-vlm": lambda i, o: (["tiny-vlm", "--out", str(o)], o, LOCK),
    "vllm-export": lambda i, o: (["vllm-export", str(i["root"] / "no-model"), "--out", str(o)], o, LOCK),
    "demo": lambda i, o: (["demo", "--out", str(o), "--quick"], o, LOCK),
}
# commands whose folder is an input they add to (a bench, a run): the test gives them a copy of one
WRITES_INTO = {"perturb": "bench", "materialise": "bench", "score": "run", "eval": "run"}


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("kind", sorted(COMMANDS))
def test_second_writer_is_refused_for_every_command(inputs: dict[str, Path], tmp_path: Path, kind: str) -> None:
    out = tmp_path / "out"
    if kind in WRITES_INTO:
        shutil.copytree(inputs[WRITES_INTO[kind]], out)
    args, folder, lock = COMMANDS[kind](inputs, out)
    with _held_by_another_process(folder, lock):
        before = _listing(folder)
        t0 = time.monotonic()
        code, shown = run_cli(*args)
        after = _listing(folder)
    flat = shown.replace("\n", " ")
    assert code == 2 and "another process is writing this folder" in flat and str(folder) in flat, (kind, shown)
    assert after == before, kind  # nothing written beside the holder
    assert time.monotonic() - t0 < 60  # refused at once, not after waiting


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("kind", sorted(set(COMMANDS) - set(WRITES_INTO)))
def test_out_that_is_a_file_is_exit_2_for_every_command(inputs: dict[str, Path], tmp_path: Path, kind: str) -> None:
    out = tmp_path / "out.txt"
    out.write_text("keep me\n")
    args, _, _ = COMMANDS[kind](inputs, out)
    code, shown = run_cli(*args)
    flat = shown.replace("\n", " ")
    assert code == 2 and "existing file, not a folder" in flat and str(out) in flat, (kind, shown)
    assert out.read_text() == "keep me\n"
