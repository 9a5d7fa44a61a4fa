"""One console writer (docs/reliability.md, issue 41 item 1): everything medr2 prints goes through
:mod:`medr2.console`, and text from data is never interpreted as rich markup.

- ``test_no_other_module_prints`` walks every module of ``src/medr2`` with ``ast`` and fails on any other way to
  print (``print``, ``typer.echo``, ``sys.stdout.write``, a rich import, ``markup=True``);
- ``test_writer_shows_hostile_text_as_written`` renders every kind of line the writer makes (plain, styled,
  warning, error, table, rule, progress column, status) with generated hostile text;
- ``test_commands_print_hostile_names_as_written`` runs build, eval (two shards), merge, score, report, import
  and eval's and build's error paths through ``medr2.cli.main`` with generated hostile folder names, model
  names and server logs: no traceback, the expected exit code, and every name printed with its brackets.
"""

from __future__ import annotations

import ast
import io
import json
import re
import shlex
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import medr2
from medr2 import console
from tests.cli_inproc import run_cli

SRC = Path(medr2.__file__).parent
WRITER = SRC / "console.py"

# fragments rich would read as markup, emoji codes, escapes or format fields
FRAGMENTS = ("[/x]", "[/]", "data[ct]", "[bold red]", "[link=https://x]", ":smile:", "\\[x]", "[red]x[/red]",
             "][", "{task.description}", "{0}", "[@click=quit]", "[/bold]")
hostile = st.builds(lambda a, b, c: a + b + c, st.text(alphabet="ab[]:=\\{} @", max_size=6),
                    st.sampled_from(FRAGMENTS), st.text(alphabet="ab[]:=\\{} @/", max_size=6))


def _bare(text: str) -> str:
    return re.sub(r"\s+", "", text)


# --- every module -----------------------------------------------------------------------------------


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text("utf-8"), str(path))
    bad: list[str] = []
    where = f"{path.relative_to(SRC.parent)}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            bad += [f"{where}:{node.lineno}: imports {n}" for n in names if n == "rich" or n.startswith("rich.")]
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "print":
            bad.append(f"{where}:{node.lineno}: print()")
        called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if called == "Console":  # every rich console is made by medr2.console.make_console (one width when piped)
            bad.append(f"{where}:{node.lineno}: Console()")
        if isinstance(f, ast.Attribute):
            base = ast.unparse(f.value)
            if f.attr in ("echo", "secho") and base in ("typer", "click"):
                bad.append(f"{where}:{node.lineno}: {base}.{f.attr}()")
            if f.attr == "write" and base in ("sys.stdout", "sys.stderr"):
                bad.append(f"{where}:{node.lineno}: {base}.write()")
        for kw in node.keywords:
            if kw.arg == "markup" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                bad.append(f"{where}:{node.lineno}: markup={ast.unparse(kw.value)}")
    return bad


def test_no_other_module_prints() -> None:
    modules = [p for p in SRC.rglob("*.py") if p != WRITER]
    assert len(modules) > 100  # the walk sees the whole package
    bad = [v for p in modules for v in _violations(p)]
    assert not bad, "print through medr2.console instead:\n" + "\n".join(bad)


def test_the_walk_finds_each_forbidden_form(tmp_path: Path) -> None:
    """The checker itself: each form it must refuse, written into a module, is reported."""
    forms = ["print('x')", "import typer\ntyper.echo('x')", "import sys\nsys.stderr.write('x')",
             "from rich.console import Console", "import rich", "c.print('x', markup=True)", "x = m.Console()"]
    global SRC
    saved, SRC = SRC, tmp_path
    try:
        for i, form in enumerate(forms):
            p = tmp_path / f"m{i}.py"
            p.write_text(form + "\n")
            assert _violations(p), form
    finally:
        SRC = saved


# --- the writer ---------------------------------------------------------------------------------------


def _capture(fn: object) -> str:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        fn()  # type: ignore[operator]
    return out.getvalue() + err.getvalue()


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(text=hostile, other=hostile)
def test_writer_shows_hostile_text_as_written(text: str, other: str) -> None:
    from rich.progress import Progress

    from medr2.redact import scrub_registered

    # shown as written, except what looks like credentials in a URL (``https://user@``), masked on every channel
    text, other = scrub_registered(text), scrub_registered(other)
    checks = {
        "say": lambda: console.say(text, (other, "yellow")),
        "warn": lambda: console.warn(text),
        "error": lambda: console.error(text),
        "table": lambda: console.table(text, [other, ("n", "right")], [(text, 3)]),
        "rule": lambda: console.rule((text, "bold")),
        "echo": lambda: console.echo(text, err=True),
    }
    for name, fn in checks.items():
        shown = _capture(fn)
        assert _bare(text) in _bare(shown), (name, text, shown)
    bar: Progress = console.progress(("{task.description}", "bold"), "bar", "count", "{task.fields[x]}")
    task = bar.add_task(text, total=2, x=other)
    cells = [str(col.render(bar.tasks[task])) for col in bar.columns if hasattr(col, "text_format")]
    assert cells == [text, other]


def test_registered_secret_never_printed() -> None:
    from medr2.redact import _REGISTERED, register_secret

    key = "sk-test-0123456789abcdef"
    register_secret(key)
    try:
        shown = _capture(lambda: (console.say(f"key {key} and {key[3:15]}"), console.echo(f"k={key}", err=True),
                                  console.table("t", ["a"], [(key,)])))
        assert "0123456789" not in shown and "***" in shown
    finally:
        _REGISTERED.pop(key, None)


# --- the commands ---------------------------------------------------------------------------------------


def _vqarad(root: Path, hostile_name: str) -> Path:
    from tests.interop_fixtures import gradient, write_png

    write_png(root / "VQA_RAD Image Folder" / "synpic1.jpg", gradient(32, 32))
    recs = [{"qid": "1", "image_name": "synpic1.jpg", "image_organ": "CHEST", "question": "Is there a mass?",
             "answer": "No", "answer_type": "CLOSED", "question_type": "PRES", "phrase_type": "freeform"},
            {"qid": "2", "image_name": hostile_name + ".jpg", "question": "x?", "answer": "y",
             "answer_type": "OPEN", "question_type": "ORGAN", "phrase_type": "freeform"}]
    (root / "VQA_RAD Dataset Public.json").write_text(json.dumps(recs))
    return root


def _folder(text: str) -> str:
    """A folder path made of ``text``: '/' separates folders; empty, '.' and '..' parts get a letter."""
    parts = [p if p.strip(".") else f"p{p}" for p in text.split("/")]
    return "/".join(parts)


@pytest.mark.filterwarnings("ignore")
@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=hostile, label=hostile)
def test_commands_print_hostile_names_as_written(name: str, label: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        bench = root / _folder("b" + name)
        code, shown = run_cli("build", "--source", "sample", "--cases", "3", "--out", str(bench), "--workers", "1")
        assert code == 0 and _bare(str(bench)) in _bare(shown), shown
        runs = []
        for i in range(2):
            run = root / _folder(f"r{i}" + name)
            code, shown = run_cli("eval", "--split", "all", "--bench", str(bench), "--model", "baseline:random",
                                  "--out", str(run), "--shard", f"{i}/2", "--no-progress")
            assert code == 0 and "ok" in shown, shown
            runs.append(run)
        merged = root / _folder("m" + name)
        code, shown = run_cli("merge", *map(str, runs), "--out", str(merged))
        assert code == 0 and _bare(str(merged)) in _bare(shown), shown
        code, shown = run_cli("score", str(merged), "--resamples", "0")
        assert code == 0 and _bare(str(merged / "metrics.json")) in _bare(shown), shown
        report = root / _folder("rep" + name)
        code, shown = run_cli("report", str(merged), "--out", str(report), "--max-items", "3")
        assert code == 0 and _bare(str(report / "index.html")) in _bare(shown), shown
        imported = root / _folder("imp" + name)
        code, shown = run_cli("import", "vqa-rad", str(_vqarad(root / "rad", label)), "--out", str(imported))
        assert code == 0 and _bare(str(imported)) in _bare(shown), shown
        assert _bare(label) in _bare(shown) or _bare(repr(label)[1:-1]) in _bare(shown), shown  # a quoted reason
        # error paths: a missing source folder, a --serve server that dies after logging hostile text
        missing = root / _folder("missing" + name)
        code, shown = run_cli("build", "--source", f"folder:{missing}", "--out", str(root / "x"))
        assert code == 2 and _bare(str(missing)) in _bare(shown) and "Traceback" not in shown, shown
        log_line = shlex.quote(f"server says {label}")
        code, shown = run_cli("eval", "--split", "all", "--bench", str(bench), "--model", f"openai:{label}", "--out",
                           str(root / _folder("s" + name)), "--serve", f"echo {log_line}; exit 3",
                           "--base-url", "http://127.0.0.1:9/v1", "--serve-timeout", "20")
        assert code in (1, 2) and _bare(f"server says {label}") in _bare(shown), shown
