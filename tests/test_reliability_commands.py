"""Commands × input kinds (docs/reliability.md, issue 41: "a fuzz harness over commands × input kinds"): every
command of the ``medr2`` typer app — enumerated from the app itself, not from a list here — is run through
:func:`medr2.cli.main` with each of its inputs replaced by a hostile one of every kind, so that a new command or
a new input of one is attacked by the existing kinds the day it is added.

- ``test_every_command_and_input_is_known``: the commands and their input parameters (every ``Path`` parameter
  other than ``--out``, and the ``NAME:PATH`` of ``build --source``) come from the app; each required parameter
  that is not an input has a valid filler here, so a new required option fails this test until it has one;
- ``test_hostile_input_at_every_command``: for every (command, input) — ``import`` once per format, ``build
  --source`` once per source kind — generated hostile inputs of every kind (missing, zero-byte, random bytes,
  Latin-1/UTF-16 text, JSON nested past the bound, an empty folder, a folder whose files are of one hostile kind,
  names holding console markup): exit 2, the input named, no traceback (an uncaught exception fails the test);
- ``test_damaged_real_input_at_every_command``: a real bench / run, one of its files damaged in a generated way
  (zero bytes, truncated, random bytes, deep JSON, bytes flipped), given to every command that reads one: no
  traceback; exit 0 (the damage is in a file the command does not need) or 2 naming the damaged input;
- ``test_hostile_out_at_every_command``: ``--out`` under an existing file, or (for the commands writing a
  folder) an existing file, or (for the two writing one PNG) an existing folder: exit 2 naming it.
"""

from __future__ import annotations

import shutil
import tempfile
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from medr2 import jsonsafe
from medr2.catalog import IMPORT_FORMATS, SOURCE_KINDS
from tests.cli_inproc import run_cli

# --- the commands and their inputs, from the app ---------------------------------------------------------


def _commands(serving: bool = False) -> dict[str, typing.Any]:
    """The app's commands; those that serve until stopped only with ``serving`` (hostile inputs only: a valid
    input would block the harness)."""
    import typer.main

    from medr2.cli import app

    return {name: cmd for name, cmd in typer.main.get_command(app).commands.items()  # type: ignore[attr-defined]
            if serving or not _serves(cmd)}


def _serves(cmd: typing.Any) -> bool:
    """A command that serves until stopped (``view``, ``review``: it takes ``--port``). Given hostile inputs here
    (each must be refused before it serves); a real input would block the harness, so the damaged-input and
    ``--out`` tests leave them out; their requests are fuzzed against the running server
    (tests/test_view_server.py, tests/test_review.py)."""
    return any(p.name == "port" for p in cmd.params)


def _is_path(hint: object) -> bool:
    return hint is Path or Path in typing.get_args(hint) or any(
        Path in typing.get_args(a) for a in typing.get_args(hint))


# parameters holding a path inside a string: (command, parameter) -> how the path is given, one per kind
PATH_IN_TEXT: dict[tuple[str, str], Callable[[Path], list[str]]] = {
    ("build", "source"): lambda p: [f"{kind}:{p}" for kind in SOURCE_KINDS if kind != "sample"],
}
# a parameter that is an axis of the input (import FORMAT PATH: every format reads PATH its own way)
AXES: dict[tuple[str, str], tuple[str, ...]] = {("import", "fmt"): IMPORT_FORMATS}
OUT = "out"
OPTIONAL = {"split": "all"}  # optional parameters given where a command has them (the real bench is all train)


def _fillers(tmp: Path, real: dict[str, Path]) -> dict[str, str]:
    """A valid value for every required parameter, by parameter name: the inputs from ``real`` (a bench and a
    scored run built once), the rest plain values."""
    return {"model": "baseline:random", "fmt": "hf", "to": "hf", "variants": "T1", "source": "sample",
            OUT: str(tmp / "out-folder"), "bench": str(real["bench"]), "run": str(real["run"]),
            "runs": str(real["run"]), "shards": str(real["run"]), "base": str(tmp / "no-model"),
            "src": str(tmp / "no-model")}


def _inputs(cmd: typing.Any) -> list[str]:
    hints = typing.get_type_hints(cmd.callback)
    names = [p.name for p in cmd.params if p.name != OUT and _is_path(hints.get(p.name))]
    return names + [p for (c, p) in PATH_IN_TEXT if c == cmd.name]


def _cases(serving: bool = False) -> list[tuple[str, str, str | None]]:
    """(command, input parameter, axis value) for every input of every command."""
    out: list[tuple[str, str, str | None]] = []
    for name, cmd in sorted(_commands(serving).items()):
        axis = next((v for (c, _), v in AXES.items() if c == name), None)
        for param in _inputs(cmd):
            out += [(name, param, a) for a in axis] if axis else [(name, param, None)]
    return out


def _argv(name: str, values: dict[str, str | list[str]]) -> list[str]:
    """``medr2 NAME`` with ``values`` (parameter name -> value) as the command's arguments and options."""
    cmd = _commands(serving=True)[name]
    args: list[str] = [name]
    for p in cmd.params:
        if p.name not in values:
            continue
        v = values[p.name]
        vs = v if isinstance(v, list) else [v]
        for one in vs:
            args += [one] if p.param_type_name == "argument" else [p.opts[0], one]
    return args


def _call(name: str, param: str, axis: str | None, hostile: Path, tmp: Path,
          real: dict[str, Path]) -> list[list[str]]:
    """Every argv giving ``hostile`` as ``param`` of command ``name`` (one per kind for a path in text)."""
    cmd = _commands(serving=True)[name]
    fill = _fillers(tmp, real)
    base: dict[str, str | list[str]] = {p.name: fill[p.name] for p in cmd.params
                                        if p.required and p.name in fill and p.name != param}
    base.update({p.name: OPTIONAL[p.name] for p in cmd.params if p.name in OPTIONAL})
    for (c, p) in AXES:
        if c == name and axis is not None:
            base[p] = axis
    if (name, param) in PATH_IN_TEXT:
        return [_argv(name, {**base, param: text}) for text in PATH_IN_TEXT[(name, param)](hostile)]
    return [_argv(name, {**base, param: str(hostile)})]


def test_every_command_and_input_is_known(tmp_path: Path) -> None:
    commands = _commands()
    assert len(commands) >= 17 and {"build", "eval", "score", "report", "import"} <= set(commands)
    fill = _fillers(tmp_path, {"bench": tmp_path, "run": tmp_path})
    targets_only = {p for c, p, _ in _cases() if (c, p) in PATH_IN_TEXT} | {"path"}  # never needed as a filler
    missing = [f"{n} {p.name}" for n, c in commands.items() for p in c.params
               if p.required and p.name not in fill and p.name not in targets_only]
    assert not missing, f"required parameters without a filler in this test: {missing}"
    cases = _cases()
    assert {c for c, _, _ in cases} >= set(commands) - {"demo", "tiny-vlm"}  # every command that reads an input
    assert sum(1 for c, _, a in cases if c == "import") == len(IMPORT_FORMATS)
    serving = set(_commands(serving=True)) - set(commands)
    assert {"view", "review"} <= serving and {c for c, _, _ in _cases(serving=True)} >= serving


# --- hostile inputs ---------------------------------------------------------------------------------------

NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)  # a failing example is reported as drawn (fast)
MARKUP = ("[bold red]", "[link=file:x]", "data[ct]", "$x$", "\u202e")
deep_json = st.integers(jsonsafe.MAX_DEPTH + 1, 3_000).map(lambda n: ("[" * n + "]" * n).encode())
text_bytes = st.text(min_size=1, max_size=200)
hostile_bytes = st.one_of(
    st.just(b""),
    st.binary(min_size=1, max_size=400),
    deep_json,
    text_bytes.map(lambda t: ("é" + t).encode("latin-1", "replace")),
    text_bytes.map(lambda t: t.encode("utf-16")),
    text_bytes.map(lambda t: b"\xef\xbb\xbf" + t.encode("utf-8", "surrogatepass")),
    st.integers(41, 2_000).map(lambda n: b'{"a": ' + b"9" * n + b"}"),
)
# file names the readers look for, so that a folder of hostile files is read and not simply found empty
KNOWN_NAMES = ("manifest.json", "items.parquet", "cases.parquet", "medr2.json", "labels.csv", "labels.json",
               "metrics.json", "store.sqlite", "quarantine.jsonl", "config.json", "annotations.json",
               "VQA_RAD Dataset Public.json", "test.json", "train.json", "test.csv", "data.tsv", "test_list.txt",
               "train_val_list.txt", "Data_Entry_2017.csv", "indiana_reports.csv", "mask.txt", "dataset.json")


@st.composite
def hostile_input(draw: st.DrawFn) -> tuple[str, bytes | None, tuple[str, ...]]:
    """(kind, content, file names): missing / file (content) / empty folder / folder of hostile files."""
    kind = draw(st.sampled_from(["missing", "file", "folder", "folder-of"]))
    content = draw(hostile_bytes) if kind in ("file", "folder-of") else None
    names = tuple(draw(st.lists(st.sampled_from(KNOWN_NAMES), min_size=1, max_size=6, unique=True))) \
        if kind == "folder-of" else ()
    return kind, content, names


def _make(root: Path, tag: str, kind: str, content: bytes | None, names: tuple[str, ...]) -> Path:
    p = root / f"in {tag}"
    if kind == "file":
        p.write_bytes(content or b"")
    elif kind == "folder":
        p.mkdir()
    elif kind == "folder-of":
        p.mkdir()
        for n in names:
            (p / n).write_bytes(content or b"")
    return p


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A real bench (3 sample cases) and a real evaluated, scored run of it."""
    root = tmp_path_factory.mktemp("real")
    bench, run = root / "bench", root / "run"
    assert run_cli("build", "--source", "sample", "--cases", "3", "--out", str(bench), "--workers", "1")[0] == 0
    assert run_cli("eval", "--split", "all", "--bench", str(bench), "--model", "baseline:random", "--out", str(run),
                   "--no-progress")[0] == 0
    assert run_cli("score", str(run), "--resamples", "0")[0] == 0
    return {"bench": bench, "run": run}


@contextmanager
def _scratch() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="medr2-cmdfuzz-"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _flat(shown: str) -> str:
    return " ".join(shown.split())


@pytest.mark.filterwarnings("ignore")
@pytest.mark.timeout(900)  # a serving command that took a hostile input would serve: fail, not hang
@pytest.mark.parametrize(("name", "param", "axis"), _cases(serving=True), ids=lambda v: str(v))
@settings(max_examples=4, deadline=None, derandomize=True, phases=NO_SHRINK,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(hostile=hostile_input(), markup=st.sampled_from(MARKUP))
def test_hostile_input_at_every_command(real: dict[str, Path], name: str, param: str, axis: str | None,
                                        hostile: tuple[str, bytes | None, tuple[str, ...]], markup: str) -> None:
    kind, content, names = hostile
    with _scratch() as root:
        target = _make(root, markup, kind, content, names)
        for argv in _call(name, param, axis, target, root, real):
            code, shown = run_cli(*argv)
            assert code == 2, (argv, kind, names, content[:80] if content else None, shown[-2000:])
            assert str(target) in _flat(shown) or target.name in shown, (argv, kind, names, shown[-2000:])


# --- a real input with one file damaged -------------------------------------------------------------------

READS = {"bench": "bench", "run": "run", "runs": "run", "shards": "run"}  # input parameter -> the real input


def _real_cases() -> list[tuple[str, str]]:
    return sorted({(c, p) for c, p, _ in _cases() if p in READS})


def _damage(data: bytes, kind: str, at: int, junk: bytes) -> bytes:
    n = len(data)
    if kind == "zero":
        return b""
    if kind == "truncate":
        return data[: at % max(n, 1)]
    if kind == "flip":  # bytes overwritten in the middle (a corrupted page / chunk)
        i = at % max(n, 1)
        return data[:i] + junk + data[i + len(junk):]
    if kind == "deep-json":
        return b"[" * 5_000 + b"]" * 5_000
    return junk  # "garbage": other bytes altogether


damages = st.tuples(st.sampled_from(["zero", "truncate", "flip", "deep-json", "garbage"]), st.integers(0, 1 << 20),
                    st.binary(min_size=1, max_size=64))


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("name", "param"), _real_cases(), ids=lambda v: str(v))
@settings(max_examples=4, deadline=None, derandomize=True, phases=NO_SHRINK,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(pick=st.integers(0, 1 << 16), damage=damages)
def test_damaged_real_input_at_every_command(real: dict[str, Path], name: str, param: str, pick: int,
                                             damage: tuple[str, int, bytes]) -> None:
    with _scratch() as root:
        copy = root / f"{READS[param]} [bold]"
        shutil.copytree(real[READS[param]], copy)
        files = sorted(p for p in copy.rglob("*") if p.is_file())
        victim = files[pick % len(files)]
        victim.write_bytes(_damage(victim.read_bytes(), *damage))
        for argv in _call(name, param, None, copy, root, real):
            code, shown = run_cli(*argv)
            assert code in (0, 2), (argv, victim.relative_to(copy), damage[0], shown[-2000:])
            if code == 2:  # names the damaged input, or another input given (the command got past this one)
                named = [a for a in argv if a.startswith(str(root)) and a in _flat(shown)]
                assert str(copy) in named or copy.name in shown or named, (
                    argv, victim, damage[0], shown[-2000:])


# --- hostile --out ----------------------------------------------------------------------------------------


def _out_cases() -> list[str]:
    return sorted(n for n, c in _commands().items() if any(p.name == OUT for p in c.params))


def _writes_one_file(name: str) -> bool:
    """A command whose ``--out`` is one file (it is marked :func:`medr2.outdir.writes_file` in the API)."""
    from medr2 import api

    return hasattr(getattr(api, name.replace("-", "_"), None), "writes_file")


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", _out_cases())
@pytest.mark.parametrize("kind", ["under-a-file", "wrong-kind"])
def test_hostile_out_at_every_command(real: dict[str, Path], tmp_path: Path, name: str, kind: str) -> None:
    blocker = tmp_path / "a file [bold]"
    blocker.write_text("keep me\n")
    if kind == "under-a-file":
        out = blocker / "out"
    elif _writes_one_file(name):
        out = tmp_path / "a folder [bold].png"
        out.mkdir()
    else:
        out = blocker
    cmd = _commands()[name]
    fill = _fillers(tmp_path, real)
    values: dict[str, str | list[str]] = {p.name: fill[p.name] for p in cmd.params if p.required and p.name in fill}
    values[OUT] = str(out)
    if name == "import":
        values.update(fmt="vqa-rad", path=str(real["bench"]))
    if name == "build":
        values["source"] = "sample"
    code, shown = run_cli(*_argv(name, values))
    assert code == 2 and str(out) in _flat(shown), (name, kind, shown[-2000:])
    assert blocker.read_text() == "keep me\n"
    assert not out.is_dir() or not any(out.iterdir())
