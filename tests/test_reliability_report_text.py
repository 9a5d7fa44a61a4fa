"""Text from data in report outputs (docs/reliability.md, issue 41 item 7): one neutraliser for the cells of
``leaderboard.md`` / ``leaderboard.csv`` (:func:`medr2.reporting.fmt.cell_text`: bidi controls visible, bare CR,
line breaks and control characters as spaces, then the CSV formula guard) and no mathtext in plots
(``make_plots`` draws with ``text.parse_math`` off).

- ``test_csv_and_markdown_cells_stay_one_cell``: generated hostile names (CR, LF, U+2028, bidi controls, formula
  starts, pipes) as run, model and mode: the CSV reads back with one row per run, every text cell safe; the
  Markdown has one line per row;
- ``test_report_with_mathtext_and_bidi_names``: ``medr2 report`` of a run whose folder name holds ``$``,
  ``\\frac{`` and U+202E: exit 0, the names written as text.
"""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from medr2.reporting.fmt import cell_text
from medr2.reporting.leaderboard import Leaderboard, Row, to_csv, to_markdown
from tests.cli_inproc import run_cli

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
hostile = st.text(alphabet=st.sampled_from(list("ab=+-@|$\\ \t\r\n\u2028\u2029\x00\x7f") + list(BIDI)),
                  min_size=1, max_size=12)


def _lb(names: list[tuple[str, str, str]]) -> Leaderboard:
    return Leaderboard(columns=(), rows=tuple(Row(run=r, model=m, mode=md, cells={}) for r, m, md in names))


@settings(max_examples=200)
@given(names=st.lists(st.tuples(hostile, hostile, hostile), min_size=1, max_size=4))
def test_csv_and_markdown_cells_stay_one_cell(names: list[tuple[str, str, str]]) -> None:
    lb = _lb(names)
    rows = list(csv.reader(io.StringIO(to_csv(lb))))
    assert len(rows) == 1 + len(names)
    for row, triple in zip(rows[1:], names, strict=True):
        assert len(row) == 3
        for cell, name in zip(row, triple, strict=True):
            assert not any(c in cell for c in BIDI + "\r\n\u2028\u2029\x00\x7f")
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")) or cell.startswith("'") or \
                cell.strip() != cell or _is_number(cell)
            assert cell.lstrip("'") == cell_text(name)
    md = to_markdown(lb).split("\n\n")[0].splitlines()
    assert len(md) == 2 + len(names)
    assert not any(c in "".join(md) for c in BIDI + "\r\u2028\u2029")


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


@pytest.mark.filterwarnings("ignore")
def test_report_with_mathtext_and_bidi_names(tmp_path: Path) -> None:
    bench, run = tmp_path / "bench", tmp_path / "r"
    assert run_cli("build", "--source", "sample", "--cases", "2", "--out", str(bench), "--workers", "1")[0] == 0
    assert run_cli("eval", "--split", "all", "--bench", str(bench), "--model", "baseline:random", "--out", str(run),
                   "--no-progress")[0] == 0
    assert run_cli("score", str(run), "--resamples", "0")[0] == 0
    hostile_run = tmp_path / "a$b$ \\frac{x \u202egpj.exe $"
    shutil.copytree(run, hostile_run)
    code, shown = run_cli("report", str(run), str(hostile_run), "--out", str(tmp_path / "rep"), "--max-items", "3")
    assert code == 0, shown
    md = (tmp_path / "rep" / "leaderboard.md").read_text("utf-8")
    assert "\u202e" not in md and "\u27e6U+202E\u27e7" in md and "\\frac{x" in md
