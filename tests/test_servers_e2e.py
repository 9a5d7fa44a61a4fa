"""Real inference servers end to end behind the ``openai`` adapter (slow; run by .ci/run).

The tiny VLM is built offline and served by ``transformers serve`` (project venv) and by vLLM's
CPU build (``.venv-vllm`` from scripts/setup_vllm.sh). ``medr2 eval`` runs a small sample bench
through each server in ``independent`` and ``chain-own`` modes, then ``medr2 score``; the answers
are compared with the same items answered in-process by ``hf:`` (greedy decoding).

Differences that are explained and pinned here (the rest must be identical):
- the ``hf`` adapter strips surrounding whitespace from its decoded answer; servers return the text
  verbatim (the tiny BPE's first answer token often starts with a space), so answers compare after
  ``strip()``; the chain-own dialogues see the stripped history in both cases (the runner strips);
- when an answer is cut at ``max_tokens`` inside a multi-byte UTF-8 character, transformers decodes
  the dangling bytes as U+FFFD while vLLM's incremental detokenizer holds them back, so a truncated
  vLLM answer may lack the trailing U+FFFD characters;
- in ``chain-own`` the model's own earlier answers are part of the later prompts, so a step after an
  earlier step of its chain that differed by the held-back bytes above sees a different prompt (its
  prompt token count differs) and may answer differently: pinned as "cascade", only when such an
  earlier step exists in the same chain.
Token usage (prompt and completion tokens) must match exactly everywhere else.

The same server start (a module fixture per server) also runs ``--confidence logprobs`` and
``--structured-answers`` (issues 45 and 42): stored confidences or the reason for none, calibration.json,
and structured answers followed or noted (docs/serving.md).
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from medr2 import GenSettings, Message, Part, Request
from medr2.models.openai import OpenAIAdapter
from medr2.run.store import Store
from tests.servers import (
    VLLM_ENV,
    VLLM_KV_CACHE_BYTES,
    VLLM_VENV,
    Server,
    log_errors,
    transformers_serve,
    vllm_python,
    vllm_serve,
)

pytestmark = pytest.mark.slow

CASES = 8
LIMIT = 80
MAX_NEW = 16
OPTIONS_LIMIT = 40  # the confidence and structured runs: whole cases, every closed form among them
STRUCTURED_MAX_NEW = 48  # room for a JSON answer object (a box's four numbers) in the structured runs
MODES = "independent,chain-own"
MEDR2 = str(Path(sys.executable).with_name("medr2"))
Answers = dict[tuple[str, str], tuple[str, int | None, int | None]]
Steps = dict[tuple[str, str], tuple[str | None, int | None]]  # (item, mode) -> (chain id, step)


def medr2(*args: str, log: Path) -> str:
    """Run the medr2 CLI; its output goes to ``log``; a failure raises with the output."""
    cmd = [MEDR2, *args]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    with log.open("a", encoding="utf-8") as fh:
        fh.write(f"$ {' '.join(cmd)}\n{p.stdout}{p.stderr}({time.perf_counter() - t0:.1f}s)\n")
    assert p.returncode == 0, f"{' '.join(cmd)} -> {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p.stdout + p.stderr


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("servers")
    log = d / "medr2.log"
    medr2("tiny-vlm", "--out", str(d / "tiny"), log=log)
    medr2("vllm-export", str(d / "tiny"), "--out", str(d / "tiny-vllm"), log=log)
    medr2("build", "--source", "sample", "--out", str(d / "bench"), "--cases", str(CASES), "--workers", "1", log=log)
    medr2("eval", "--split", "all", "--bench", str(d / "bench"), "--model", f"hf:{d / 'tiny'}", "--out",
          str(d / "run-hf"),
          "--mode", MODES, "--limit", str(LIMIT), "--max-new-tokens", str(MAX_NEW), "--no-progress", log=log)
    medr2("score", str(d / "run-hf"), "--mixed-splits", log=log)
    return {"dir": d, "log": log, "tiny": d / "tiny", "tiny_vllm": d / "tiny-vllm", "bench": d / "bench",
            "run_hf": d / "run-hf"}


def answers(run: Path) -> Answers:
    out: Answers = {}
    for sp in Store.open(run).iter_predictions():
        p = sp.prediction
        assert p.status == "ok", f"{run}: {p.item_id} {p.mode}: {p.error}"
        out[(p.item_id, p.mode)] = (p.raw or "", p.prompt_tokens, p.completion_tokens)
    return out


def chain_steps(run: Path) -> Steps:
    return {(sp.prediction.item_id, sp.prediction.mode): (sp.chain_id, sp.step)
            for sp in Store.open(run).iter_predictions()}


def verdicts(run: Path) -> dict[tuple[str, str], str]:
    t = pq.read_table(run / "scores.parquet", columns=["item_id", "mode", "verdict"]).to_pylist()
    return {(r["item_id"], r["mode"]): r["verdict"] for r in t}


def difference(hf: str, served: str, truncated: bool, holds_back_partial_utf8: bool) -> str | None:
    """None if equal; else the name of the pinned difference that explains it, or "unexplained"."""
    if hf == served:
        return None
    if hf.strip() == served.strip():
        return "whitespace"
    if holds_back_partial_utf8 and truncated and hf.strip().rstrip("\ufffd") == served.strip().rstrip("\ufffd"):
        return "held-back partial UTF-8"
    return "unexplained"


def eval_through(srv: Server, work: dict[str, Path], name: str, concurrency: int) -> Path:
    run = work["dir"] / f"run-{name}"
    before = srv.completions_ok()
    t0 = time.perf_counter()
    medr2("eval", "--split", "all", "--bench", str(work["bench"]), "--model", f"openai:{srv.model}", "--preset",
          "medr2-tiny",
          "--base-url", srv.url, "--out", str(run), "--mode", MODES, "--limit", str(LIMIT),
          "--max-new-tokens", str(MAX_NEW), "--concurrency", str(concurrency), "--retries", "0", "--no-progress",
          log=work["log"])
    wall = time.perf_counter() - t0
    got = answers(run)
    answered = srv.completions_ok() - before
    assert answered == len(got), f"{srv.name} log shows {answered} answered completions for {len(got)} stored answers"
    manifest = json.loads((run / "manifest.json").read_text("utf-8"))
    for mode in MODES.split(","):
        counts = manifest["counts"][mode]
        assert counts.get("error", 0) == 0 and counts.get("ok", 0) > 0, manifest["counts"]
    medr2("score", str(run), "--mixed-splits", log=work["log"])
    assert (run / "scores.parquet").is_file() and (run / "metrics.json").is_file()
    srv_summary = (f"{srv.name}: ready in {srv.started_s:.1f}s at {srv.url} (model {srv.model}); answered "
                   f"{answered}/{len(got)} requests with HTTP 200 in {wall:.1f}s; scores written to "
                   f"{run / 'scores.parquet'} and {run / 'metrics.json'}")
    (work["dir"] / f"{name}.summary").write_text(srv_summary + "\n", "utf-8")
    return run


def compare_with_hf(run: Path, work: dict[str, Path], holds_back_partial_utf8: bool) -> list[str]:
    hf, served = answers(work["run_hf"]), answers(run)
    assert set(hf) == set(served), "the server run asked other items than the hf run"
    steps = chain_steps(work["run_hf"])
    kind_of = {key: difference(a, served[key][0], ct == MAX_NEW, holds_back_partial_utf8)
               for key, (a, _pt, ct) in hf.items()}
    # chains (per mode) whose model-visible history changed: a step that differed by held-back bytes
    changed_from: dict[tuple[str | None, str], int] = {}
    for (item, mode), kind in kind_of.items():
        chain, step = steps[(item, mode)]
        if mode == "chain-own" and kind == "held-back partial UTF-8" and chain is not None and step is not None:
            changed_from[(chain, mode)] = min(step, changed_from.get((chain, mode), step))
    bad, kinds, cascaded = [], Counter(), set()
    for key, (a, pt, ct) in sorted(hf.items()):
        b, spt, sct = served[key]
        kind = kind_of[key]
        chain, step = steps[key]
        first = changed_from.get((chain, key[1]))
        if (kind == "unexplained" or (pt, ct) != (spt, sct)) and first is not None and step is not None \
                and step > first and pt != spt:
            kind = "cascade"
            cascaded.add(key)
        kinds[kind or "identical"] += 1
        if kind != "cascade" and ((pt, ct) != (spt, sct) or kind == "unexplained"):
            bad.append(f"{key}: hf {a!r} ({pt}/{ct} tokens) vs served {b!r} ({spt}/{sct} tokens)")
    assert not bad, f"{len(bad)} of {len(hf)} answers differ:\n" + "\n".join(bad[:10])
    hv, sv = verdicts(work["run_hf"]), verdicts(run)
    assert {k: v for k, v in sv.items() if k not in cascaded} == {k: v for k, v in hv.items() if k not in cascaded}
    return [f"{len(hf)} answers as hf: in-process (modes {MODES}), token usage and verdicts equal "
            f"(except {len(cascaded)} pinned chain-own cascades); "
            f"text: {dict(sorted(kinds.items()))}"]


def probe_requests(work: dict[str, Path]) -> list[Request]:
    """Three real bench requests, rendered as the runner stored them (images by path and hash)."""
    reqs = []
    for sp in Store.open(work["run_hf"]).iter_predictions(mode="independent", with_request=True):
        msgs = tuple(Message(m["role"], tuple(Part(p["type"], text=p.get("text"), image=p.get("image"),
                                                   image_sha256=p.get("sha256")) for p in m["parts"]))
                     for m in sp.request or [])
        reqs.append(Request(key=sp.prediction.request_hash, messages=msgs, bench_root=work["bench"],
                            settings=GenSettings(max_new_tokens=MAX_NEW), item_id=sp.prediction.item_id))
        if len(reqs) == 3:
            break
    return reqs


def probe_adapter(srv: Server, work: dict[str, Path]) -> list[str]:
    """What the adapter does on this server beyond the eval: max_completion_tokens, error bodies."""
    reqs = probe_requests(work)
    plain = OpenAIAdapter(srv.model, base_urls=[srv.url], retries=0)
    newer = OpenAIAdapter(srv.model, base_urls=[srv.url], retries=0, max_tokens_field="max_completion_tokens")
    wrong = OpenAIAdapter("no-such-model", base_urls=[srv.url], retries=0)
    try:
        a, b = plain.generate(reqs), newer.generate(reqs)
        assert [(r.status, r.text, r.completion_tokens) for r in a] == [(r.status, r.text, r.completion_tokens)
                                                                        for r in b]
        assert all(r.status == "ok" and r.completion_tokens and r.completion_tokens <= MAX_NEW for r in a)
        err = wrong.generate(reqs[:1])[0]
    finally:
        for ad in (plain, newer, wrong):
            ad.close()
    assert err.status == "error" and err.attempts == 1, err
    assert err.error is not None and "no-such-model" in err.error and "{" not in err.error, err.error
    return ["max_completion_tokens accepted (same answers as max_tokens)", f"unknown model -> {err.error}"]


def report(capsys: pytest.CaptureFixture[str], work: dict[str, Path], name: str, srv: Server,
           lines: list[str]) -> None:
    summary = (work["dir"] / f"{name}.summary").read_text("utf-8").strip()
    with capsys.disabled():
        print(f"\n[servers] {summary}")
        for line in lines:
            print(f"[servers] {name}: {line}")
        print(f"[servers] {name}: server log {srv.log}")


def exercise(srv: Server, work: dict[str, Path], name: str, concurrency: int, holds_back_partial_utf8: bool,
             capsys: pytest.CaptureFixture[str]) -> None:
    """eval through the server, compare with hf:, probe the adapter's edges; the server log on failure."""
    try:
        run = eval_through(srv, work, name, concurrency=concurrency)
        lines = compare_with_hf(run, work, holds_back_partial_utf8=holds_back_partial_utf8)
        lines += probe_adapter(srv, work)
    except BaseException:
        print(f"--- {srv.log} ---\n{srv.log_text()[-8000:]}")
        raise
    report(capsys, work, name, srv, lines)


# -- confidences (issue 45) and structured answers (issue 42) on the same servers -----------------------------------


def labelled_items(work: dict[str, Path]) -> dict[str, Any]:
    """The bench's items by id."""
    from medr2.bench.format import load_bench

    return {it.item_id: it for it in load_bench(work["bench"]).items}


def stored(run: Path) -> list[Any]:
    with Store.open(run) as st:
        return list(st.iter_predictions())


def eval_options(srv: Server, work: dict[str, Path], name: str, *options: str,
                 max_new: int = MAX_NEW) -> tuple[Path, str]:
    """``medr2 eval`` (independent mode) through ``srv`` with more options, then ``medr2 score``: the run and eval's
    output."""
    run = work["dir"] / f"run-{name}"
    out = medr2("eval", "--split", "all", "--bench", str(work["bench"]), "--model", f"openai:{srv.model}", "--preset",
                "medr2-tiny", "--base-url", srv.url, "--out", str(run), "--mode", "independent", "--limit",
                str(OPTIONS_LIMIT), "--max-new-tokens", str(max_new), "--retries", "0", "--no-progress", *options,
                log=work["log"])
    medr2("score", str(run), "--mixed-splits", log=work["log"])
    return run, out


def check_confidences(srv: Server, work: dict[str, Path], name: str, *options: str) -> tuple[dict[str, int], Path]:
    """``medr2 eval --confidence logprobs`` through ``srv``: every answer to an item with answers (single choice,
    yes/no) stored with a ``logprobs`` confidence (probabilities in [0, 1] over exactly its answers, summing to 1)
    or with the reason it has none; ``medr2 score``'s calibration.json counts the same answers."""
    from medr2.models.confidence import labels_of
    from medr2.scoring.calibration import CALIBRATION_FILE, row_confidence
    from medr2.scoring.scorer import load_table

    run, _ = eval_options(srv, work, name, "--confidence", "logprobs", *options)
    items = labelled_items(work)
    kinds: Counter[str] = Counter()
    given: dict[str, float] = {}  # item id -> the confidence in the answer given (scored rows)
    parsed = {r["item_id"]: r["parsed"] for r in load_table(run)[["item_id", "parsed"]].to_dict("records")}
    for sp in stored(run):
        p, labels = sp.prediction, labels_of(items[sp.prediction.item_id])
        assert p.status == "ok", p.error
        reasons = [n for n in sp.meta.get("notes", ()) if n.startswith("no confidence: ")]
        if not labels:
            assert p.confidence is None and not reasons
            kinds["no answers to map"] += 1
        elif p.confidence is None:
            assert len(reasons) == 1, (p.raw, sp.meta)
            kinds[reasons[0].split(":")[1].split("(")[0].strip()] += 1
        else:
            c = p.confidence
            assert c.source == "logprobs" and set(c.probs) == set(labels) and not reasons
            assert all(0.0 <= v <= 1.0 for v in c.probs.values()) and math.fsum(c.probs.values()) == pytest.approx(1)
            kinds["logprobs"] += 1
            value = row_confidence(parsed.get(p.item_id), c.probs)
            if value is not None:
                given[p.item_id] = value
    cal = json.loads((run / CALIBRATION_FILE).read_text("utf-8"))
    assert cal["confidence_option"] == "logprobs"
    mode = cal["modes"]["independent"]
    assert mode["confidence"]["rows"] == len(parsed) == sum(kinds.values())  # every answered item scored
    assert mode["confidence"]["rows_with_confidence"] == len(given)
    if given:
        table = load_table(run)
        cal_rows = table[(table["variant"] == "clean") & ~table["probe"] & table["form"].isin(["mcq", "yesno"])
                         & table["item_id"].isin(list(given))]
        assert mode["confidence"]["sources"] == ["logprobs"]
        assert mode["calibration"]["ECE"]["n"] == mode["calibration"]["mean_confidence"]["n"] == len(cal_rows)
        assert mode["calibration"]["mean_confidence"]["value"] == pytest.approx(
            sum(given[i] for i in cal_rows["item_id"]) / len(cal_rows))
    else:
        assert "calibration" not in mode and mode["confidence"]["note"].startswith("no confidence")
    kinds["confidence in the answer given (calibration rows)"] = len(given)
    return dict(kinds), run


def check_structured(srv: Server, work: dict[str, Path], name: str, *options: str) -> tuple[dict[str, int], str]:
    """``medr2 eval --structured-answers`` through ``srv``: the raw answers are stored as sent; an answer with its
    constraint's shape is read from its field by scoring, any other closed answer carries the note saying the
    constraint was not followed (or was cut at the token limit) and is counted in eval's output."""
    from medr2.models.structured import CONSTRAINED_FORMS, follows, structured_choice
    from medr2.scoring.scorer import load_table

    run, out = eval_options(srv, work, name, "--structured-answers", *options, max_new=STRUCTURED_MAX_NEW)
    manifest = json.loads((run / "manifest.json").read_text("utf-8"))
    mech = manifest["structured_answers"]
    items = labelled_items(work)
    table = load_table(run)
    parsed = dict(zip(table["item_id"], table["parsed"], strict=True))
    kinds: Counter[str] = Counter()
    for sp in stored(run):
        p, item = sp.prediction, items[sp.prediction.item_id]
        assert p.status == "ok", p.error
        notes = [n for n in sp.meta.get("notes", ()) if n.startswith(f"structured answer ({mech})")]
        ok = follows(mech, item, p.raw)
        if item.form not in CONSTRAINED_FORMS:
            assert ok is None and not notes
            kinds["free text (not constrained)"] += 1
            continue
        assert (len(notes) == 1) == (ok is False), (p.raw, notes)
        if ok:
            kinds["followed"] += 1
            if item.form in ("mcq", "yesno", "multi"):  # scoring took the field as it is
                assert parsed[p.item_id] == structured_choice(item.form, p.raw or "", item.options), p.raw
        elif p.finish_reason == "length" and (p.raw or "").strip().startswith("{"):  # the JSON object begun
            assert "cut off by the token limit" in notes[0]
            kinds["cut at the token limit"] += 1
        else:
            assert "not followed" in notes[0]
            kinds["not followed"] += 1
    unfollowed = kinds["not followed"] + kinds["cut at the token limit"]
    if unfollowed:
        assert f"structured answers not followed: {unfollowed} of {sum(kinds.values())} answers" in " ".join(
            out.split()), out
    else:
        assert "structured answers not followed" not in out
    return dict(kinds), mech


@pytest.fixture(scope="module")
def tf_server(work: dict[str, Path]) -> Iterator[Server]:
    """One ``transformers serve`` for every test of this module that uses it."""
    with transformers_serve(work["tiny"], work["dir"]) as srv:
        yield srv


@pytest.fixture(scope="module")
def vllm_server(work: dict[str, Path]) -> Iterator[Server]:
    """One vLLM server (CPU build) for every test of this module that uses it."""
    if not vllm_python().exists():
        pytest.skip(f"no vLLM environment at {VLLM_VENV}: run `bash scripts/setup_vllm.sh` (.ci/run does)")
    with vllm_serve(work["tiny_vllm"], work["dir"]) as srv:
        yield srv


def with_log(srv: Server, check: Any) -> Any:
    try:
        return check()
    except BaseException:
        print(f"--- {srv.log} ---\n{srv.log_text()[-8000:]}")
        raise


def test_transformers_serve(work: dict[str, Path], tf_server: Server, capsys: pytest.CaptureFixture[str]) -> None:
    exercise(tf_server, work, "transformers-serve", 4, False, capsys)


def test_transformers_serve_confidences_and_structured_answers(work: dict[str, Path], tf_server: Server,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """transformers serve (5.24) ignores ``logprobs``/``top_logprobs`` and ``response_format`` (its log says so): no
    confidence is made up (each closed answer carries the reason), and every structured answer is said not followed."""
    srv = tf_server
    conf, _ = with_log(srv, lambda: check_confidences(srv, work, "tf-confidence"))
    assert set(conf) <= {"no answers to map", "the server sent no token log-probabilities",
                         "confidence in the answer given (calibration rows)"}, conf
    assert conf["the server sent no token log-probabilities"] > 0
    structured, mech = with_log(srv, lambda: check_structured(srv, work, "tf-structured"))
    assert mech == "json_schema" and structured["not followed"] > 0 and not structured.get("followed"), structured
    ignored = {f.strip().strip("'") for fields in re.findall(r"Ignoring unsupported fields in the request: \{([^}]*)\}",
                                                              srv.log_text()) for f in fields.split(",")}
    assert {"logprobs", "top_logprobs", "response_format"} <= ignored, ignored
    with capsys.disabled():
        print(f"\n[servers] transformers-serve --confidence logprobs: {conf}")
        print(f"[servers] transformers-serve --structured-answers ({mech}): {structured}")
        print(f"[servers] transformers-serve log: ignoring unsupported fields {sorted(ignored)}")


def test_vllm(work: dict[str, Path], vllm_server: Server, capsys: pytest.CaptureFixture[str]) -> None:
    exercise(vllm_server, work, "vllm", 16, True, capsys)


def test_vllm_confidences_and_structured_answers(work: dict[str, Path], vllm_server: Server,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM returns the answer tokens' log-probabilities: with guided choice (``structured=vllm-choice``) every
    single-choice answer is an option letter, so its confidence is stored and calibration.json scores it; the
    preset's ``json_schema`` and vLLM's guided choice are followed."""
    srv = vllm_server
    free, _ = with_log(srv, lambda: check_confidences(srv, work, "vllm-confidence"))
    guided, _ = with_log(srv, lambda: check_confidences(srv, work, "vllm-confidence-choice", "--structured-answers",
                                                        "--model-option", "structured=vllm-choice"))
    assert guided["logprobs"] > 0 and guided["confidence in the answer given (calibration rows)"] > 0, guided
    lines = [f"--confidence logprobs: {free}", f"--confidence logprobs --structured-answers (vllm-choice): {guided}"]
    for option in ((), ("--model-option", "structured=vllm-choice")):
        kinds, mech = with_log(srv, lambda o=option: check_structured(srv, work, f"vllm-structured-{len(o)}", *o))
        # every closed answer follows its constraint or is a begun JSON object cut at the token limit (the random
        # tiny model may fill a JSON object with the whitespace the schema allows), never unconstrained prose
        assert not kinds.get("not followed") and kinds.get("followed", 0) + kinds.get("cut at the token limit", 0) > 0
        if option:  # guided choice: a bare option letter / yes-no, which cannot run long
            assert kinds.get("followed", 0) > 0, kinds
        lines.append(f"--structured-answers ({mech}): {kinds}")
    with capsys.disabled():
        print()
        for line in lines:
            print(f"[servers] vllm {line}")


def test_vllm_offline_engine(work: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """The ``vllm:`` adapter (vLLM's in-process engine, no server) through ``medr2 eval`` from the vLLM venv,
    where scripts/setup_vllm.sh installs medr2 beside vLLM; answers compared with ``hf:`` as for the servers."""
    exe = vllm_python().with_name("medr2")
    if not exe.exists():
        pytest.skip(f"no medr2 in the vLLM environment at {VLLM_VENV}: run `bash scripts/setup_vllm.sh` (.ci/run does)")
    run = work["dir"] / "run-vllm-offline"
    cmd = [str(exe), "eval", "--split", "all", "--bench", str(work["bench"]), "--model", f"vllm:{work['tiny_vllm']}",
           "--preset", "medr2-tiny", "--out", str(run), "--mode", MODES, "--limit", str(LIMIT),
           "--max-new-tokens", str(MAX_NEW), "--batch-size", "16", "--no-progress",
           "--model-option", "dtype=float32", "--model-option", "max_model_len=2048",
           "--model-option", f"kv_cache_memory_bytes={VLLM_KV_CACHE_BYTES}"]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env={**os.environ, **VLLM_ENV})
    wall = time.perf_counter() - t0
    log = work["dir"] / "vllm-offline.log"
    log.write_text(f"$ {' '.join(cmd)}\n{p.stdout}{p.stderr}", "utf-8")
    assert p.returncode == 0, f"{' '.join(cmd)} -> {p.returncode}\n{log_errors(log)}\n{p.stderr[-6000:]}"
    manifest = json.loads((run / "manifest.json").read_text("utf-8"))
    assert manifest["model"]["settings"]["adapter"] == "vllm"
    assert manifest["model"]["settings"]["kv_cache_memory_bytes"] == VLLM_KV_CACHE_BYTES
    medr2("score", str(run), "--mixed-splits", log=work["log"])
    lines = compare_with_hf(run, work, holds_back_partial_utf8=True)
    with capsys.disabled():
        print(f"\n[servers] vllm offline engine (vllm:{work['tiny_vllm'].name}): {len(answers(run))} answers "
              f"in {wall:.1f}s incl. engine start; log {log}")
        for line in lines:
            print(f"[servers] vllm-offline: {line}")


# ---------------------------------------------------------------------------------------------
# several images per question (issue 49): a bench of two-image items made from the built bench's clean items.
# The servers here; the ``vllm:`` in-process engine with two images is tests/test_multi_image_vllm_families.py (every
# family vLLM runs, one engine process), so no second engine start here (CI's time).


TWO_IMAGE_CASES = 4  # the cases whose clean items get a prior study (the next case's image, 180 days before)


@pytest.fixture(scope="module")
def two_image_bench(work: dict[str, Path]) -> Path:
    """The built sample bench's clean items, those of the first cases with a prior study added before their own
    image (another case's image, as a stand-in for the patient's earlier study), written with the bench writer;
    then answered in-process by ``hf:`` (the reference the servers are compared with)."""
    import shutil

    from medr2.bench.format import load_bench, write_bench
    from medr2.records import ImageRef
    from tests.multi_image_fixtures import with_second_image

    src = load_bench(work["bench"])
    out = work["dir"] / "bench-two-images"
    shutil.copytree(src.root / "images", out / "images")
    cases = list(src.cases)
    priors = {c.case_id: ImageRef(path=n.image, sha256=n.image_sha256, width=n.width, height=n.height, role="prior",
                                  interval_days=180, case_id=n.case_id)
              for c, n in zip(cases[:TWO_IMAGE_CASES], cases[1:TWO_IMAGE_CASES + 1], strict=True)}
    parents: dict[str, str] = {}
    items = [with_second_image(it, priors[it.case_id], parents) if it.case_id in priors and it.image else it
             for it in src.items if it.variant == "clean"]
    write_bench(out, cases, items, {"name": "two-images"})
    medr2("eval", "--split", "all", "--bench", str(out), "--model", f"hf:{work['tiny']}", "--out",
          str(work["dir"] / "run-two-hf"), "--mode", "independent", "--max-new-tokens", str(MAX_NEW), "--no-progress",
          log=work["log"])
    return out


def two_image_run(srv: Server, work: dict[str, Path], bench: Path, name: str) -> list[str]:
    """``medr2 eval`` of the two-image bench through ``srv`` (the adapter told the server takes two images per
    prompt), then ``medr2 score``: every answer stored ok with both images in its request, scored, and equal to
    ``hf:``'s (as the module docstring pins) with the same prompt token count (each image is one token: a dropped
    image would show)."""
    run = work["dir"] / f"run-two-{name}"
    medr2("eval", "--split", "all", "--bench", str(bench), "--model", f"openai:{srv.model}", "--preset", "medr2-tiny",
          "--base-url", srv.url, "--out", str(run), "--mode", "independent", "--max-new-tokens", str(MAX_NEW),
          "--model-option", "max_images=2", "--concurrency", "4", "--retries", "0", "--no-progress", log=work["log"])
    medr2("score", str(run), "--mixed-splits", log=work["log"])
    several = 0
    for sp in Store.open(run).iter_predictions(with_request=True):
        request = sp.request or []
        images = [p for m in request for p in m["parts"] if p["type"] == "image"]
        several += len(images) == 2
        if len(images) == 2:
            text = next(p["text"] for p in request[-1]["parts"] if p["type"] == "text")
            # the test's prior (180 days) or one the sample planned itself (s3.change items, issue 49)
            assert re.match(r"Image 1: prior study, \d+ days before the current one\. Image 2: current study\.\n",
                            text), text[:200]
    assert several > 0
    hf, served = answers(work["dir"] / "run-two-hf"), answers(run)
    assert set(hf) == set(served)
    diffs = Counter(difference(hf[k][0], served[k][0], (served[k][2] or 0) >= MAX_NEW, name == "vllm")
                    for k in hf)
    assert not diffs.get("unexplained"), diffs
    assert all(hf[k][1] == served[k][1] for k in hf), "prompt token counts differ from hf:"
    scored = verdicts(run)
    assert len(scored) == len(hf) and set(scored.values()) <= {"correct", "wrong", "unparsed", "error", "abstained",
                                                               "truncated"}
    return [f"{len(served)} answers, {several} of two images, stored and scored; vs hf: {dict(diffs)}"]


def test_two_images_transformers_serve(work: dict[str, Path], tf_server: Server, two_image_bench: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    lines = with_log(tf_server, lambda: two_image_run(tf_server, work, two_image_bench, "transformers-serve"))
    with capsys.disabled():
        print(f"\n[servers] transformers-serve two images: {lines[0]}")


def test_two_images_vllm(work: dict[str, Path], vllm_server: Server, two_image_bench: Path,
                         capsys: pytest.CaptureFixture[str]) -> None:
    lines = with_log(vllm_server, lambda: two_image_run(vllm_server, work, two_image_bench, "vllm"))
    with capsys.disabled():
        print(f"\n[servers] vllm two images: {lines[0]}")
