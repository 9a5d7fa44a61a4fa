"""Every command's help, as a researcher reads it (issue 50, point 12): run for real with stdout to a file, it is
not cut to 80 columns, shows no stray `%%` or words cut short with "…", and every option that can be left out says
what leaving it out means (`[default: ...]`); `tiny-vlm --family` lists the families. Every rich console of the
package comes from `medr2.console.make_console`, so output to a file or a pipe has one width everywhere (that no
other module builds a console is checked by tests/test_reliability_console.py's walk of the package)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
import typer.core

from medr2.catalog import FAMILIES
from medr2.cli import app
from medr2.console import PIPED_WIDTH, make_console

ROOT = Path(__file__).resolve().parent.parent
GROUP = typer.main.get_command(app)
COMMANDS = sorted(GROUP.commands)  # type: ignore[attr-defined]


def _options(name: str) -> list[typer.core.TyperOption]:
    return [p for p in GROUP.commands[name].params if isinstance(p, typer.core.TyperOption)]  # type: ignore[attr-defined]


def _help_to_file(args: list[str], tmp_path: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "TERMINAL_WIDTH", "LINES")}
    env["PYTHONPATH"] = str(ROOT / "src")
    out = tmp_path / "help.txt"
    with out.open("w") as fh:
        proc = subprocess.run([sys.executable, "-m", "medr2", *args, "--help"], stdout=fh, stderr=subprocess.PIPE,
                              text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    return out.read_text()


def test_the_commands_are_enumerated() -> None:
    assert {"build", "eval", "score", "report", "convert", "demo", "tiny-vlm"} <= set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_optional_option_says_its_default(name: str) -> None:
    """An option with no default value (None) states what leaving it out means: `show_default="..."` (rendered as
    `[default: (...)]`) or its help says so; one with a value shows it (typer's `[default: X]`, never hidden)."""
    for opt in _options(name):
        if opt.required or opt.is_flag or opt.hidden:
            continue
        assert opt.show_default is not False, f"medr2 {name} {opt.opts[0]} hides its default"
        if opt.default is None or (isinstance(opt.default, str | list | tuple) and not opt.default):
            said = isinstance(opt.show_default, str) or "default" in (opt.help or "").lower()
            assert said, f"medr2 {name} {opt.opts[0]}: the help does not say what leaving it out means"


@pytest.mark.parametrize("name", COMMANDS)
def test_help_written_to_a_file_is_whole(name: str, tmp_path: Path) -> None:
    text = _help_to_file([name], tmp_path)
    lines = text.splitlines()
    assert max(map(len, lines)) == PIPED_WIDTH, f"medr2 {name} --help to a file is {max(map(len, lines))} wide"
    assert "%%" not in text, f"medr2 {name} --help shows a stray %%"
    assert "…" not in text, f"medr2 {name} --help cuts a word short: {[x for x in lines if '…' in x]}"
    rows = _option_rows(lines)
    for opt in _options(name):
        if opt.required or opt.is_flag or opt.hidden:
            continue
        row = rows[opt.opts[0]]
        assert "[default:" in row or "default" in row.lower(), f"medr2 {name} {opt.opts[0]}: {row}"


def _option_rows(lines: list[str]) -> dict[str, str]:
    """Each option's row of the rendered help (its wrapped lines joined), by the option's first name."""
    rows: dict[str, str] = {}
    current = None
    for line in lines:
        inner = line.strip().strip("│")
        body = inner.strip()
        first = body.removeprefix("*").split(maxsplit=1)
        # an option's name sits at the panel's left edge; wrapped help text that starts with "--" is indented
        if first and first[0].startswith("--") and len(inner) - len(inner.lstrip()) < 8:
            current = first[0].rstrip(",")
            rows[current] = body
        elif current is not None and body and not body.startswith(("╰", "╭")):
            rows[current] += " " + body
        elif body.startswith(("╰", "╭")):
            current = None
    return rows


def test_family_lists_its_values(tmp_path: Path) -> None:
    text = " ".join(_help_to_file(["tiny-vlm"], tmp_path).split())
    for family in FAMILIES:
        assert family in text, f"tiny-vlm --help does not list {family}"


def test_make_console_is_wide_on_a_pipe_and_follows_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert make_console().width == PIPED_WIDTH
    monkeypatch.setenv("COLUMNS", "97")
    assert make_console().width == 97
    buf = io.StringIO()
    assert make_console(file=buf, width=50).width == 50
