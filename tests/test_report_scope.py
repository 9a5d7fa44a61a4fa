"""Every table says what its numbers are computed over (issue 50, points 1 and 2): the split(s) scored and the unit
the intervals resample, with how many. In Chromium, every ``<table>`` of the report (the answer, the
leaderboard, harm, each slice table, the runs) is enumerated and its caption read; every plot's caption too; the
leaderboard files and ``medr2 score``'s console summary say the same (:func:`medr2.reporting.fmt.scope_text`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st
from typer.testing import CliRunner

from medr2.cli import app
from medr2.reporting import write_report
from medr2.reporting.fmt import Scopes, scope_text
from medr2.reporting.screenshot import CHROMIUM, chromium_browser
from medr2.scoring.harm import HarmSpec
from medr2.scoring.slices import analyse_run
from tests.report_fixtures import make_fixture

PATIENTS = 2  # the fixture's 4 cases belong to 2 patients: the bootstrap resamples patients


@given(splits=st.dictionaries(st.sampled_from(["train", "val", "test", "none"]), st.integers(1, 10**6), max_size=4),
       unit=st.sampled_from(["patient", "case", None]), n_units=st.integers(0, 10**6),
       resamples=st.sampled_from([0, 200, 1000]))
def test_scope_text_names_the_splits_and_the_resampled_unit(splits: dict[str, int], unit: str | None, n_units: int,
                                                            resamples: int) -> None:
    boot = {"n_resamples": resamples, "n_units": n_units, **({"unit": unit} if unit else {})}
    text = scope_text({"run": {"splits": splits}, "bootstrap": boot})
    head, tail = text.split(" · ")
    if splits:
        assert head.split(" ")[0].split("+") == list(splits) and ("mixed" in head) == (len(splits) > 1)
    else:
        assert head == "split not recorded"
    if resamples == 0:
        assert tail == "no intervals (0 bootstrap resamples)"
    elif unit is None:
        assert tail == "bootstrap unit not recorded"
    else:
        assert tail == f"bootstrap over {n_units:,} {unit}" + ("" if n_units == 1 else "s")


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    root = tmp_path_factory.mktemp("scope")
    fx = make_fixture(root, patients=PATIENTS)
    for run in fx.runs:
        analyse_run(run, [("modality",), ("task",)], harm=HarmSpec(), n_resamples=100, min_cases=1)
    out = root / "report"
    write_report(fx.runs, out)
    return out, fx.runs


def _expected(runs: list[Path]) -> dict[str, str]:
    return {run.name: scope_text(json.loads((run / "metrics.json").read_text())) for run in runs}


def _cluster_tests(node: object) -> list[dict]:
    if isinstance(node, dict):
        own = [node["cluster_test"]] if isinstance(node.get("cluster_test"), dict) else []
        return own + [t for v in node.values() for t in _cluster_tests(v)]
    return []


def test_the_runs_resample_patients_and_their_paired_tests_group_them(scored: tuple[Path, list[Path]]) -> None:
    for text in _expected(scored[1]).values():
        assert text == f"test split · bootstrap over {PATIENTS} patients"
    for run in scored[1]:
        tests = _cluster_tests(json.loads((run / "metrics.json").read_text())["modes"])
        assert tests, run  # the fixture's variants are tested against their parents
        assert all(t["unit"] == "patient" and 1 <= t["n_units"] <= min(PATIENTS, t["n_cases"]) for t in tests), tests


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} absent (scripts/install.sh --dev installs it)")
def test_every_table_and_plot_of_the_report_says_its_split_and_unit(scored: tuple[Path, list[Path]]) -> None:
    pytest.importorskip("playwright", reason="the playwright package is a dev dependency")
    out, runs = scored
    want = _expected(runs)
    every = Scopes(want).of()
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.goto((out / "index.html").as_uri())
        tables = page.eval_on_selector_all("table", """ts => ts.map(t => ({
            section: t.closest('section').id, id: t.id, cls: t.className,
            caption: t.caption ? t.caption.textContent : null,
            first: t.caption === t.firstElementChild,
            visible: t.caption ? t.caption.getBoundingClientRect().height > 0 : false}))""")
        sections = {t["section"] for t in tables}
        assert {"answer", "leaderboard", "subgroups", "runs"} <= sections, sections  # every kind of table is here
        assert any("slices" in t["cls"] for t in tables) and any(t["id"] == "harm" for t in tables)
        for t in tables:
            assert t["caption"] is not None and t["first"] and t["visible"], t
            assert " split" in t["caption"] and f"{PATIENTS} patients" in t["caption"], t
            assert t["caption"] in set(want.values()) | {every}, t
        figures = page.eval_on_selector_all("figure figcaption [data-role=scope]", "es => es.map(e => e.textContent)")
        assert figures and page.locator("figure").count() == len(figures)
        assert all(f == every + "." for f in figures)
    md = (out / "leaderboard.md").read_text()
    assert f"Scored: {every}." in md
    assert json.loads((out / "leaderboard.json").read_text())["scope"] == want


def test_score_console_says_the_split_and_unit(scored: tuple[Path, list[Path]]) -> None:
    run = scored[1][0]
    res = CliRunner().invoke(app, ["score", str(run), "--resamples", "50"])
    assert res.exit_code == 0, res.output
    assert f"scored: test split · bootstrap over {PATIENTS} patients" in res.output, res.output
    res = CliRunner().invoke(app, ["score", str(run), "--resamples", "0"])
    assert res.exit_code == 0, res.output
    assert "scored: test split · no intervals (0 bootstrap resamples)" in res.output, res.output
