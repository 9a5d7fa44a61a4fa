"""The report's subgroup and harm views (runs scored with --slice/--harm) in headless Chromium: a harm row per
run and mode, one sortable slice table per slicing with intervals and n, low-n slices marked, the note on missing
demographic fields; and no such section for runs scored without them."""

from __future__ import annotations

from pathlib import Path

import pytest

from medr2.reporting import write_report
from medr2.reporting.screenshot import CHROMIUM, chromium_browser
from medr2.scoring.harm import HarmSpec
from medr2.scoring.slices import analyse_run
from tests.report_fixtures import make_fixture
from tests.test_report_plots import check_readable

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason=f"{CHROMIUM} absent (scripts/install.sh --dev installs the chromium package)")
pytest.importorskip("playwright", reason="the playwright package is a dev dependency")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[Path]]:
    root = tmp_path_factory.mktemp("subgroups")
    fx = make_fixture(root)
    plain = root / "plain"
    write_report(fx.runs, plain)
    for run in fx.runs:
        analyse_run(run, [("modality",), ("sex",), ("task",)], harm=HarmSpec(), n_resamples=100, min_cases=2)
    out = root / "report"
    write_report(fx.runs, out)
    return plain, out, fx.runs


def _cells(page, table: str, col: int) -> list[str]:  # type: ignore[no-untyped-def]
    return page.eval_on_selector_all(f"{table} tbody tr", f"rs => rs.map(r => r.cells[{col}].getAttribute('data-v'))")


def test_subgroup_and_harm_views_in_chromium(reports: tuple[Path, Path, list[Path]]) -> None:
    import json

    plain, out, runs = reports
    errors: list[str] = []
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((plain / "index.html").as_uri())
        assert page.locator("#subgroups").count() == 0  # runs scored without --slice/--harm: nothing new

        page.goto((out / "index.html").as_uri())
        assert page.locator("#subgroups").count() == 1
        harm_rows = page.locator("#harm tbody tr")
        assert harm_rows.count() == len(runs)  # one mode each
        assert "n=" in harm_rows.first.text_content()
        # the fixture's cases carry no sex: the page says so
        notes = page.eval_on_selector_all("#subgroups p.missing", "els => els.map(e => e.textContent)")
        assert any("demographics missing" in n and "do not carry sex" in n for n in notes)
        tables = page.locator("table.slices")
        assert tables.count() == 3 * len(runs)
        # each slice table: every slice of slices.json, with n and its interval
        doc = json.loads((runs[0] / "slices.json").read_text())
        by_task = doc["modes"]["independent"]["task"]["slices"]
        table = "table.slices[data-slicing='task']"
        first = page.locator(table).first
        assert first.locator("tbody tr").count() == len(by_task)
        assert "[" in first.locator("tbody tr").first.text_content()
        low = sum(x["low_n"] for x in by_task)
        assert first.locator("tbody tr.lown").count() == low
        # sorting by accuracy (third column): descending, then ascending; undefined values last
        page.locator(f"{table} >> nth=0").locator("thead th").nth(2).click()
        values = [float(v) for v in _cells(page, f"{table} >> nth=0", 2) if v]
        assert values == sorted(values, reverse=True)
        page.locator(f"{table} >> nth=0").locator("thead th").nth(2).click()
        values = [float(v) for v in _cells(page, f"{table} >> nth=0", 2) if v]
        assert values == sorted(values)
        page.locator(f"{table} >> nth=0").locator("thead th").nth(0).click()
        labels = _cells(page, f"{table} >> nth=0", 0)
        assert labels == sorted(labels)
    assert errors == []


def test_slices_small_multiples(reports: tuple[Path, Path, list[Path]]) -> None:
    import json

    from medr2 import PlotContext
    from medr2.reporting.inputs import load_run
    from medr2.reporting.plots import make_plots

    plain, out, runs = reports
    assert (out / "plots" / "slices.png").is_file() and not (plain / "plots" / "slices.png").exists()
    loaded = [load_run(r) for r in runs]
    plot = next(p for p in make_plots(PlotContext(loaded, {})) if p.name == "slices")
    check_readable(plot)
    doc = json.loads((runs[0] / "slices.json").read_text())
    slicings = doc["modes"]["independent"]
    axes = plot.layout["axes"]
    assert len(axes) == len(slicings)  # one panel per slicing (one mode)
    for ax in axes:
        assert set(ax["series"]) == {r.label for r in loaded}
        assert all("cases)" in y for y in ax["ylabels"])  # every slice names its cases
    by_sex = next(ax for ax in axes if any(y.startswith("missing") for y in ax["ylabels"]))
    assert len(by_sex["ylabels"]) == len(slicings["sex"]["slices"])
    assert "good model" in plot.caption
