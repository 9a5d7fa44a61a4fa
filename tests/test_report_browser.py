"""The HTML report in headless Chromium (the distribution's package, driven by Playwright): it renders
from a file:// URL with no console error, fetches nothing, filters work, and a model output containing
<script> is shown as text without running."""

from __future__ import annotations

from pathlib import Path

import pytest

from medr2.report import write_report
from medr2.report.screenshot import CHROMIUM, chromium_browser, screenshot
from tests.report_fixtures import HOSTILE, SCRIPT, Fixture, make_fixture

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason=f"{CHROMIUM} absent (scripts/install.sh --dev installs the chromium package)")
pytest.importorskip("playwright", reason="the playwright package is a dev dependency")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("browser")
    fx: Fixture = make_fixture(root)
    out = root / "report"
    write_report(fx.runs, out)
    return out


def _visible_verdicts(page) -> list[str]:  # type: ignore[no-untyped-def]
    return page.eval_on_selector_all("#cards article", "els => els.map(e => e.getAttribute('data-verdict'))")


def test_report_in_chromium(report: Path) -> None:
    errors: list[str] = []
    dialogs: list[str] = []
    requests: list[str] = []
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning")
                else None)
        page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("request", lambda r: requests.append(r.url))
        page.goto((report / "index.html").as_uri())
        page.wait_for_selector("#cards article")

        # leaderboard and plots rendered (plots decoded: natural width > 0)
        assert page.locator("#leaderboard tr").count() == 3
        widths = page.eval_on_selector_all("#plots img", "els => els.map(e => e.naturalWidth)")
        assert len(widths) == 6 and min(widths) > 300

        # filter by verdict: the visible rows change and all carry that verdict
        before = _visible_verdicts(page)
        assert len(set(before)) > 1
        total = page.locator("#count").text_content()
        page.select_option("#f-verdict", "unparsed")
        after = _visible_verdicts(page)
        assert after and set(after) == {"unparsed"} and after != before
        assert page.locator("#count").text_content() != total
        page.select_option("#f-verdict", "")
        page.select_option("#f-task", "s3.cue_description")
        tasks = page.eval_on_selector_all("#cards article .meta", "els => els.map(e => e.textContent)")
        assert tasks and all("s3.cue_description" in t for t in tasks)
        assert page.locator("#cards article svg rect").count() >= len(tasks)  # the cue drawn over the image
        page.select_option("#f-task", "")

        # the <script> response is shown as text and did not run
        page.fill("#f-text", "alert(1)")
        texts = page.eval_on_selector_all("pre[data-role=response]", "els => els.map(e => e.textContent)")
        assert SCRIPT in texts
        page.fill("#f-text", "onerror")
        texts = page.eval_on_selector_all("pre[data-role=response]", "els => els.map(e => e.textContent)")
        assert HOSTILE["img"] in texts
        injected = "#cards script, #cards img:not([src^='data:']), pre[data-role=response] *"
        assert page.eval_on_selector_all(injected, "els => els.length") == 0

        # pagination
        page.fill("#f-text", "")
        page.click("#next")
        assert page.locator("#page").text_content().startswith("page 2 /")
    assert errors == []
    assert dialogs == []
    assert requests and all(u.startswith(("file:", "data:")) for u in requests), requests


def test_screenshot_command(report: Path, tmp_path: Path) -> None:
    from PIL import Image

    out = tmp_path / "shot.png"
    assert screenshot(report, out, width=1200, height=1600) == []
    with Image.open(out) as im:
        assert im.size == (1200, 1600)
