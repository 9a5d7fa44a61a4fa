"""One bounded JSON reader (docs/reliability.md, issue 41 item 2): every JSON medr2 reads goes through
:mod:`medr2.jsonsafe` (depth, size, integer digits).

- ``test_no_other_json_reader`` walks ``src/medr2`` with ``ast`` and fails on any other ``json.load(s)``,
  ``JSONDecoder`` or ``raw_decode``;
- ``test_loads_raises_only_badinput`` / ``test_loads_agrees_with_json_within_bounds``: the reader itself,
  on generated documents;
- ``test_hostile_json_at_every_command_entry_point``: generated hostile documents (nested past the bound as
  lists or objects, integers of thousands of digits, unterminated nests) put where each command reads JSON —
  eval's resumed run manifest, ``--model-option``, report's ``metrics.json`` and ``manifest.json``, a bench
  manifest, ``quarantine.jsonl`` (``info``), score's ``text_metrics``... — through ``medr2.cli.main``: exit 2,
  the file (or option) named, no traceback.
"""

from __future__ import annotations

import ast
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import medr2
from medr2 import BadInput, jsonsafe
from tests.cli_inproc import run_cli

SRC = Path(medr2.__file__).parent
READER = SRC / "jsonsafe.py"
EXEMPT = {  # module -> why it may use json directly
    SRC / "interop" / "exporters" / "lmms_eval_utils.py": "copied into lmms-eval task folders; runs without medr2",
}


def _json_reads(path: Path) -> list[str]:
    tree = ast.parse(path.read_text("utf-8"), str(path))
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "json":
            bad += [f"{path}:{node.lineno}: from json import {a.name}" for a in node.names
                    if a.name in ("load", "loads", "JSONDecoder")]
        if isinstance(node, ast.Attribute) and (node.attr == "raw_decode" or (
                node.attr in ("load", "loads", "JSONDecoder") and ast.unparse(node.value) in ("json", "_json"))):
            bad.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
    return bad


def test_no_other_json_reader() -> None:
    modules = [p for p in SRC.rglob("*.py") if p != READER and p not in EXEMPT]
    assert len(modules) > 100
    bad = [v for p in modules for v in _json_reads(p)]
    assert not bad, "read JSON through medr2.jsonsafe instead:\n" + "\n".join(bad)


def test_the_walk_finds_each_forbidden_form(tmp_path: Path) -> None:
    for i, form in enumerate(["import json\njson.loads('1')", "import json\njson.load(f)",
                              "from json import loads", "d.raw_decode(s)"]):
        p = tmp_path / f"m{i}.py"
        p.write_text(form + "\n")
        assert _json_reads(p), form


# --- the reader -----------------------------------------------------------------------------------------

def _nest(n: int, kind: str) -> str:
    if kind == "list":
        return "[" * n + "]" * n
    if kind == "object":
        return '{"a":' * n + "0" + "}" * n
    return "[" * n  # unterminated


over_deep = st.builds(_nest, st.integers(jsonsafe.MAX_DEPTH + 1, 30_000), st.sampled_from(["list", "object", "open"]))
huge_int = st.integers(jsonsafe.MAX_INT_DIGITS + 1, 5_000).map(lambda n: '{"x": [1, ' + "9" * n + "]}")
hostile_json = st.one_of(over_deep, huge_int, huge_int.map(lambda s: s.replace("[1, ", "[1, -")))


@settings(max_examples=200)
@given(text=st.one_of(hostile_json, st.text(max_size=200)), as_bytes=st.booleans())
def test_loads_raises_only_badinput(text: str, as_bytes: bool) -> None:
    try:
        value = jsonsafe.loads(text.encode("utf-8", "surrogatepass") if as_bytes else text, file="f.json")
    except BadInput as e:
        assert e.file == "f.json"
        return
    assert jsonsafe.json_depth(value) <= jsonsafe.MAX_DEPTH


json_values = st.recursive(st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.text(max_size=10)
                           | st.floats(allow_nan=False, allow_infinity=False),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                                         max_size=4), max_leaves=30)


@settings(max_examples=200)
@given(value=json_values)
def test_loads_agrees_with_json_within_bounds(value: object) -> None:
    text = json.dumps(value)
    assert jsonsafe.loads(text) == value


def test_size_bound_before_reading(tmp_path: Path) -> None:
    p = tmp_path / "big.json"
    p.write_text("[" + "0," * 600 + "0]")
    with pytest.raises(jsonsafe.OverBound, match="larger than") as e:
        jsonsafe.load_file(p, max_bytes=1000)
    assert e.value.file == str(p)


# --- every command that reads JSON ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("jsonsafe")
    bench, run = root / "bench", root / "run"
    assert run_cli("build", "--source", "sample", "--cases", "3", "--out", str(bench), "--workers", "1")[0] == 0
    assert run_cli("eval", "--split", "all", "--bench", str(bench), "--model", "baseline:random", "--out", str(run),
                   "--no-progress")[0] == 0
    assert run_cli("score", str(run), "--resamples", "0")[0] == 0
    return bench, run


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _eval_resume(bench: Path, run: Path, root: Path, payload: str) -> tuple[list[str], str]:
    r = _copy(run, root / "run")
    (r / "manifest.json").write_text(payload)
    return ["eval", "--split", "all",
            "--bench", str(bench), "--model", "baseline:random", "--out", str(r), "--no-progress"], \
        str(r / "manifest.json")


def _model_option(bench: Path, run: Path, root: Path, payload: str) -> tuple[list[str], str]:
    return ["eval", "--split", "all", "--bench", str(bench), "--model", "baseline:random", "--out", str(root / "new"),
            "--model-option", f"seed_extra={payload}", "--no-progress"], "--model-option"


def _report_metrics(bench: Path, run: Path, root: Path, payload: str) -> tuple[list[str], str]:
    r = _copy(run, root / "run")
    (r / "metrics.json").write_text(payload)
    return ["report", str(r), "--out", str(root / "rep")], str(r / "metrics.json")


def _report_manifest(bench: Path, run: Path, root: Path, payload: str) -> tuple[list[str], str]:
    r = _copy(run, root / "run")
    (r / "manifest.json").write_text(payload)
    return ["report", str(r), "--out", str(root / "rep")], str(r / "manifest.json")


def _score_manifest(bench: Path, run: Path, root: Path, payload: str) -> tuple[list[str], str]:
    r = _copy(run, root / "run")
    (r / "manifest.json").write_text(payload)
    return ["score", str(r), "--resamples", "0"], str(r / "manifest.json")


def _bench_manifest(bench: Path, run: Path, root: Path, payload: str) -> tuple[list[str], str]:
    b = _copy(bench, root / "bench")
    (b / "manifest.json").write_text(payload)
    return ["info", str(b)], str(b / "manifest.json")


def _quarantine(bench: Path, run: Path, root: Path, payload: str) -> tuple[list[str], str]:
    b = _copy(bench, root / "bench")
    (b / "quarantine.jsonl").write_text(payload.replace("\n", " ") + "\n")
    return ["info", str(b)], str(b / "quarantine.jsonl")


ENTRY_POINTS: dict[str, Callable[[Path, Path, Path, str], tuple[list[str], str]]] = {
    "eval resume: run manifest": _eval_resume, "eval --model-option": _model_option,
    "report: metrics.json": _report_metrics, "report: run manifest": _report_manifest,
    "score: run manifest": _score_manifest, "info: bench manifest": _bench_manifest,
    "info: quarantine.jsonl": _quarantine,
}


@pytest.mark.filterwarnings("ignore")
@settings(max_examples=21, deadline=None, suppress_health_check=list(HealthCheck))
@given(entry=st.sampled_from(sorted(ENTRY_POINTS)), payload=hostile_json)
def test_hostile_json_at_every_command_entry_point(scored: tuple[Path, Path], entry: str, payload: str) -> None:
    bench, run = scored
    with tempfile.TemporaryDirectory() as d:
        args, named = ENTRY_POINTS[entry](bench, run, Path(d), payload)
        code, shown = run_cli(*args)
    assert code == 2, (entry, shown[-2000:])
    assert named in shown.replace("\n", ""), (entry, shown[-2000:])


@pytest.mark.parametrize("sign", ["", "-"])
def test_the_digit_bound_counts_digits_not_the_sign(sign: str) -> None:
    """At the bound exactly: MAX_INT_DIGITS digits are read with or without a sign, one more is refused either way
    (41 unsigned digits were read before: the sign's allowance applied to every integer)."""
    n = jsonsafe.MAX_INT_DIGITS
    assert jsonsafe.loads(f"[{sign}{'9' * n}]") == [int(sign + "9" * n)]
    with pytest.raises(BadInput, match="digits"):
        jsonsafe.loads(f"[{sign}{'9' * (n + 1)}]")
