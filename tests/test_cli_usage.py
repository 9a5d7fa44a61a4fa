"""The ``medr2`` entry point: usage errors are one line and exit 2 (README), never a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

MEDR2 = [sys.executable, "-c", "from medr2.cli import main; main()"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["evl"], "No such command 'evl'"),
        (["eval", "--bogus"], "No such option: --bogus"),
        (["score"], "Missing argument"),
        (["build", "--cases", "many", "--out", "x"], "Invalid value for '--cases'"),
    ],
)
def test_usage_error_is_one_line_exit_2(args: list[str], needle: str) -> None:
    proc = subprocess.run([*MEDR2, *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ") and needle in lines[0]


def test_version() -> None:
    from importlib.metadata import version

    proc = subprocess.run([*MEDR2, "--version"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"medr2 {version('medr2')}"
