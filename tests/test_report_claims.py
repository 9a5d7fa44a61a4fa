"""Issue 19 end to end: the ``reasoning`` mode asked of a local OpenAI-compatible server that gives rationales,
scored (per-claim verdicts stored in ``claims.parquet``, checksummed in metrics.json) and reported (item cards
with each claim marked supported / contradicted / unverifiable, escaped; grounded accuracy in the leaderboard);
and the optional claim judge, asked over HTTP, cached, its share reported."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from aiohttp import web

from medr2 import BadInput, Bench, ModelConfig
from medr2.records import REPORT_TASKS
from medr2.reporting import write_report
from medr2.run.runner import EvalConfig, run_eval
from medr2.run.store import Store
from medr2.scoring.claims import CHECKER_VERSION, CLAIM_COLUMNS, check_rationale
from medr2.scoring.judge import CLAIM_PROMPT_VERSION
from medr2.scoring.scorer import load_table, score_run
from tests.openai_server import default_answer
from tests.run_fixtures import make_bench
from tests.scripted_server import ScriptedServer, completion, json_response

HOSTILE = "<script>alert('x')</script>"
CONTENT = "<think>Modality: CT.\nThe liver is visible. There is no mass. " + HOSTILE + "</think>\nFinal answer: {}"
REASONING = "Stage 1: this is a CT image."


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    return make_bench(tmp_path_factory.mktemp("bench"), n_cases=6)


def _reasoning_run(bench: Bench, run: Path) -> None:
    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        return json_response(completion(CONTENT.format(default_answer(body)), reasoning_content=REASONING))

    with ScriptedServer(respond) as srv:
        run_eval(EvalConfig(split="all", bench=bench.root,
                            model=ModelConfig("openai:m", base_urls=(srv.url,), extra={"backoff_initial_s": 0.01}),
                            out=run, modes=("reasoning",)))


@pytest.fixture(scope="module")
def scored(bench: Bench, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    run = tmp_path_factory.mktemp("runs") / "reasoning-run"
    _reasoning_run(bench, run)
    return run, score_run(run, mixed_splits=True, n_resamples=50)


@pytest.fixture(scope="module")
def report(scored: tuple[Path, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    write_report([scored[0]], out)
    return out


def _data(report: Path) -> dict[str, Any]:
    html = (report / "index.html").read_text("utf-8")
    m = re.search(r'<script type="application/json" id="medr2-data">(.*?)</script>', html, re.S)
    assert m is not None
    return json.loads(m.group(1))


def test_claims_are_stored_with_their_verdicts(bench: Bench, scored: tuple[Path, dict[str, Any]]) -> None:
    run, metrics = scored
    path = run / "claims.parquet"
    info = metrics["claims"]
    assert info["file"] == "claims.parquet" and info["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert info["judge"] is None and info["checker"] == CHECKER_VERSION
    table = pq.read_table(path)
    assert tuple(table.column_names) == CLAIM_COLUMNS and table.num_rows == info["rows"] > 0
    rows = table.to_pylist()
    # the stored claims are exactly the checker's claims on each stored answer, every one decided by the rules
    cases = {c.case_id: c for c in bench.cases}
    items = {it.item_id: it for it in bench.items}
    expected = []
    with Store.open(run) as store:
        for sp in store.iter_predictions():
            p = sp.prediction
            for c in check_rationale(p.raw, cases[items[p.item_id].case_id], p.reasoning):
                expected.append((p.item_id, p.mode, c.source, c.start, c.end, c.text, c.kind, c.verdict))
    got = [(r["item_id"], r["mode"], r["source"], r["start"], r["end"], r["text"], r["kind"], r["verdict"])
           for r in rows]
    assert sorted(got) == sorted(expected)
    assert {r["decided_by"] for r in rows} == {"rules"}
    # offsets index the stored texts: the content span is the stored response's, the reasoning span the reasoning's
    with Store.open(run) as store:
        stored = {(sp.prediction.item_id, sp.prediction.mode): sp.prediction for sp in store.iter_predictions()}
    for r in rows:
        p = stored[(r["item_id"], r["mode"])]
        text = p.raw if r["source"] == "content" else p.reasoning
        assert text[r["start"]:r["end"]] == r["text"]
    by_kind = {(r["kind"], r["verdict"]) for r in rows}
    assert {("modality", "supported"), ("modality", "contradicted"), ("organ", "unverifiable"),
            ("finding", "supported")} <= by_kind
    counts = info["modes"]["reasoning"]
    assert counts["claims"] == len(rows) and counts["decided_by_judge"] == 0 and counts["judge_share"] == 0.0
    assert counts["supported"] + counts["contradicted"] + counts["unverifiable"] == len(rows)


def test_rescoring_gives_the_same_bytes_and_a_run_without_rationales_removes_them(
        bench: Bench, scored: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    run, _ = scored
    before = (run / "claims.parquet").read_bytes()
    score_run(run, mixed_splits=True, n_resamples=50)
    assert (run / "claims.parquet").read_bytes() == before
    async def bare(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        return json_response(completion("A"))  # a bare answer: no rationale anywhere

    plain = tmp_path / "plain"
    with ScriptedServer(bare) as srv:
        run_eval(EvalConfig(split="all", bench=bench.root,
                            model=ModelConfig("openai:m", base_urls=(srv.url,), extra={"backoff_initial_s": 0.01}),
                            out=plain, modes=("independent",)))
    (plain / "claims.parquet").write_bytes(before)  # a stale file from elsewhere
    m = score_run(plain, mixed_splits=True, n_resamples=0)
    assert "claims" not in m and not (plain / "claims.parquet").exists()


def test_a_changed_claims_file_is_refused_by_the_report(scored: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    import shutil

    run = tmp_path / "copy"
    shutil.copytree(scored[0], run)
    table = pq.read_table(run / "claims.parquet")
    pq.write_table(table.slice(1), run / "claims.parquet")
    with pytest.raises(BadInput, match="checksum") as e:
        write_report([run], tmp_path / "r")
    assert e.value.file == str(run / "claims.parquet")


def test_cards_mark_each_claim(bench: Bench, scored: tuple[Path, dict[str, Any]], report: Path) -> None:
    run, _ = scored
    data = _data(report)
    stored = pq.read_table(run / "claims.parquet").to_pylist()
    by_key: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in stored:
        by_key.setdefault((r["item_id"], r["mode"]), []).append(r)
    ct = {c.case_id: c.modality == "CT" for c in bench.cases}
    items = {it.item_id: it for it in bench.items}
    n_checked = 0
    for row in data["rows"]:
        claims = by_key.get((row["id"], row["m"]))
        if not claims:
            assert row["cl"] is None
            continue
        cl = row["cl"]
        n_checked += 1
        # the marked segments are the response, whole: nothing added, nothing lost
        assert "".join(s["x"] for s in cl["content"]) == row["x"]
        assert "".join(s["x"] for s in cl["reasoning"]) == REASONING
        marks = [s for s in cl["content"] + cl["reasoning"] if "c" in s]
        assert sorted((s["x"], s["c"]) for s in marks) == sorted((c["text"], c["verdict"]) for c in claims)
        modality = [s for s in cl["reasoning"] if s.get("k") == "modality"]
        want = "supported" if ct[items[row["id"]].case_id] else "contradicted"
        assert [s["c"] for s in modality] == [want] and modality[0]["x"] == "CT"
        assert [s["c"] for s in cl["content"] if s.get("k") == "organ"] == ["unverifiable"]
        assert cl["counts"] == {v: sum(c["verdict"] == v for c in claims)
                                for v in ("supported", "contradicted", "unverifiable")}
        assert len(cl["list"]) == len(claims)
    assert n_checked == sum(1 for row in data["rows"] if (row["id"], row["m"]) in by_key) > 0
    html = (report / "index.html").read_text("utf-8")
    assert HOSTILE not in html and "alert(" not in html.split('id="medr2-data">')[0]


def test_leaderboard_has_grounded_accuracy_with_its_n(scored: tuple[Path, dict[str, Any]], report: Path) -> None:
    _, metrics = scored
    g = metrics["modes"]["reasoning"]["rationale"]["overall"]["grounded_acc"]
    lb = json.loads((report / "leaderboard.json").read_text("utf-8"))
    keys = [c["key"] for c in lb["columns"]]
    # a subset metric (the answers with a rationale) is not put beside the headline (issue 50): after the stages
    assert keys.index("grounded_acc") > keys.index("s4") > keys.index("overall")
    cell = lb["rows"][0]["metrics"]["grounded_acc"]
    assert cell["value"] == g["value"] and cell["n"] == g["n"] > 0
    table = load_table(scored[0])
    clean = table[(table["variant"] == "clean") & ~table["probe"] & ~table["task"].isin(REPORT_TASKS)]
    assert cell["n"] == len(clean)
    md = (report / "leaderboard.md").read_text("utf-8")
    assert "Grounded acc" in md.splitlines()[0]
    csv_header = (report / "leaderboard.csv").read_text("utf-8").splitlines()[0].split(",")
    assert {"grounded_acc", "grounded_acc_n"} <= set(csv_header)


def test_claim_judge_decides_what_the_rules_leave_unverifiable(bench: Bench, tmp_path: Path) -> None:
    run = tmp_path / "run"
    _reasoning_run(bench, run)
    asked: list[str] = []

    async def judge(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        prompt = body["messages"][-1]["content"]
        prompt = prompt if isinstance(prompt, str) else "".join(p.get("text", "") for p in prompt)
        asked.append(prompt)
        if CLAIM_PROMPT_VERSION not in prompt:
            return json_response(completion("NONE"))  # an answer question: the judge declines
        return json_response(completion("CONTRADICTED" if "[[liver]]" in prompt else "maybe"))

    with pytest.raises(BadInput, match="needs a judge"):
        score_run(run, mixed_splits=True, judge_claims=True)
    with ScriptedServer(judge) as srv:
        judge_cfg = ModelConfig("openai:judge", base_urls=(srv.url,), extra={"backoff_initial_s": 0.01})
        m = score_run(run, mixed_splits=True, judge=judge_cfg, judge_claims=True, n_resamples=50)
        n_asked = len(asked)
        claim_prompts = [p for p in asked if CLAIM_PROMPT_VERSION in p]
        assert claim_prompts and all("[[liver]]" in p for p in claim_prompts)  # only the unverifiable organ
        again = score_run(run, mixed_splits=True, judge=judge_cfg, judge_claims=True, n_resamples=50)
        assert len(asked) == n_asked  # cached: rescoring asks nothing
    assert again["claims"] == m["claims"]
    rows = pq.read_table(run / "claims.parquet").to_pylist()
    organ = [r for r in rows if r["kind"] == "organ"]
    assert organ and all(r["verdict"] == "contradicted" and r["decided_by"] == "judge" for r in organ)
    assert {r["decided_by"] for r in rows if r["kind"] != "organ"} == {"rules"}
    counts = m["claims"]["modes"]["reasoning"]
    decided = [r for r in rows if r["verdict"] != "unverifiable"]
    assert counts["decided_by_judge"] == len(organ)
    assert counts["judge_share"] == pytest.approx(len(organ) / len(decided), abs=1e-12)
    assert m["claims"]["judge"] and m["claims"]["judge_prompt"] == CLAIM_PROMPT_VERSION
    # a judge-contradicted claim counts: every rationale now has one, so none is grounded
    assert m["modes"]["reasoning"]["rationale"]["overall"]["grounded_acc"]["value"] == 0.0
    plain = score_run(run, mixed_splits=True, n_resamples=50)  # off by default: the rules' verdicts again
    assert {r["decided_by"] for r in pq.read_table(run / "claims.parquet").to_pylist()} == {"rules"}
    assert plain["claims"]["judge"] is None


def test_marked_claims_in_chromium(report: Path) -> None:
    """The cards in a real browser: each claim a <mark> with its verdict as a text marker ([✓] [✗] [?]) and a
    title, a legend, the hostile text shown as text; no script ran, nothing was fetched."""
    from medr2.reporting.screenshot import CHROMIUM, chromium_browser

    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} absent (scripts/install.sh --dev installs the chromium package)")
    pytest.importorskip("playwright", reason="the playwright package is a dev dependency")
    errors: list[str] = []
    dialogs: list[str] = []
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto((report / "index.html").as_uri())
        page.wait_for_selector("#cards article mark.claim")
        marks = page.eval_on_selector_all(
            "#cards pre mark.claim", "els => els.map(e => [e.getAttribute('data-claim'), e.textContent, e.title, "
            "e.nextSibling.textContent])")
        assert marks
        sign = {"supported": "[✓]", "contradicted": "[✗]", "unverifiable": "[?]"}
        for verdict, _text, title, marker in marks:
            assert marker == sign[verdict] and title.startswith(verdict + " (rules): ")
        assert {m[0] for m in marks} == {"supported", "contradicted", "unverifiable"}
        assert {(m[0], m[1]) for m in marks} >= {("unverifiable", "liver"), ("supported", "mass")}
        legends = page.eval_on_selector_all("[data-role=claims-legend]", "els => els.map(e => e.textContent)")
        assert legends and all("[✓] supported" in t and "[✗] contradicted" in t and "[?] unverifiable" in t
                               for t in legends)
        texts = page.eval_on_selector_all("pre[data-role=response]", "els => els.map(e => e.textContent)")
        assert any(HOSTILE in t for t in texts)
        assert page.eval_on_selector_all("#cards script, pre[data-role=response] script", "els => els.length") == 0
        reasoning = page.eval_on_selector_all("pre[data-role=reasoning]", "els => els.map(e => e.textContent)")
        assert reasoning and all(t.replace("[✓]", "").replace("[✗]", "") == REASONING for t in reasoning)
    assert errors == [] and dialogs == []


def test_judge_claims_without_a_judge_is_a_usage_error(scored: tuple[Path, dict[str, Any]]) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    proc = subprocess.run([sys.executable, "-c", "from medr2.cli import main; main()", "score", str(scored[0]),
                           "--mixed-splits",
                           "--judge-claims"], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 2 and "needs a judge" in proc.stderr and "--judge-claims" in proc.stderr


def test_claims_are_read_for_the_rows_asked_and_a_file_changed_after_the_check_is_refused(
        scored: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """``load_run`` checks ``claims.parquet`` and reads it only when asked: the claims of the keys asked, in file
    order, equal grouping the whole file; a file replaced after the check is refused when read."""
    import os
    import shutil

    from medr2.reporting.inputs import StoredClaims, claims_of, load_run

    run = tmp_path / "copy"
    shutil.copytree(scored[0], run)
    loaded = load_run(run)
    assert isinstance(loaded.claims, StoredClaims)
    whole: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in pq.read_table(run / "claims.parquet").to_pylist():
        whole.setdefault((row["item_id"], row["mode"]), []).append(row)
    keys = sorted(whole)
    assert len(keys) >= 3 and sorted(loaded.claims) == keys and len(loaded.claims) == len(keys)
    asked = [keys[0], keys[-1], ("no-such-item", "reasoning")]
    assert claims_of(loaded.claims, asked) == {k: whole[k] for k in asked[:2]}
    assert loaded.claims[keys[1]] == whole[keys[1]]
    table = pq.read_table(run / "claims.parquet")
    pq.write_table(table.slice(1), run / "claims.new.parquet")
    os.replace(run / "claims.new.parquet", run / "claims.parquet")
    with pytest.raises(BadInput, match="changed") as e:
        claims_of(loaded.claims, asked)
    assert e.value.file == str(run / "claims.parquet")
