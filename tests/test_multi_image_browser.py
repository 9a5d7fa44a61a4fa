"""Items of several images (issue 49) in headless Chromium: the report's item browser, ``medr2 view`` and the human
reader's page show every image of an item, in order, each with its role ("Image 1: prior study, 90 days before
the current one"), with no console error."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import medr2
from medr2 import BoxConvention, GenSettings, Request, Response
from medr2.reporting import write_report
from medr2.reporting.screenshot import CHROMIUM, chromium_browser
from medr2.run.prompts import MODES, render_messages
from medr2.scoring.scorer import score_run
from tests.multi_image_fixtures import make_multi_bench

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason=f"{CHROMIUM} absent (scripts/install.sh --dev installs the chromium package)")
pytest.importorskip("playwright", reason="the playwright package is a dev dependency")

PRIOR = ["Image 1: prior study, 90 days before the current one", "Image 2: current study"]
VIEW = ["Image 1: lateral view of the current study", "Image 2: current study"]


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    root = tmp_path_factory.mktemp("multi_browser")
    bench = make_multi_bench(root / "bench")
    run = root / "run"
    medr2.evaluate(bench.root, "baseline:random", run, split="all", mode="independent", progress=False)
    score_run(run, mixed_splits=True, n_resamples=50)
    return bench, run


def _watch(page: Any, errors: list[str]) -> None:
    page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning")
            else None)
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))


def _image_sets(page: Any) -> list[dict[str, Any]]:
    """Per card showing several images: its captions and the natural widths of its images."""
    return page.eval_on_selector_all("#cards article [data-role=images]", """els => els.map(e => ({
        caps: Array.from(e.querySelectorAll('[data-role=image-role]')).map(c => c.textContent),
        widths: Array.from(e.querySelectorAll('img')).map(i => i.naturalWidth)}))""")


def _check_cards(page: Any) -> None:
    sets = _image_sets(page)
    assert sets, "no card shows several images"
    assert {tuple(s["caps"]) for s in sets} <= {tuple(PRIOR), tuple(VIEW)}
    assert all(len(s["widths"]) == 2 and min(s["widths"]) > 0 for s in sets), sets


def test_report_shows_every_image_with_its_role(scored: tuple[Any, Path], tmp_path: Path) -> None:
    _, run = scored
    index = write_report([run], tmp_path / "report")
    errors: list[str] = []
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        _watch(page, errors)
        page.goto(index.as_uri())
        page.wait_for_selector("#cards article")
        _check_cards(page)
        marks = page.eval_on_selector_all("#cards .imgmark", "els => els.map(e => e.textContent)")
        assert any(m.startswith("[image sent: Image 1: ") for m in marks), marks[:5]
    assert errors == []


def test_view_shows_every_image_with_its_role(scored: tuple[Any, Path]) -> None:
    bench, run = scored
    item = next(it for it in bench.items if len(it.images) == 2 and it.images[0].role == "prior")
    server = medr2.view([run], port=0, block=False)
    errors: list[str] = []
    try:
        with chromium_browser() as browser:
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            _watch(page, errors)
            page.goto(server.url + f"item?id={item.item_id}")
            page.wait_for_selector("#cards article")
            sets = _image_sets(page)
            assert sets and all(s["caps"] == PRIOR and min(s["widths"]) > 0 for s in sets), sets
    finally:
        server.stop()
    assert errors == []


@pytest.fixture()
def reader() -> Iterator[Any]:
    from medr2.viewer.human import HumanAdapter

    ad = HumanAdapter("alice", port=0, announce=False)
    try:
        yield ad
    finally:
        ad.close()


def test_reader_page_shows_every_image_with_its_role(scored: tuple[Any, Path], reader: Any) -> None:
    bench, _ = scored
    item = next(it for it in bench.items if len(it.images) == 2 and it.images[0].role == "prior"
                and it.form == "yesno")
    msgs = render_messages(item, mode=MODES["independent"], history=(), conv=BoxConvention())
    req = Request(key="a" * 64, messages=msgs, settings=GenSettings(), bench_root=bench.root, item_id=item.item_id,
                  meta={"item": item})
    got: list[list[Response]] = []
    asking = threading.Thread(target=lambda: got.append(reader.generate([req])), daemon=True)
    asking.start()
    errors: list[str] = []
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        _watch(page, errors)
        page.goto(reader.url)
        page.wait_for_selector("#answer")
        caps = page.eval_on_selector_all(".rd-asked .rd-caption", "els => els.map(e => e.textContent)")
        widths = page.eval_on_selector_all(".rd-asked img", "els => els.map(e => e.naturalWidth)")
        assert caps == PRIOR and len(widths) == 2 and min(widths) > 0
        with page.expect_navigation():
            page.click("button.choice[value='yes']")
        asking.join(timeout=30)
        assert not asking.is_alive(), page.content()[:2000]
    assert got and got[0][0].status == "ok" and got[0][0].text is not None
    assert errors == []
