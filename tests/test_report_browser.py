"""The HTML report in headless Chromium (the distribution's package, driven by Playwright): it renders
from a file:// URL with no console error, fetches nothing, filters work, and a model output containing
<script> is shown as text without running."""

from __future__ import annotations

from pathlib import Path

import pytest

from medr2.reporting import write_report
from medr2.reporting.screenshot import CHROMIUM, chromium_browser, screenshot
from tests.report_fixtures import HOSTILE, SCRIPT, Fixture, make_fixture
from tests.test_report_plots import check_n_labels

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
        assert len(widths) == len(list((report / "plots").iterdir())) == 7 and min(widths) > 300

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


DEMO_MODES = ("independent", "blind", "chain-own")


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo-sized report: two runs in the independent, blind and chain-own modes, each answer stored with
    the messages the model received."""
    root = tmp_path_factory.mktemp("browser_demo")
    fx = make_fixture(root, DEMO_MODES)
    out = root / "report"
    write_report(fx.runs, out)
    return out


def _overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_demo_report_readable_in_chromium(demo_report: Path) -> None:
    import json

    errors: list[str] = []
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto((demo_report / "index.html").as_uri())
        page.wait_for_selector("#cards article")

        # plots: the layout matplotlib drew (carried on each figure) -- one colour per series in every axes,
        # no legend over an axes (so over no bar or line), no two stage labels overlapping
        layouts = {f: json.loads(v) for f, v in page.eval_on_selector_all(
            "#plots figure", "els => els.map(e => [e.id, e.getAttribute('data-layout')])")}
        assert {"plot-stage_curves", "plot-prompt_reliance", "plot-visual_reliance",
                "plot-robustness_heatmap"} <= set(layouts)
        n_series = 0
        for fig, lay in layouts.items():
            for ax in lay["axes"]:
                colours = list(ax["series"].values())
                assert len(colours) == len(set(colours)), (fig, ax["series"])
                n_series += len(colours)
                for legend in lay["legends"]:
                    assert not _overlap(legend, ax["box"]), (fig, legend, ax["box"])
                    assert not any(_overlap(legend, bar) for bar in ax["bars"]), fig
                ticks = ax["ticks"]
                assert not any(_overlap(ticks[i], ticks[j]) for i in range(len(ticks))
                               for j in range(i + 1, len(ticks))), (fig, ticks)
                # every bar has its n label (items, cases), inside the axes, over no bar, tick, legend or label;
                # all from < 10 cases here: marked † and hatched
                check_n_labels(fig, ax, lay["legends"])
                assert all(t.startswith("n=") and t.endswith("c†") for t in ax["ntexts"]), ax["ntexts"]
                assert all(ax["hatched"]), fig
        stage_axes = layouts["plot-stage_curves"]["axes"]
        assert len(stage_axes) >= len(DEMO_MODES)  # modes as panels
        assert all(set(ax["series"]) == {"run_before", "run_after"} for ax in stage_axes)  # one series per run
        assert any(ax["bars"] for ax in layouts["plot-visual_reliance"]["axes"])
        assert sum(len(ax["nlabels"]) for f in ("plot-prompt_reliance", "plot-visual_reliance")
                   for ax in layouts[f]["axes"]) > 10
        assert n_series > 0

        # every leaderboard value has its n (units and cases); all from < 10 cases here, so all marked †
        cells = page.eval_on_selector_all(
            "#leaderboard td.num", "els => els.map(e => [e.childNodes[0] ? e.childNodes[0].textContent : '', "
            "(e.querySelector('.n') || {}).textContent || ''])")
        values = [(v, n) for v, n in cells if v.strip() != "n/a"]
        assert len(values) > 20
        for v, n in values:
            assert n.startswith("n=") and "case" in n, (v, n)
            assert v.endswith("†"), v

        # a chain-own card shows the earlier turns of its dialogue, the model's own answers among them
        page.select_option("#f-mode", "chain-own")
        page.select_option("#f-stage", "4")
        card = page.locator("#cards article").first
        speakers = card.locator("[data-role=dialogue] > [data-role=turn]").evaluate_all(
            "els => els.map(e => e.getAttribute('data-speaker'))")
        assert speakers[:2] == ["user", "assistant"] and len(speakers) >= 4, speakers
        assert "before the question" in card.locator(".dlg-head").text_content()
        assert card.locator("[data-role=withheld]").count() == 0
        assert "image sent" in card.locator("[data-role=dialogue] .imgmark").first.text_content()
        # the earlier answers are the model's (hostile ones shown as text, never as markup)
        page.select_option("#f-stage", "")
        page.fill("#f-text", "")
        turns = page.eval_on_selector_all("[data-role=turn][data-speaker=assistant]",
                                          "els => els.map(e => e.textContent)")
        assert turns
        assert page.eval_on_selector_all("#cards .dialogue script, #cards .dialogue img:not([src^='data:'])",
                                         "els => els.length") == 0

        # a blind card says the image was withheld; an independent one does not
        page.select_option("#f-mode", "blind")
        blind = page.locator("#cards article")
        assert blind.count() > 0
        notes = blind.locator("[data-role=withheld]").all_text_contents()
        with_image = blind.locator(".thumb img").count()
        assert with_image > 0 and len(notes) == with_image
        assert all("image withheld from the model" in t for t in notes)
        assert "no image" in blind.first.locator(".dlg-head").text_content()
        page.select_option("#f-mode", "independent")
        assert page.locator("#cards [data-role=withheld]").count() == 0

        # the runs table says what is real and what synthetic, per field
        assert "image: real in 4 of 4; synthetic: findings 4 of 4" in page.locator("#runs").text_content()
        # the leaderboard's run and mode columns stay in view when the table scrolls sideways
        page.set_viewport_size({"width": 700, "height": 900})
        box = page.locator("#leaderboard .scroll")
        box.evaluate("e => { e.scrollLeft = 500; }")
        assert box.evaluate("e => e.scrollLeft") > 0
        left = box.bounding_box()["x"]
        first = page.locator("#leaderboard tr").nth(1).locator("td").first.bounding_box()
        second = page.locator("#leaderboard tr").nth(1).locator("td").nth(1).bounding_box()
        assert abs(first["x"] - left) < 2 and abs(second["x"] - (first["x"] + first["width"])) < 3
    assert errors == []
