"""``medr2 review`` in headless Chromium (driven by Playwright) against a real server on 127.0.0.1: two reviewers
type their names and review the same items (accept, reject with a reason, a fix of the question), differing on
some; the agreement page shows Cohen's κ per task and the items they disagree on; one is adjudicated. Then what
landed on disk (``reviews.sqlite``: every review and the adjudication, ``items.parquet`` untouched) and what
``medr2 eval --reviewed accepted`` and ``medr2 score`` make of it: exactly the accepted items scored. No console
error, no dialog (the CSP blocked nothing the pages needed). A box is drawn with the mouse on a box item's image
(review.js) by two reviewers: the fields filled, the stored box the one dragged, and the fixed item it makes evaluated
under ``--reviewed accepted``. Screenshots of each view go to docs/ (review-*.png)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import medr2
from medr2 import Request, Response
from medr2.bench.reviews import read_reviews, reviewed_selection
from medr2.bench.table import BenchTable
from medr2.reporting.screenshot import CHROMIUM, chromium_browser
from tests.report_fixtures import build_bench

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason=f"{CHROMIUM} absent (scripts/install.sh --dev installs the chromium package)")
pytest.importorskip("playwright", reason="the playwright package is a dev dependency")

DOCS = Path(__file__).resolve().parents[1] / "docs"
EDITED = "Which is the most likely diagnosis on this image?"
# per item (bench order): (ana's verdict, reason), (ben's verdict, reason); a fix edits the question to EDITED
PLAN: list[tuple[tuple[str, str], tuple[str, str]]] = [
    (("accept", ""), ("accept", "")),
    (("accept", ""), ("reject", "not answerable from the image")),  # disputed: adjudicated below (accept)
    (("accept", ""), ("accept", "")),
    (("fix", "ambiguous question"), ("fix", "ambiguous question")),  # the same fix: a fixed item
    (("reject", "flawed options"), ("reject", "flawed options")),
    (("accept", ""), ("reject", "ambiguous question")),  # disputed: stays in the queue
    (("accept", ""), ("accept", "")),
    (("accept", ""), ("accept", "")),
]


IMAGES: list[int] = []  # the statuses of the image route's answers the pages got


def _watch(page: Any, errors: list[str], dialogs: list[str]) -> None:
    page.on("response", lambda r: IMAGES.append(r.status) if "/img/0/" in r.url else None)
    page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning")
            else None)
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))


def _review(page: Any, verdict: str, reason: str) -> str:
    """Mark the item shown and save; returns its id."""
    item_id = page.get_attribute("#verdict-form input[name=item_id]", "value")
    page.check(f"#verdict-form input[name=verdict][value={verdict}]")
    if reason:
        page.select_option("#verdict-form select[name=reason]", reason)
    if verdict == "fix":
        if not page.is_visible("#verdict-form textarea[name=question]"):
            page.click("#verdict-form details.fix summary")
        page.fill("#verdict-form textarea[name=question]", EDITED)
    with page.expect_navigation():
        page.click("#save")
    return str(item_id)


def _oracle(bench: Path, fixed: Any = ()) -> Any:
    """A model giving each item's key (the fixed items' as fixed)."""
    by_id = {it.item_id: it for it in [*BenchTable(bench).iter_items(), *fixed]}

    def model(request: Request) -> str | Response:
        it = by_id[request.item_id]
        return json.dumps(list(it.answer_box)) if it.form == "box" and it.answer_box else it.answer

    return model


def test_two_reviewers_agreement_adjudication_then_eval(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    build_bench(bench, None)
    ids = [it.item_id for it in BenchTable(bench).iter_items()][:len(PLAN)]
    items_before = (bench / "items.parquet").read_bytes()
    server = medr2.review(bench, port=0, block=False)
    errors: list[str] = []
    dialogs: list[str] = []
    try:
        with chromium_browser() as browser:
            for who, column in (("ana", 0), ("ben", 1)):
                page = browser.new_page(viewport={"width": 1300, "height": 900})
                _watch(page, errors, dialogs)
                page.goto(server.url)
                page.fill("#start-form input[name=reviewer]", who)
                with page.expect_navigation():
                    page.click("#start-form button[type=submit]")
                for k, plan in enumerate(PLAN):
                    assert page.locator("[data-role=progress]").count() == 1, (who, k, page.inner_text("main"))
                    assert page.text_content("[data-role=progress]") == f"{k} of 32 items reviewed by {who}"
                    if k == 2:  # the box item: its image loaded from the image route, the box drawn over it
                        assert page.locator("[data-role=box]").count() == 1
                        size = page.eval_on_selector("svg[data-role=image]", "s => s.getBoundingClientRect().width")
                        assert size > 300
                    assert _review(page, *plan[column]) == ids[k]
                page.close()

            page = browser.new_page(viewport={"width": 1300, "height": 900})
            _watch(page, errors, dialogs)
            page.goto(server.url + "review/queue")
            # agreement per task with its interval; the two disputed items queued
            tasks = page.eval_on_selector_all("#agreement tr[data-task]", "rs => rs.map(r => r.dataset.task)")
            assert tasks and all(t.startswith("s") for t in tasks)
            queued = page.eval_on_selector_all("#queue-table tr[data-item]", "rs => rs.map(r => r.dataset.item)")
            assert sorted(queued) == sorted([ids[1], ids[5]])
            page.screenshot(path=str(DOCS / "review-queue.png"), full_page=True)

            page.click(f"#queue-table tr[data-item='{ids[1]}'] a.adjudicate")
            page.wait_for_selector("#adjudicate")
            assert page.locator("#reviews tr").count() == 3  # header, ana, ben
            page.fill("#verdict-form input[name=adjudicator]", "chi")
            page.check("#verdict-form input[name=verdict][value=accept]")
            page.screenshot(path=str(DOCS / "review-adjudicate.png"), full_page=True)
            with page.expect_navigation():
                page.click("#save")
            queued = page.eval_on_selector_all("#queue-table tr[data-item]", "rs => rs.map(r => r.dataset.item)")
            assert queued == [ids[5]]
            assert page.locator(f"#adjudicated-table tr[data-item='{ids[1]}']").count() == 1

            page.goto(server.url)
            counts = page.text_content("[data-role=counts]") or ""
            assert "reviewed 8 of 32 items" in counts and "fixed 1" in counts and "rejected 1" in counts
            assert page.locator("#fixed tr").count() == 2  # header and the one fixed item
            page.screenshot(path=str(DOCS / "review-home.png"), full_page=True)
            page.close()
    finally:
        server.stop()
    assert not errors and not dialogs, (errors, dialogs)
    assert IMAGES and set(IMAGES) == {200}  # every item's image came from the bench through the image route

    # on disk: every review and the adjudication, append-only rows; the bench's tables untouched
    assert (bench / "items.parquet").read_bytes() == items_before
    conn = sqlite3.connect(bench / "reviews.sqlite")
    try:
        rows = conn.execute("SELECT reviewer, item_id, verdict, reason, edits FROM reviews ORDER BY id").fetchall()
        adj = conn.execute("SELECT adjudicator, item_id, verdict FROM adjudications").fetchall()
    finally:
        conn.close()
    want = [(who, ids[k], PLAN[k][c][0], PLAN[k][c][1],
             json.dumps({"question": EDITED}) .replace(" ", "") if PLAN[k][c][0] == "fix" else "{}")
            for c, who in enumerate(("ana", "ben")) for k in range(len(PLAN))]
    assert [(a, b, c, d, e.replace(" ", "")) for a, b, c, d, e in rows] == want
    assert adj == [("chi", ids[1], "accept")]
    outcomes = read_reviews(bench).outcomes()
    assert {i: o.status for i, o in outcomes.items()} == {
        ids[0]: "accept", ids[1]: "accept", ids[2]: "accept", ids[3]: "fix", ids[4]: "reject",
        ids[5]: "disputed", ids[6]: "accept", ids[7]: "accept"}
    accepted = {ids[k] for k in (0, 1, 2, 6, 7)}
    sel = reviewed_selection(bench, "accepted")
    assert sel.accepted == accepted and [f.parent_id for f in sel.fixed] == [ids[3]]
    assert sel.fixed[0].question == EDITED

    # what eval --reviewed accepted asks and score reports: exactly the accepted items, every one answered
    run = tmp_path / "run"
    medr2.evaluate(bench, _oracle(bench, sel.fixed), run, split="all", reviewed="accepted", command=["test"])
    metrics = medr2.score(run, mixed_splits=True, resamples=0)
    scored = pq.read_table(run / "scores.parquet", columns=["item_id", "verdict"]).to_pylist()
    # the accepted items and the fixed one (its parent, the original, not asked)
    assert {r["item_id"] for r in scored} == accepted | {sel.fixed[0].item_id} and metrics["complete"] is True
    assert {r["verdict"] for r in scored} == {"correct"}
    shutil.rmtree(run)


def _drag(page: Any, box: tuple[float, float, float, float]) -> None:
    """Drag the mouse over the item's image from (x1, y1) to (x2, y2), in pixels of the image (a quarter pixel
    in, so the page rounds to them), through a few intermediate moves."""
    rect = page.eval_on_selector("svg[data-role=image]", "s => { const r = s.getBoundingClientRect(); "
                                 "return [r.left, r.top, r.width, s.viewBox.baseVal.width]; }")
    left, top, shown, width = rect
    scale = shown / width

    def at(x: float, y: float) -> tuple[float, float]:
        return left + (x + 0.25) * scale, top + (y + 0.25) * scale

    page.mouse.move(*at(box[0], box[1]))
    page.mouse.down()
    page.mouse.move(*at(box[2], box[3]), steps=5)
    page.mouse.up()


def test_a_box_drawn_with_the_mouse_is_the_fix_stored_and_evaluated(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    build_bench(bench, None)
    box_item = next(it for it in BenchTable(bench).iter_items() if it.form == "box")
    assert box_item.answer_box is not None and box_item.image_width and box_item.image_height
    w, h = box_item.image_width, box_item.image_height
    drawn = (round(w * 0.1), round(h * 0.2), round(w * 0.4), round(h * 0.5))
    server = medr2.review(bench, port=0, block=False)
    errors: list[str] = []
    dialogs: list[str] = []
    try:
        with chromium_browser() as browser:
            for who in ("ana", "ben"):
                page = browser.new_page(viewport={"width": 1300, "height": 900})
                _watch(page, errors, dialogs)
                page.goto(f"{server.url}review/item?reviewer={who}&id={box_item.item_id}")
                assert page.locator("[data-role=box-hint]").count() == 1  # the script ran
                assert not page.is_checked("#verdict-form input[name=verdict][value=fix]")
                _drag(page, drawn)
                fields = [page.input_value(f"#verdict-form input[name=box_{k}]") for k in ("x1", "y1", "x2", "y2")]
                assert [float(v) for v in fields] == [float(v) for v in drawn]
                assert page.is_checked("#verdict-form input[name=verdict][value=fix]")  # a drawn box is a fix
                assert page.input_value("#verdict-form select[name=reason]") == "wrong or missing box"
                shown = page.eval_on_selector("[data-role=drawn-box]", "r => [r.getAttribute('visibility'), "
                                              "+r.getAttribute('x'), +r.getAttribute('y'), "
                                              "+r.getAttribute('width'), +r.getAttribute('height')]")
                assert shown == ["visible", drawn[0], drawn[1], drawn[2] - drawn[0], drawn[3] - drawn[1]]
                if who == "ben":  # the item page, a box drawn over the image and its fields filled
                    page.screenshot(path=str(DOCS / "review-item.png"), full_page=True)
                with page.expect_navigation():
                    page.click("#save")
                page.close()
    finally:
        server.stop()
    assert not errors and not dialogs, (errors, dialogs)
    rows = read_reviews(bench).reviews
    assert [(r.by, r.item_id, r.verdict, r.reason) for r in rows] == [
        (who, box_item.item_id, "fix", "wrong or missing box") for who in ("ana", "ben")]
    assert all(r.edits == {"answer_box": [float(v) for v in drawn]} for r in rows)
    # the agreed fix is an item: eval --reviewed accepted asks it (a model giving the drawn box is right)
    sel = reviewed_selection(bench, "accepted")
    assert [f.answer_box for f in sel.fixed] == [tuple(float(v) for v in drawn)] and not sel.accepted
    run = tmp_path / "run"

    def model(request: Request) -> str | Response:
        assert request.item_id == sel.fixed[0].item_id  # only the fixed item is asked
        return json.dumps(list(drawn))

    medr2.evaluate(bench, model, run, split="all", reviewed="accepted", command=["test"])
    metrics = medr2.score(run, mixed_splits=True, resamples=0)
    scored = pq.read_table(run / "scores.parquet", columns=["item_id", "verdict"]).to_pylist()
    assert scored == [{"item_id": sel.fixed[0].item_id, "verdict": "correct"}] and metrics["complete"] is True
