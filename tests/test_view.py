"""``medr2 view`` in headless Chromium (the distribution's package, driven by Playwright) against a real server on
127.0.0.1: the leaderboard sorts, keeps run and mode in place when scrolled, shows a column when ticked; a click on
a task cell opens exactly that task's items of that run and mode, paged; a click on an item shows every run's
answer side by side with the image, the correct box, the messages as sent, the extraction's reading. A subgroup
slice (``medr2 score --slice``) opens its items too. Model output and a hostile run name are shown as text (no
dialog, no console error: the CSP blocked nothing the page needed). Screenshots of each view are written to docs/
(view-leaderboard.png, view-items.png, view-item.png)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import medr2
from medr2.reporting.screenshot import CHROMIUM, chromium_browser
from tests.report_fixtures import HOSTILE, make_fixture

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason=f"{CHROMIUM} absent (scripts/install.sh --dev installs the chromium package)")
pytest.importorskip("playwright", reason="the playwright package is a dev dependency")

DOCS = Path(__file__).resolve().parents[1] / "docs"
HOSTILE_NAME = "run_<img src=x onerror=alert(7)>"


@pytest.fixture(scope="module")
def view(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, list[Path]]]:
    root = tmp_path_factory.mktemp("view")
    fx = make_fixture(root)
    hostile = root / HOSTILE_NAME
    shutil.copytree(fx.runs[1], hostile)
    medr2.score(hostile, slice=["modality"], resamples=50)  # its subgroup table's slices are links too
    runs = [*fx.runs, hostile]
    server = medr2.view(runs, port=0, block=False)
    try:
        yield server, runs
    finally:
        server.stop()


def _watch(page: Any, errors: list[str], dialogs: list[str], requests: list[str]) -> None:
    page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning")
            else None)
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))


def _column(page: Any, key: str) -> list[str]:
    return page.eval_on_selector_all(f"#lb td[data-key='{key}']", "els => els.map(e => e.getAttribute('data-v'))")


def test_leaderboard_to_task_cell_to_item(view: tuple[Any, list[Path]]) -> None:
    server, runs = view
    errors: list[str] = []
    dialogs: list[str] = []
    requests: list[str] = []
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        _watch(page, errors, dialogs, requests)
        page.goto(server.url)
        page.wait_for_selector("#lb")

        # one row per run and mode, the hostile run name shown as text
        assert page.locator("#lb tr").count() == 1 + len(runs)
        assert HOSTILE_NAME in page.locator("#runs").inner_text()

        # sort by overall: best first, then the other way
        page.click("#lb th[data-key='overall']")
        values = [float(v) for v in _column(page, "overall") if v]
        assert values == sorted(values, reverse=True)
        page.click("#lb th[data-key='overall']")
        values = [float(v) for v in _column(page, "overall") if v]
        assert values == sorted(values)

        # a task column is hidden until ticked
        task = "task:s1.modality"
        cell = page.locator(f"#lb td[data-key='{task}']").first
        assert not cell.is_visible()
        page.check(f"#cols input[data-col='{task}']")
        assert cell.is_visible()

        # run and mode stay in place when the table scrolls sideways
        page.set_viewport_size({"width": 700, "height": 900})
        before = page.locator("#lb td.c2").first.bounding_box()
        page.eval_on_selector("#leaderboard .scroll", "e => { e.scrollLeft = 5000; }")
        assert page.eval_on_selector("#leaderboard .scroll", "e => e.scrollLeft") > 0
        after = page.locator("#lb td.c2").first.bounding_box()
        assert before is not None and after is not None and abs(before["x"] - after["x"]) < 1
        page.eval_on_selector("#leaderboard .scroll", "e => { e.scrollLeft = 0; }")
        page.set_viewport_size({"width": 1300, "height": 900})
        page.screenshot(path=str(DOCS / "view-leaderboard.png"), full_page=True)

        # the task cell of the first run opens its items: that run, that mode, that task only
        first = page.locator("#lb tr").nth(1)
        run_label = first.locator("td.c1").get_attribute("data-v")
        mode = first.locator("td.c2").get_attribute("data-v")
        first.locator(f"td[data-key='{task}'] a.drill").click()
        page.wait_for_selector("#cards article")
        run = next(r for r in runs if r.name == run_label)
        want = [r for r in pq.read_table(str(run / "scores.parquet")).to_pylist()
                if r["task"] == "s1.modality" and r["mode"] == mode]
        assert page.locator("#count").get_attribute("data-total") == str(len(want))
        metas = page.eval_on_selector_all("#cards article .meta", "els => els.map(e => e.textContent)")
        assert metas and all(f"{run_label} · {mode} · S1 s1.modality" in m for m in metas)
        assert page.eval_on_selector("#f-task", "e => e.value") == "s1.modality"
        widths = page.eval_on_selector_all("#cards article .thumb img", "els => els.map(e => e.naturalWidth)")
        assert widths and min(widths) > 0  # the images came from the server's image route
        page.screenshot(path=str(DOCS / "view-items.png"), full_page=False)

        # filter on to the unparsed answers of every task with the form
        page.select_option("#f-task", "")
        page.select_option("#f-verdict", "unparsed")
        page.click("#filters button[type=submit]")
        page.wait_for_load_state()
        verdicts = page.eval_on_selector_all("#cards article", "els => els.map(e => e.getAttribute('data-verdict'))")
        assert verdicts and set(verdicts) == {"unparsed"}

        # one item, every run's answer side by side
        page.locator(".slot a.compare").first.click()
        page.wait_for_selector("#cards article")
        cards = page.locator("#cards article")
        assert cards.count() == len(runs)
        assert page.locator("#cards .dialogue").count() == len(runs)  # the messages exactly as sent
        texts = page.eval_on_selector_all("#cards article .kv", "els => els.map(e => e.textContent)")
        assert sum(t.startswith("parsed answer") for t in texts) == len(runs)  # the extraction's reading
        assert sum(t.startswith("correct answer") for t in texts) >= len(runs)
        widths = page.eval_on_selector_all("#cards article .thumb img", "els => els.map(e => e.naturalWidth)")
        assert len(widths) == len(runs) and min(widths) > 0
        whos = page.eval_on_selector_all(".slot .who", "els => els.map(e => e.textContent)")
        assert any(HOSTILE_NAME in w for w in whos)
        boxes = page.locator(".cards.side .slot").evaluate_all("els => els.map(e => e.getBoundingClientRect().top)")
        assert len(set(round(b) for b in boxes)) < len(boxes)  # side by side: cards share a row
        page.screenshot(path=str(DOCS / "view-item.png"), full_page=False)

        # the hostile responses are text on the items page (searching every independent row)
        page.goto(server.url + f"items?run=0&mode={mode}&size=200")
        page.wait_for_selector("#cards article")
        shown = page.eval_on_selector_all("pre[data-role=response]", "els => els.map(e => e.textContent)")
        assert HOSTILE["img"] in shown
        injected = "#cards script, #cards img:not([src^='/img/']), pre[data-role=response] *"
        assert page.eval_on_selector_all(injected, "els => els.length") == 0

        # a subgroup slice opens its items: that run, that slice
        page.goto(server.url)
        link = page.locator("#subgroups a.drill").first
        label = link.text_content()
        link.click()
        page.wait_for_selector("#cards article")
        assert f"modality</b> = {label}" in page.inner_html("[data-role=slice]")
        metas = page.eval_on_selector_all("#cards article .meta", "els => els.map(e => e.textContent)")
        assert metas and all(f"{HOSTILE_NAME} · " in m for m in metas)
    assert errors == []
    assert dialogs == []
    assert requests and all(u.startswith(server.url) or u.startswith("data:") for u in requests), requests


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Two runs on one bench through a scripted server on 127.0.0.1: one whose rationales carry claims (reasoning
    mode, scored with the claim check), one with per-answer log-probabilities (``--confidence logprobs``)."""
    from medr2.scoring.scorer import score_run
    from tests.run_fixtures import make_bench
    from tests.test_report_claims import _reasoning_run
    from tests.test_score_calibration_e2e import logprob_run

    root = tmp_path_factory.mktemp("view_audited")
    bench = make_bench(root / "bench", n_cases=6)
    claims_run, conf_run = root / "claims-run", root / "conf-run"
    _reasoning_run(bench, claims_run)
    score_run(claims_run, mixed_splits=True, n_resamples=50)
    logprob_run(bench.root, conf_run)
    score_run(conf_run, mixed_splits=True, n_resamples=50)
    server = medr2.view([claims_run, conf_run], port=0, block=False)
    try:
        yield server
    finally:
        server.stop()


def test_an_item_shows_claims_and_confidence_side_by_side(audited: Any) -> None:
    errors: list[str] = []
    dialogs: list[str] = []
    requests: list[str] = []
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        _watch(page, errors, dialogs, requests)
        page.goto(audited.url + "items?run=0&mode=reasoning&size=200")
        page.wait_for_selector("#cards article")
        with_claims = page.locator(".slot", has=page.locator("[data-role=claims-legend]"))
        assert with_claims.count() > 0
        item = with_claims.first.get_attribute("data-item")
        page.goto(audited.url + f"item?id={item}")
        page.wait_for_selector("#cards article")
        whos = page.eval_on_selector_all(".slot .who", "els => els.map(e => e.textContent)")
        assert any(w.startswith("claims-run") for w in whos) and any(w.startswith("conf-run") for w in whos)
        assert page.locator("#cards [data-role=claims-legend]").count() >= 1
        assert page.locator("#cards mark.claim").count() >= 1  # claims marked in the response
        texts = page.eval_on_selector_all("#cards article .kv", "els => els.map(e => e.textContent)")
        assert any(t.startswith("confidence: ") and "(logprobs)" in t for t in texts), texts
        assert page.eval_on_selector_all("#cards pre script, #cards mark script", "els => els.length") == 0
    assert errors == [] and dialogs == []
    assert all(u.startswith(audited.url) for u in requests), requests
