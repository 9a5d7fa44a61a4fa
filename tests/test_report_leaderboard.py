"""Leaderboard: CI formatting, one row per (run, mode), the same numbers in Markdown, CSV and JSON."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from medr2.reporting.fmt import fmt_ci
from medr2.reporting.inputs import load_run
from medr2.reporting.leaderboard import COLUMNS, build_leaderboard, lookup, to_csv, to_json, to_markdown
from tests.report_fixtures import Fixture, make_fixture


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    return make_fixture(tmp_path_factory.mktemp("lb"))


def test_fmt_ci() -> None:
    assert fmt_ci({"value": 0.6234, "lo": 0.551, "hi": 0.6949, "n": 10}) == "0.62 [0.55, 0.69]"
    assert fmt_ci({"value": 0.5, "lo": None, "hi": None, "n": 1}) == "0.50"
    assert fmt_ci({"value": None, "lo": None, "hi": None, "n": 0}) == "n/a"
    assert fmt_ci(None) == "n/a"
    assert fmt_ci({"value": -0.0001, "lo": -0.2, "hi": 0.1}) == "0.00 [-0.20, 0.10]"
    assert fmt_ci({"value": float("nan"), "lo": 0.1, "hi": 0.2}) == "n/a"


def test_rows_and_same_numbers_everywhere(fx: Fixture) -> None:
    runs = [load_run(r) for r in fx.runs]
    lb = build_leaderboard(runs)
    assert [(r.run, r.model, r.mode) for r in lb.rows] == [
        ("run_before", "baseline:fixture-a", "independent"), ("run_after", "baseline:fixture-b", "independent")]
    keys = [c.key for c in lb.columns]
    # the headline, then the reliance measures present, then the stages (issue 50: the reliance columns in view);
    # grounded accuracy (issue 19, a subset of the answers) never beside the headline: after every primary column
    reliance = [k for k in ("vrs", "blind_gap", "mislead_drop", "mfr") if k in keys]
    assert keys[:1 + len(reliance) + 4] == ["overall", *reliance, "s1", "s2", "s3", "s4"]
    secondary = {c.key for c in COLUMNS if c.secondary}
    assert "grounded_acc" in secondary
    assert all(keys.index(k) > keys.index(p) for k in keys if k in secondary for p in ("overall", "s4", *reliance))
    assert "vrs" not in keys  # no run reports VRS: the column is left out
    assert {"mislead_drop", "mfr", "worst_case", "unparsed", "error"} <= set(keys)

    data = json.loads(to_json(lb))
    table = list(csv.DictReader(io.StringIO(to_csv(lb))))
    md_rows = [line.split(" | ") for line in to_markdown(lb).splitlines()[2:4]]
    for i, run in enumerate(runs):
        mm = run.metrics["modes"]["independent"]
        for j, col in enumerate(lb.columns):
            m = lookup(mm, next(c.path for c in COLUMNS if c.key == col.key))
            cell = data["rows"][i]["metrics"][col.key]
            # a value from fewer than 10 cases is marked; Markdown adds what it is computed from
            low = m is not None and m["value"] is not None and m["low_n"]
            want = fmt_ci(m) + ("†" if low else "")
            assert cell["text"] == want and cell["low_n"] == low
            n_text = "" if m is None else f"n={m['n']:,}, {m['n_cases']:,} case{'s' if m['n_cases'] != 1 else ''}"
            assert md_rows[i][3 + j].strip(" |") == (f"{want} ({n_text})" if n_text else want)
            if m is None or m["value"] is None:
                assert table[i][col.key] == "" and cell["value"] is None
                continue
            assert cell["value"] == m["value"] and cell["lo"] == m["lo"] and cell["hi"] == m["hi"]
            assert float(table[i][col.key]) == m["value"]
            assert int(table[i][f"{col.key}_n_cases"]) == m["n_cases"] == cell["n_cases"]
            assert table[i][f"{col.key}_low_n"] == ("true" if low else "false")
            assert float(table[i][f"{col.key}_lo"]) == m["lo"] and float(table[i][f"{col.key}_hi"]) == m["hi"]
            assert fmt_ci({"value": float(table[i][col.key]), "lo": float(table[i][f"{col.key}_lo"]),
                           "hi": float(table[i][f"{col.key}_hi"])}) == fmt_ci(m)


def test_markdown_escapes_cells(fx: Fixture, tmp_path: Path) -> None:
    run = load_run(fx.runs[0])
    run.model_key = "openai:a|b\nc"
    md = to_markdown(build_leaderboard([run]))
    row = md.splitlines()[2]
    assert "openai:a\\|b c" in row
    assert row.count(" | ") == len(build_leaderboard([run]).columns) + 2
