"""A person as a model, in a real browser: ``medr2 eval --model human:alice`` is started as a subprocess on a small
bench (a stratified ``--limit`` over three tasks: single-choice, yes/no and box items), headless Chromium
(Playwright) answers its questions on the reading page as a reader would (buttons, a confidence moved on the
slider, boxes drawn with the mouse, "cannot determine"), the process is killed mid-sitting and started again
(resume: only the unanswered questions come back), and the sitting is finished. Then what landed in the run store
is checked against what was clicked, and ``medr2 score`` is checked to report the verdicts, the task, stage and
overall accuracies, the abstention rate and the stated confidences that follow from those clicks and the bench's
answers; ``medr2 report`` and ``medr2 view`` show the reader's run as a model's. No console error, no dialog: the
page works under the strict CSP. Screenshots of each page of the reader are written to docs/ (human-choice.png,
human-box.png, human-done.png)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import medr2
from medr2 import Item
from medr2.records import ABSTAIN_OPTION
from medr2.reporting.screenshot import CHROMIUM, chromium_browser
from medr2.run.store import Store

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                 reason=f"{CHROMIUM} absent (scripts/install.sh --dev installs the chromium package)")]
pytest.importorskip("playwright", reason="the playwright package is a dev dependency")

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
TASKS = "s1.modality,s2.organ_box,s3.abnormal"
LIMIT = 8
FIRST_SITTING = 4  # questions answered before the process is killed
URL = re.compile(r"http://127\.0\.0\.1:\d+/")


@dataclass
class Given:
    """What the test did for one question: the raw answer it expects stored, the verdict it expects scored."""

    item_id: str
    raw: str
    verdict: str
    confidence: float | None = None


def _start(bench: Path, run: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    cmd = [sys.executable, "-m", "medr2", "eval", "--bench", str(bench), "--model", "human:alice", "--out", str(run),
           "--split", "all", "--task", TASKS, "--limit", str(LIMIT), "--stratify", "task", "--no-progress",
           "--model-option", "port=0"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    with log.open("wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=ROOT)
    end = time.monotonic() + 120
    while time.monotonic() < end:
        found = URL.search(log.read_text("utf-8", "replace"))
        if found:
            return proc, found.group(0)
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"no reader URL from medr2 eval: {log.read_text('utf-8', 'replace')}")


def _iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union


def _draw(page: Any, item: Item, box: tuple[float, float, float, float]) -> None:
    """Drag the mouse over ``box`` (pixels of the image as stored) on the page's image."""
    page.wait_for_function("() => { const i = document.getElementById('box-image'); "
                           "return i.complete && i.naturalWidth > 0; }")
    bb = page.locator("#box-image").bounding_box()
    assert bb is not None and item.image_width and item.image_height
    sx, sy = bb["width"] / item.image_width, bb["height"] / item.image_height
    page.mouse.move(bb["x"] + box[0] * sx, bb["y"] + box[1] * sy)
    page.mouse.down()
    page.mouse.move(bb["x"] + (box[0] + box[2]) / 2 * sx, bb["y"] + (box[1] + box[3]) / 2 * sy, steps=4)
    page.mouse.move(bb["x"] + box[2] * sx, bb["y"] + box[3] * sy, steps=4)
    page.mouse.up()


def _submit(page: Any, selector: str) -> None:
    """Press an answer button and wait for the page it leads to (the next question, or the end)."""
    with page.expect_navigation():
        page.click(selector)


class Reader:
    """The test's reader: answers each question by a fixed plan per form, and writes down what it gave."""

    def __init__(self, items: dict[str, Item]) -> None:
        self.items = items
        self.given: dict[str, Given] = {}
        self.seen: dict[str, int] = {}
        self.shots: dict[str, Callable[[Any], None]] = {}

    def answer(self, page: Any) -> None:
        form = page.locator("#answer")
        key, item_id, kind = form.get_attribute("data-key"), form.get_attribute("data-item"), \
            form.get_attribute("data-form")
        assert key and item_id and kind
        item = self.items[item_id]
        assert kind == item.form
        assert key not in self.given, "a question came back after it was answered"
        n = self.seen[kind] = self.seen.get(kind, 0) + 1
        if kind == "box":
            assert item.answer_box is not None
            w, h = item.image_width or 0, item.image_height or 0
            want = item.answer_box if n % 2 == 1 else (2.0, 2.0, w / 8, h / 8)  # the box, or a corner far from it
            _draw(page, item, want)
            value = page.input_value("#box")
            drawn = tuple(float(v) for v in value.split(","))
            assert all(abs(d - t) <= 2.5 for d, t in zip(drawn, want, strict=True)), (drawn, want)
            assert page.locator("#box-rect").is_visible()
            if n == 1:
                page.screenshot(path=str(DOCS / "human-box.png"), full_page=True)
            _submit(page, "#submit-box")
            raw = "[" + ", ".join(str(round(v)) for v in drawn) + "]"
            self.given[key] = Given(item_id, raw, "correct" if _iou(drawn, item.answer_box) >= 0.5 else "wrong")
            return
        if n % 3 == 0:  # every third closed question: the reader cannot tell
            _submit(page, "#abstain")
            self.given[key] = Given(item_id, ABSTAIN_OPTION, "abstained")
            return
        choices = [b.get_attribute("value") for b in page.locator("button.choice").all()]
        right = item.answer
        wrong = next(c for c in choices if c != right)
        pick = right if n % 2 == 1 else wrong
        confidence = None
        if n == 1:  # the slider moved on the first question of each form
            confidence = 0.8 if kind == "mcq" else 0.65
            page.fill("#conf-slider", str(round(confidence * 100)))
            assert page.locator("#conf-out").inner_text() == f"{round(confidence * 100)}%"
            if kind == "mcq":
                page.screenshot(path=str(DOCS / "human-choice.png"), full_page=True)
        _submit(page, f"button.choice[value='{pick}']")
        self.given[key] = Given(item_id, pick, "correct" if pick == right else "wrong", confidence)

    def sitting(self, page: Any, url: str, answers: int | None) -> int:
        """Answer ``answers`` questions (None: until the page says done); the number answered."""
        page.goto(url)
        done = 0
        while answers is None or done < answers:
            page.wait_for_selector("#answer, #done", timeout=30_000)
            if page.locator("#done").count():
                break
            position = page.locator("#position").inner_text()
            assert position.startswith("question "), position
            self.answer(page)
            done += 1
        return done


def _dismiss(dialog: Any, errors: list[str]) -> None:
    errors.append(f"dialog: {dialog.message}")
    dialog.dismiss()


def _stored(run: Path) -> dict[str, Any]:
    with Store.open(run) as store:
        return {sp.prediction.request_hash: sp.prediction for sp in store.iter_predictions()}


@pytest.fixture(scope="module")
def sitting(tmp_path_factory: pytest.TempPathFactory, build_sample: Callable[..., Path]
            ) -> Iterator[tuple[Path, Path, Reader, list[str], dict[str, Any]]]:
    root = tmp_path_factory.mktemp("human")
    bench = build_sample(root / "bench", n_cases=6)
    items = {it.item_id: it for it in medr2.load_bench(bench).items}
    run = root / "run"
    reader = Reader(items)
    errors: list[str] = []
    first: dict[str, Any] = {}
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}")
                if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
        page.on("dialog", lambda d: _dismiss(d, errors))

        proc, url = _start(bench, run, root / "eval1.log")
        try:
            assert reader.sitting(page, url, FIRST_SITTING) == FIRST_SITTING
            page.wait_for_selector("#answer")  # the next question is up: every answer given so far is stored
            first = _stored(run)
        finally:
            proc.send_signal(signal.SIGKILL)  # no clean-up at all: what was answered must already be on disk
            proc.wait(timeout=30)

        proc, url = _start(bench, run, root / "eval2.log")
        try:
            page.goto(url)
            page.wait_for_selector("#answer")
            assert page.locator("#position").inner_text() == f"question 1 of {LIMIT - FIRST_SITTING} in this batch"
            rest = reader.sitting(page, url, None)
            assert page.locator("#done").count() == 1
            page.screenshot(path=str(DOCS / "human-done.png"), full_page=True)
            assert proc.wait(timeout=60) == 0, (root / "eval2.log").read_text("utf-8", "replace")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
        assert FIRST_SITTING + rest == LIMIT
    yield run, bench, reader, errors, first


def test_each_answer_is_stored_as_given_and_a_killed_sitting_resumes(
        sitting: tuple[Path, Path, Reader, list[str], dict[str, Any]]) -> None:
    run, _bench, reader, errors, first = sitting
    assert not errors
    assert len(reader.given) == LIMIT
    given = {(reader.items[g.item_id].form, g.verdict) for g in reader.given.values()}
    assert given >= {("box", "correct"), ("box", "wrong"), ("mcq", "correct"), ("mcq", "wrong")}, given
    assert "abstained" in {v for _, v in given}
    # before the kill: exactly the first sitting's answers, each as clicked
    assert len(first) == FIRST_SITTING and set(first) <= set(reader.given)
    stored = _stored(run)
    assert set(stored) == set(reader.given)  # every question once: none lost at the kill, none asked twice
    for key, p in stored.items():
        g = reader.given[key]
        assert (p.item_id, p.status, p.raw, p.model_key) == (g.item_id, "ok", g.raw, "human:alice")
        assert p.latency_s is not None and p.latency_s >= 0
        if g.confidence is None:
            assert p.confidence is None
        else:
            assert p.confidence is not None and p.confidence.source == "reader"
            assert p.confidence.probs[g.raw] == pytest.approx(g.confidence)
            assert sum(p.confidence.probs.values()) == pytest.approx(1.0)
    manifest = json.loads((run / "manifest.json").read_text("utf-8"))
    assert manifest["model"]["key"] == "human:alice"
    assert [i["status"] for i in manifest["invocations"]] == ["running", "complete"]  # the killed one never ended
    assert all(i["stratify"] == ["task"] and i["limit"] == LIMIT for i in manifest["invocations"])


def test_score_reports_what_the_clicks_and_the_bench_imply(
        sitting: tuple[Path, Path, Reader, list[str], dict[str, Any]]) -> None:
    run, bench, reader, _errors, _first = sitting
    medr2.score(run, resamples=50)
    plan = json.loads((run / "metrics.json").read_text("utf-8"))["plan"]
    assert (plan["planned"], plan["answered"], plan["missing"]) == (LIMIT, LIMIT, 0)  # the stratified plan, whole
    rows = pq.read_table(str(run / "scores.parquet")).to_pylist()
    by_item = {g.item_id: g for g in reader.given.values()}
    assert {r["item_id"]: r["verdict"] for r in rows} == {i: g.verdict for i, g in by_item.items()}

    metrics = json.loads((run / "metrics.json").read_text("utf-8"))["modes"]["independent"]
    # a task's units (docs/metrics.md): items, and yes/no twins sharing a pair_id as one unit right iff every twin is
    pair_of = {r["item_id"]: r["pair_id"] for r in pq.read_table(
        str(bench / "items.parquet"), columns=["item_id", "pair_id"]).to_pylist()}
    units: dict[str, dict[str, list[bool]]] = {}
    for r in rows:
        unit = pair_of.get(r["item_id"]) or r["item_id"]
        units.setdefault(r["task"], {}).setdefault(unit, []).append(r["verdict"] == "correct")
    acc = {t: sum(all(v) for v in u.values()) / len(u) for t, u in units.items()}
    for task, value in acc.items():
        assert metrics["tasks"][task]["value"] == pytest.approx(value)
    stages: dict[str, list[float]] = {}
    for task, value in acc.items():
        stages.setdefault(task.split(".")[0], []).append(value)
    stage_acc = [sum(v) / len(v) for v in stages.values()]
    assert metrics["overall"]["value"] == pytest.approx(sum(stage_acc) / len(stage_acc))
    abstained = sum(g.verdict == "abstained" for g in reader.given.values()) / len(reader.given)
    assert metrics["rates"]["abstained"]["value"] == pytest.approx(abstained)

    calibration = json.loads((run / "calibration.json").read_text("utf-8"))["modes"]["independent"]
    stated = [g for g in reader.given.values() if g.confidence is not None]
    assert calibration["confidence"]["sources"] == ["reader"]
    assert calibration["confidence"]["rows_with_confidence"] == len(stated)


def test_report_and_view_show_the_reader_as_a_run(sitting: tuple[Path, Path, Reader, list[str], dict[str, Any]],
                                                  tmp_path: Path) -> None:
    import urllib.request

    run, _bench, reader, _errors, _first = sitting
    if not (run / "metrics.json").exists():
        medr2.score(run, resamples=50)
    overall = json.loads((run / "metrics.json").read_text("utf-8"))["modes"]["independent"]["overall"]["value"]
    index = medr2.report([run], tmp_path / "report")
    html = index.read_text("utf-8")
    assert "alice" in html and f'data-v="{overall!r}"' in html  # the reader's overall, as any model's
    server = medr2.view([run], port=0, block=False)
    try:
        with urllib.request.urlopen(server.url) as r:
            page = r.read().decode("utf-8")
        assert "human:alice" in page and f'data-v="{overall!r}"' in page
        some = next(iter(reader.given.values())).item_id
        with urllib.request.urlopen(f"{server.url}item?id={some}") as r:
            assert r.status == 200 and some in r.read().decode("utf-8")
    finally:
        server.stop()
