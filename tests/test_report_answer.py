"""The report answers "does it read the image?" on its first screen (issue 50, points 7 and 8), in Chromium:
it opens with the best model, its accuracy and its visual and prompt reliance, each with its interval; the
provenance is said once, at the end; the leaderboard sorts on every column, marks the best value of each column
per mode, says each column's direction with an arrow and a tooltip, keeps the run and mode columns pinned, shows
the reliance columns without scrolling, and puts no subset metric beside the headline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medr2.reporting import write_report
from medr2.reporting.screenshot import CHROMIUM, chromium_browser
from tests.report_fixtures import make_fixture

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason=f"{CHROMIUM} absent (scripts/install.sh --dev installs the chromium package)")
pytest.importorskip("playwright", reason="the playwright package is a dev dependency")

MODES = ("independent", "blind", "chain-own")
RELIANCE = ("vrs", "blind_gap", "mislead_drop", "mfr")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("answer")
    fx = make_fixture(root, MODES)
    out = root / "report"
    write_report(fx.runs, out)
    return out


def _cells(page) -> list[dict]:  # type: ignore[no-untyped-def]
    return page.eval_on_selector_all("#lb tr", """rows => rows.slice(1).map(r => ({
        run: r.cells[0].getAttribute('data-v'), mode: r.cells[1].getAttribute('data-v'),
        cells: Object.fromEntries(Array.from(r.cells).slice(2).map(c => [c.getAttribute('data-key'),
            {v: c.getAttribute('data-v'), best: c.classList.contains('best'), text: c.childNodes[0].textContent}]))
    }))""")


def test_the_first_screen_is_the_answer(report: Path) -> None:
    lb = json.loads((report / "leaderboard.json").read_text())
    independent = [r for r in lb["rows"] if r["mode"] == "independent" and r["metrics"]["overall"]["value"] is not None]
    best = max(independent, key=lambda r: r["metrics"]["overall"]["value"])
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.goto((report / "index.html").as_uri())
        sections = page.eval_on_selector_all("main > section", "els => els.map(e => e.id)")
        assert sections[0] == "answer" and sections[-1] == "runs", sections
        answer = page.locator("#answer")
        box = answer.bounding_box()
        assert box["y"] + box["height"] < 900, "the answer does not fit the first screen"
        assert best["run"] in page.locator("[data-role=best-model]").text_content()
        assert page.locator("[data-role=best-accuracy]").text_content() == best["metrics"]["overall"]["text"]
        shown = {k: (v, n) for k, v, n in page.eval_on_selector_all(
            "[data-role=reliance] td", "els => els.map(e => [e.getAttribute('data-key'), e.childNodes[0].textContent, "
            "e.querySelector('.n').textContent])")}
        assert set(RELIANCE) <= set(shown)
        for key in RELIANCE:  # each reliance value is the leaderboard's, with its interval and n, or says it is absent
            want = best["metrics"].get(key) or {"text": "n/a", "n_text": "", "value": None, "lo": None}
            assert shown[key][0] == want["text"], key
            assert shown[key][1] == (want["n_text"] or "not measured in this run"), key
            if want["value"] is not None and want["lo"] is not None:
                assert "[" in shown[key][0]
        titles = page.eval_on_selector_all("[data-role=reliance] th", "els => els.map(e => e.title)")
        assert all("is better" in t for t in titles)
        # provenance once: what every run shares is said in one line, not in a column per run
        shared = page.locator("[data-role=shared]").text_content()
        assert "Bench" in shared and "Toolkit" in shared
        assert page.locator("#runs tr").first.locator("th", has_text="Toolkit").count() == 0
        bench_text = shared.split("Bench", 1)[1].split("·", 1)[0].strip()
        assert page.locator("body").text_content().count(bench_text) == 1


def test_the_leaderboard_sorts_marks_and_pins(report: Path) -> None:
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.goto((report / "index.html").as_uri())
        heads = page.eval_on_selector_all("#lb tr:first-child th", """els => els.map(e => ({
            key: e.getAttribute('data-key'), better: e.getAttribute('data-better'), title: e.title,
            text: e.textContent, secondary: e.classList.contains('secondary')}))""")
        numeric = [h for h in heads if h["key"]]
        assert len(numeric) >= 10
        for h in numeric:  # an arrow for the direction, a tooltip that says what it is and which way is better
            arrow = "↑" if h["better"] == "higher" else "↓"
            assert h["text"].strip().endswith(arrow) and h["better"] in ("higher", "lower"), h
            assert ("Higher is better" if h["better"] == "higher" else "Lower is better") in h["title"], h
        keys = [h["key"] for h in numeric]
        assert keys[0] == "overall" and not numeric[1]["secondary"], "a subset metric sits beside the headline"
        present = [k for k in RELIANCE if k in keys]
        assert keys[1:1 + len(present)] == present
        # the reliance columns are in view without scrolling
        right = page.locator("#leaderboard .scroll").bounding_box()
        for k in ["overall", *present]:
            th = page.locator(f"#lb th[data-key={k}]").bounding_box()
            assert th["x"] + th["width"] <= right["x"] + right["width"] + 1, k

        # the best value of each column, per mode, among the contenders (all baselines here), ties marked, and
        # nothing marked where every row of the mode ties
        rows = _cells(page)
        for h in numeric:
            for mode in MODES:
                vals = [(r["cells"][h["key"]]["v"], r["cells"][h["key"]]["best"]) for r in rows if r["mode"] == mode]
                nums = [float(v) for v, _ in vals if v != ""]
                marked = [float(v) for v, b in vals if b]
                if len(nums) < 2 or len(set(nums)) == 1:
                    assert not marked, (h["key"], mode)
                    continue
                top = max(nums) if h["better"] == "higher" else min(nums)
                assert marked and set(marked) == {top}, (h["key"], mode, vals)

        # every column sorts: the first click puts the best first (its arrow's way), the second reverses; n/a last
        for h in numeric:
            for click, desc in ((1, h["better"] == "higher"), (2, h["better"] != "higher")):
                page.click(f"#lb th[data-key={h['key']}]")
                got = [r["cells"][h["key"]]["v"] for r in _cells(page)]
                nums = [float(v) for v in got if v != ""]
                assert nums == sorted(nums, reverse=desc), (h["key"], click, got)
                assert got[len(nums):] == [""] * (len(got) - len(nums)), got
        page.click("#lb th:nth-child(1)")
        runs = [r["run"] for r in _cells(page)]
        assert runs == sorted(runs)

        # run and mode stay pinned when the table scrolls sideways
        page.set_viewport_size({"width": 700, "height": 900})
        box = page.locator("#leaderboard .scroll")
        box.evaluate("e => { e.scrollLeft = 600; }")
        left = box.bounding_box()["x"]
        run_cell = page.locator("#lb tr").nth(1).locator("td").nth(0).bounding_box()
        mode_cell = page.locator("#lb tr").nth(1).locator("td").nth(1).bounding_box()
        assert abs(run_cell["x"] - left) < 2 and abs(mode_cell["x"] - (run_cell["x"] + run_cell["width"])) < 3
