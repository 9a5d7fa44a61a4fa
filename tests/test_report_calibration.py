"""Calibration in the report (issue 45): reliability diagrams and risk–coverage curves per model (one colour per
run, runs without confidences not drawn), calibration and abstention columns beside accuracy; the page in
headless Chromium for a real run whose server returned log-probabilities."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from medr2 import PlotContext
from medr2.reporting.fmt import fmt_ci
from medr2.reporting.inputs import RunData
from medr2.reporting.leaderboard import build_leaderboard
from medr2.reporting.plots import PALETTE, make_plots
from medr2.reporting.screenshot import CHROMIUM, chromium_browser
from medr2.scoring.scorer import score_run
from tests.run_fixtures import make_bench
from tests.test_report_plots import check_readable
from tests.test_score_calibration_e2e import logprob_run


def _m(v: float) -> dict[str, Any]:
    return {"value": v, "lo": v - 0.05, "hi": v + 0.05, "n": 40, "n_cases": 20, "low_n": False}


def _run(k: int, with_confidence: bool) -> RunData:
    mm: dict[str, Any] = {"overall": _m(0.5), "stages": {"1": _m(0.5)}}
    if with_confidence:
        bins = [{"lo": b / 10, "hi": (b + 1) / 10, "n": 4, "confidence": b / 10 + 0.05,
                 "accuracy": min(1.0, b / 10 + 0.02 * k)} for b in range(3, 10)]
        mm["calibration"] = {"calibration": {"ECE": _m(0.1 * k), "Brier": _m(0.2), "AUROC": _m(0.7)},
                             "reliability": {"equal_width": bins}, "abstention": {"appropriate_abstention": _m(0.5)},
                             "risk_coverage": [[c / 10, 0.3 * c / 10] for c in range(1, 11)]}
    return RunData(run_dir=Path(f"/nonexistent/run{k}"), label=f"model-{k}", model_key=f"m{k}", manifest={},
                   metrics={"modes": {"independent": mm}}, scores=[])


def test_calibration_plot_and_columns_only_for_runs_with_confidences() -> None:
    runs = [_run(0, True), _run(1, False), _run(2, True)]
    plots = {p.name: p for p in make_plots(PlotContext(runs, {}))}
    plot = plots["calibration"]
    check_readable(plot)
    rel, rc = plot.layout["axes"][:2]
    # the run without confidences is not drawn; the others keep their colour (their place among the runs)
    assert set(rel["series"]) == set(rc["series"]) == {"model-0", "model-2"}
    assert rel["series"]["model-2"] == PALETTE[2].lower() or rel["series"]["model-2"].lower() == PALETTE[2].lower()
    assert plot.layout["legend_texts"] == ["model-0", "model-2"]
    lb = build_leaderboard(runs)
    keys = [c.key for c in lb.columns]
    # calibration is computed on the answers with a confidence: a secondary column, after the stages (issue 50)
    assert keys.index("overall") < keys.index("s4") < keys.index("ece") and "appropriate_abstention" in keys
    assert lb.rows[1].cells["ece"] is None and lb.rows[2].cells["ece"]["value"] == pytest.approx(0.2)
    none = make_plots(PlotContext([_run(1, False)], {}))
    assert "calibration" not in {p.name for p in none}
    assert "ece" not in [c.key for c in build_leaderboard([_run(1, False)]).columns]


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} absent")
def test_report_shows_calibration_in_chromium(tmp_path: Path) -> None:
    pytest.importorskip("playwright")
    from medr2.reporting import write_report

    bench = tmp_path / "bench"
    make_bench(bench, n_cases=10)

    run = tmp_path / "run"
    logprob_run(bench, run)
    score_run(run, n_resamples=50, mixed_splits=True)
    cal = json.loads((run / "calibration.json").read_text())
    ece = cal["modes"]["independent"]["calibration"]["ECE"]["value"]
    out = tmp_path / "report"
    write_report([run], out)
    errors: list[str] = []
    with chromium_browser() as browser:
        page = browser.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((out / "index.html").as_uri())
        page.wait_for_selector("#leaderboard")
        headers = page.eval_on_selector_all("#leaderboard th", "els => els.map(e => e.textContent.trim())")
        headers = [h.rstrip("↑↓ ") for h in headers]  # the direction arrow after each metric's name
        assert "Brier" in headers and headers.index("Overall") < headers.index("S4 diagnosis") < headers.index("ECE")
        cells = page.eval_on_selector_all("#leaderboard tr td", "els => els.map(e => e.textContent)")
        assert any(c.strip().startswith(fmt_ci({"value": ece, "lo": 0, "hi": 1})[:4]) for c in cells), (ece, cells)
        shown = page.eval_on_selector_all("#plots img", "els => els.map(e => [e.alt, e.naturalWidth])")
        assert any("Calibration" in alt and width > 0 for alt, width in shown), shown
        page.wait_for_selector("#cards article")
        kvs = page.eval_on_selector_all("#cards article .kv", "els => els.map(e => e.textContent)")
        stated = [k for k in kvs if k.startswith("confidence: ")]
        assert stated and all(k.endswith("(logprobs)") for k in stated), kvs[:20]
    assert not errors, errors


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} absent")
def test_item_browser_shows_and_filters_confidence_and_abstentions(tmp_path: Path) -> None:
    """The report's item browser (issue 45 item 4): each answer card shows the confidence in the answer given with its
    source and the ``abstained`` verdict; the verdict filter finds the abstentions and the confidence range filter
    shows exactly the answers whose confidence lies in it. A real run: ``--confidence logprobs --abstain-option``
    against a server on 127.0.0.1 that abstains on some single-choice items, with token log-probabilities."""
    import hashlib
    import math

    from aiohttp import web

    from medr2 import ModelConfig
    from medr2.records import ABSTAIN_OPTION
    from medr2.reporting import write_report
    from medr2.run.runner import EvalConfig, run_eval
    from medr2.run.store import Store
    from medr2.scoring.calibration import row_confidence
    from medr2.scoring.scorer import load_table
    from tests.openai_server import default_answer
    from tests.scripted_server import ScriptedServer, completion, json_response
    from tests.test_score_calibration_e2e import _texts

    pytest.importorskip("playwright")
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=6)

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        h = hashlib.sha256(raw).digest()
        line = next((ln for ln in "\n".join(_texts(body["messages"][-1:])).splitlines() if ABSTAIN_OPTION in ln), None)
        answer = line.strip()[0] if line and h[0] % 2 else default_answer(body)
        out = completion(answer)
        if len(answer) == 1 or answer == "yes":
            p = 0.3 + 0.65 * h[1] / 255
            top = [{"token": answer, "logprob": math.log(p)},
                   {"token": "B" if answer != "B" else "A", "logprob": math.log(1 - p)}]
            if answer == "yes":
                top[1]["token"] = "no"
            first = {"token": answer, "logprob": math.log(p), "top_logprobs": top}
            out["choices"][0]["logprobs"] = {"content": [first]}
        return json_response(out)

    run = tmp_path / "run"
    with ScriptedServer(respond) as srv:
        run_eval(EvalConfig(bench=bench,
                            model=ModelConfig("openai:m", base_urls=(srv.url,), extra={"backoff_initial_s": 0.01}),
                            out=run, split="all", confidence="logprobs", abstain_option=True))
    score_run(run, n_resamples=0, mixed_splits=True)
    # what each card must show: the scored verdict, and the confidence in the parsed answer (from the store)
    with Store.open(run) as store:
        probs = {(sp.prediction.item_id, sp.prediction.mode): sp.prediction.confidence
                 for sp in store.iter_predictions()}
    expected: dict[str, tuple[str, float | None]] = {}
    for r in load_table(run).itertuples():
        c = probs[(r.item_id, r.mode)]
        expected[r.item_id] = (r.verdict, None if c is None else row_confidence(r.parsed, c.probs))
    assert {v for v, _ in expected.values()} >= {"abstained"} and any(c is not None for _, c in expected.values())
    out = tmp_path / "report"
    write_report([run], out)
    errors: list[str] = []
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((out / "index.html").as_uri())
        page.wait_for_selector("#cards article")
        assert page.is_visible("#f-conf-min")  # shown: this run's answers carry confidences

        def cards() -> list[tuple[str, str, str, str]]:
            """(item id, verdict, badge text, confidence line) of every card shown (every page)."""
            seen = []
            while True:
                seen += page.eval_on_selector_all("#cards article", """els => els.map(e => [
                    e.querySelector('.meta').textContent, e.getAttribute('data-verdict'),
                    (e.querySelector('.badge') || {}).textContent || '',
                    [...e.querySelectorAll('.kv')].map(k => k.textContent).find(t => t.startsWith('confidence: '))
                    || ''])""")
                if page.is_disabled("#next"):
                    break
                page.click("#next")
            return [(next(i for i in expected if i in meta), v, b, c) for meta, v, b, c in seen]

        page.select_option("#f-verdict", "abstained")
        abstained = cards()
        assert abstained and len(abstained) == sum(v == "abstained" for v, _ in expected.values())
        for item_id, verdict, badge, conf in abstained:
            assert verdict == "abstained" and "abstained" in badge
            want = expected[item_id][1]  # the abstain letter's own probability, where the server sent them
            assert conf == ("" if want is None else f"confidence: {want:.2f} (logprobs)"), (item_id, conf)
        page.select_option("#f-verdict", "")
        page.fill("#f-conf-min", "0.6")
        page.fill("#f-conf-max", "0.9")
        ranged = cards()
        inside = {i for i, (_, c) in expected.items() if c is not None and 0.6 <= round(c, 4) <= 0.9}
        assert ranged and {i for i, *_ in ranged} == inside and len(ranged) == len(inside)
        assert all(0.6 <= float(c.split()[1]) <= 0.9 for *_, c in ranged)
    assert not errors, errors
