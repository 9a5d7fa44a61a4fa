"""The item browser answers "did the answer change because of the image?" on one card (issue 50, point 10), in
Chromium: every image-variant card (V1, V2, ...) shows the clean item's image and answer, and the model's answer on
it, beside the variant's; other cards do not; the first page shows the report's best model in its headline mode
(not whichever run sorts first, e.g. `random · blind`), its image variants first."""

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


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cards")
    fx = make_fixture(root, ("independent", "blind", "chain-own"))
    out = root / "report"
    write_report(fx.runs, out)
    return out


def _data(page) -> dict:  # type: ignore[no-untyped-def]
    return json.loads(page.locator("#medr2-data").text_content())


def test_image_variant_cards_show_the_clean_item_beside_the_variant(report: Path) -> None:
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.goto((report / "index.html").as_uri())
        page.wait_for_selector("#cards article")
        data = _data(page)
        rows = {(r["r"], r["m"], r["id"]): r for r in data["rows"]}
        variants = sorted({r["v"] for r in data["rows"]})
        visual = [v for v in variants if v.startswith("V")]
        assert visual and [v for v in variants if not v.startswith("V")]
        checked = 0
        for v in variants:
            page.select_option("#f-variant", v)
            for card in page.locator("#cards article").all():
                meta = card.locator(".meta").text_content()
                run_label, mode, *_rest = [x.strip() for x in meta.split("·")]
                item_id = meta.rsplit("·", 1)[1].strip()
                r = next(i for i, run in enumerate(data["runs"]) if run_label.endswith(run["label"]))
                row = rows[(r, mode, item_id)]
                clean = card.locator("[data-role=clean]")
                if not v.startswith("V"):
                    assert clean.count() == 0, (v, item_id)
                    continue
                assert clean.count() == 1, (v, item_id)
                c = row["clean"]
                parent = rows.get((r, mode, c["id"]))
                # the clean image is drawn, and it is the clean item's own image (the same thumbnail)
                assert clean.locator("img").get_attribute("src") == data["images"][c["img"]]
                if parent is not None:
                    assert c["img"] == parent["img"] and c["a"] == parent["a"]
                    assert c["p"] == parent["p"] and c["vd"] == parent["vd"]
                    text = clean.text_content()
                    assert f"model's answer: {parent['p']} ({parent['vd']})" in text or parent["p"] is None
                    flag = clean.locator("[data-role=changed]").text_content()
                    assert ("changed" in flag) == (str(parent["p"]) != str(row["p"])), (flag, parent["p"], row["p"])
                assert card.locator(".variant img").count() == 1  # the variant's own image beside it
                checked += 1
        assert checked > 0


def test_the_first_page_is_the_best_model_in_its_headline_mode(report: Path) -> None:
    lb = json.loads((report / "leaderboard.json").read_text())
    independent = [r for r in lb["rows"] if r["mode"] == "independent"]
    best = max(independent, key=lambda r: r["metrics"]["overall"]["value"])
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.goto((report / "index.html").as_uri())
        page.wait_for_selector("#cards article")
        metas = page.eval_on_selector_all("#cards article .meta", "els => els.map(e => e.textContent)")
        assert metas and all(f"{best['run']} · independent ·" in m for m in metas[:3]), metas[:3]
        first_variants = [m.split("·")[3].strip() for m in metas[:3]]
        assert first_variants[0].startswith("V"), first_variants  # an image variant with its clean item first
