"""Structured answers (issue 42, part 2): ``medr2 eval --structured-answers`` makes a real OpenAI-compatible server
on 127.0.0.1 constrain every closed answer (the request carries the preset's mechanism: a JSON schema whose answer
field is an enum of the option letters, vLLM guided choice, SGLang regex), the raw answer is stored as sent,
scoring reads the structured field, and the report marks the run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from hypothesis import given, settings, strategies as st

from medr2 import BadInput, ModelConfig
from medr2.models.structured import (
    CONSTRAINED_FORMS,
    STRUCTURED_MODES,
    answer_schema,
    follows,
    request_fields,
    structured_answer,
    structured_choice,
    unfollowed_note,
)
from medr2.records import letter
from medr2.run.runner import EvalConfig, run_eval
from medr2.run.store import Store
from medr2.scoring.scorer import load_table, score_run
from tests.run_fixtures import make_bench
from tests.scripted_server import ScriptedServer, completion, json_response


class _Item:
    def __init__(self, form: str, options: list[str]) -> None:
        self.form, self.options = form, options


_OPTION = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=12)


@st.composite
def closed_answers(draw: st.DrawFn) -> tuple[_Item, Any, str]:
    """A closed item, a value its schema allows, and the answer the reader must give for it."""
    form = draw(st.sampled_from(sorted(CONSTRAINED_FORMS)))
    options = draw(st.lists(_OPTION, min_size=2, max_size=8, unique=True)) if form in ("mcq", "multi") else []
    letters = [letter(i) for i in range(len(options))]
    if form == "mcq":
        v = draw(st.sampled_from(letters))
        return _Item(form, options), v, v
    if form == "yesno":
        v = draw(st.sampled_from(["yes", "no"]))
        return _Item(form, options), v, v
    if form == "multi":
        chosen = draw(st.lists(st.sampled_from(letters), min_size=1, max_size=len(letters), unique=True))
        return _Item(form, options), chosen, ",".join(sorted(chosen))
    box = draw(st.lists(st.integers(0, 500), min_size=4, max_size=4))
    return _Item(form, options), box, ""


@given(closed_answers(), st.sampled_from(["", " ", "\n"]))
@settings(max_examples=150, deadline=None)
def test_schema_allows_exactly_the_answers_and_the_reader_reads_the_field(case: tuple[_Item, Any, str],
                                                                         pad: str) -> None:
    item, value, expected = case
    schema = answer_schema(item)
    assert schema is not None and schema["required"] == ["answer"] and schema["additionalProperties"] is False
    field = schema["properties"]["answer"]
    allowed = field.get("enum") or field.get("items", {}).get("enum")
    if item.form == "yesno":
        assert allowed == ["yes", "no"]
    elif item.form != "box":
        assert allowed == [letter(i) for i in range(len(item.options))]
    raw = pad + json.dumps({"answer": value}, ensure_ascii=False) + pad
    if item.form == "box":  # the field's text, read by the ordinary reader
        text = structured_answer(item.form, raw)
        assert text is not None
        assert [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", text)] == [float(v) for v in value]
        assert structured_choice(item.form, raw, item.options) is None
        return
    # by structure, whatever the option texts say (an option whose text is a letter cannot confuse it)
    assert structured_choice(item.form, raw, item.options) == expected
    if item.form != "multi":  # guided choice: the bare value
        assert structured_choice(item.form, pad + value + pad, item.options) == expected
    # a value outside the constraint is never taken as it is: the reader reads it
    outside = {"mcq": "Z9", "yesno": "maybe", "multi": ["Z9"]}[item.form]
    assert structured_choice(item.form, json.dumps({"answer": outside}), item.options) is None


@given(st.sampled_from(sorted(CONSTRAINED_FORMS)), st.text(max_size=40))
@settings(max_examples=150, deadline=None)
def test_text_that_is_no_answer_object_is_left_to_the_reader(form: str, text: str) -> None:
    """Free text, a bare guided-choice letter, or JSON without the field: no structured field (never a guess)."""
    if text.strip().startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict) and "answer" in data:
            return
    assert structured_answer(form, text) is None


def test_every_mode_constrains_every_closed_form_and_no_free_text() -> None:
    """Enumerates the registered mechanisms: each gives fields for every closed form and none for free text."""
    for name in STRUCTURED_MODES.names():
        for form in sorted(CONSTRAINED_FORMS):
            item = _Item(form, ["x", "y", "z"] if form in ("mcq", "multi") else [])
            assert request_fields(name, item), (name, form)
        assert request_fields(name, _Item("text", [])) == {}, name


def _value(body: dict[str, Any]) -> tuple[str, str]:
    """What a constraining server returns for this body, and the constraint it saw."""
    if "response_format" in body:
        schema = body["response_format"]["json_schema"]["schema"]["properties"]["answer"]
        if "enum" in schema:
            return json.dumps({"answer": schema["enum"][-1]}), "json_schema"
        if schema["type"] == "array" and "enum" in schema["items"]:
            return json.dumps({"answer": schema["items"]["enum"][:2]}), "json_schema"
        return json.dumps({"answer": [4, 4, 20, 20]}), "json_schema"
    so = body.get("structured_outputs")
    if isinstance(so, dict) and "choice" in so:
        return so["choice"][-1], "vllm-choice"
    if isinstance(so, dict) and "json" in so:
        return json.dumps({"answer": so["json"]["properties"]["answer"]["items"]["enum"][:2]}
                          if so["json"]["properties"]["answer"]["type"] == "array"
                          and "enum" in so["json"]["properties"]["answer"]["items"]
                          else {"answer": [4, 4, 20, 20]}), "vllm-choice"
    if "guided_choice" in body:
        return body["guided_choice"][-1], "vllm-guided"
    if "guided_json" in body:
        answer = body["guided_json"]["properties"]["answer"]
        return json.dumps({"answer": answer["items"]["enum"][:2]} if answer["type"] == "array"
                          and "enum" in answer["items"] else {"answer": [4, 4, 20, 20]}), "vllm-guided"
    if "regex" in body:
        return body["regex"].strip("()").split("|")[-1], "sglang-regex"
    return "The report: no acute findings.", "none"


@given(closed_answers(), st.sampled_from(sorted(STRUCTURED_MODES.names())), _OPTION)
@settings(max_examples=200, deadline=None)
def test_follows_tells_a_constrained_answer_from_free_text(case: tuple[_Item, Any, str], mode: str,
                                                           words: str) -> None:
    """What a server applying ``mode``'s constraint answers has the constraint's shape; prose (what a server that
    ignores the constraint writes) has not; a free-text form or no mechanism is not judged."""
    item, _value_drawn, _ = case
    answer, _kind = _value(request_fields(mode, item))
    assert follows(mode, item, answer) is True
    assert follows(mode, item, f"The answer is {answer} ({words})") is False
    assert follows(mode, item, "") is False
    assert follows(None, item, answer) is None and follows(mode, _Item("text", []), answer) is None
    # the note: prose is "not followed" even when it ran to the token limit; a begun JSON object cut there is "cut off"
    prose = f"The answer is {answer} ({words})"
    assert "not followed" in unfollowed_note(mode, item, prose, "length")
    assert "not followed" in unfollowed_note(mode, item, prose, "stop")
    if answer.startswith("{"):
        assert "cut off by the token limit" in unfollowed_note(mode, item, answer[:-2], "length")


def _structured_run(tmp_path: Path, mode: str | None) -> tuple[Path, Path, list[dict[str, Any]]]:
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=2)
    seen: list[dict[str, Any]] = []

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        seen.append(body)
        return json_response(completion(_value(body)[0]))

    run = tmp_path / "run"
    extra: dict[str, Any] = {"backoff_initial_s": 0.01}
    if mode is not None:
        extra["structured"] = mode
    with ScriptedServer(respond) as srv:
        run_eval(EvalConfig(bench=bench, model=ModelConfig("openai:m", base_urls=(srv.url,), extra=extra), out=run,
                            split="all", structured_answers=True))
    return bench, run, seen


@pytest.mark.parametrize("mode", [None, *sorted(STRUCTURED_MODES.names())])
def test_eval_score_report_with_structured_answers(tmp_path: Path, mode: str | None) -> None:
    from medr2.bench.format import load_bench
    from medr2.reporting.write import write_report

    bench, run, seen = _structured_run(tmp_path, mode)
    expected_mode = mode or "json_schema"  # the generic preset declares json_schema
    items = {it.item_id: it for it in load_bench(bench).items}
    with Store.open(run) as store:
        stored = {(sp.prediction.item_id, sp.prediction.mode): sp.prediction.raw
                  for sp in store.iter_predictions(with_request=False)}
    # every closed question was asked with a constraint, the free-text ones without
    kinds = {_value(b)[1] for b in seen}
    assert kinds == {expected_mode, "none"} or (expected_mode == "sglang-regex" and kinds <= {
        "sglang-regex", "json_schema", "none"})
    for b in seen:
        mcq_schema = (b.get("response_format") or {}).get("json_schema", {}).get("schema")
        if mcq_schema and "enum" in mcq_schema["properties"]["answer"]:
            assert mcq_schema["properties"]["answer"]["enum"] in (["yes", "no"], ["A", "B", "C", "D"])
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["identity"]["structured_answers"] == expected_mode == manifest["structured_answers"]

    metrics = score_run(run, n_resamples=20, mixed_splits=True)
    assert metrics["run"]["structured_answers"] == expected_mode
    table = load_table(run)
    for row in table.itertuples():
        item = items[row.item_id]
        raw = stored[(row.item_id, row.mode)]
        if item.form == "mcq":  # the server chose the last letter; the raw answer is kept as sent
            assert row.parsed == letter(len(item.options) - 1), raw
            assert raw.startswith("{") == (expected_mode == "json_schema")
        elif item.form == "yesno":
            assert row.parsed == "no"
        elif item.form == "multi":
            assert row.parsed == "A,B"
        elif item.form == "box":
            assert row.verdict in ("correct", "wrong") and row.parsed is not None
    html = write_report([run], tmp_path / "report", max_items=5).read_text("utf-8")
    assert f"structured ({expected_mode})" in html


def test_free_runs_are_unchanged_and_unmarked(tmp_path: Path) -> None:
    from medr2.reporting.write import write_report

    bench = tmp_path / "bench"
    make_bench(bench, n_cases=2)
    seen: list[dict[str, Any]] = []

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        seen.append(body)
        return json_response(completion("A"))

    run = tmp_path / "run"
    with ScriptedServer(respond) as srv:
        run_eval(EvalConfig(bench=bench, model=ModelConfig("openai:m", base_urls=(srv.url,)), out=run, split="all"))
    assert seen and not any(k in b for b in seen for k in ("response_format", "structured_outputs", "regex"))
    assert "structured_answers" not in json.loads((run / "manifest.json").read_text())["identity"]
    with pytest.raises(BadInput) as e:  # resuming the free run with structured answers would mix the two
        run_eval(EvalConfig(bench=bench, model=ModelConfig("openai:m", base_urls=("http://127.0.0.1:9/v1",)), out=run,
                            split="all", structured_answers=True))
    assert e.value.field == "structured_answers"
    metrics = score_run(run, n_resamples=0, mixed_splits=True)
    assert "structured_answers" not in metrics["run"]
    html = write_report([run], tmp_path / "report", max_items=5).read_text("utf-8")
    assert "structured (" not in html


def test_adapter_without_structured_answers_is_refused(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=2)
    with pytest.raises(BadInput) as e:
        run_eval(EvalConfig(bench=bench, model=ModelConfig("baseline:random"), out=tmp_path / "run", split="all",
                            structured_answers=True))
    assert e.value.field == "--structured-answers" and not (tmp_path / "run" / "manifest.json").exists()


def test_unknown_mechanism_is_refused(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=2)
    with pytest.raises(BadInput, match="structured answer mode"):
        run_eval(EvalConfig(bench=bench,
                            model=ModelConfig("openai:m", base_urls=("http://127.0.0.1:9/v1",),
                                              extra={"structured": "telepathy"}), out=tmp_path / "run", split="all",
                            structured_answers=True))


def test_hf_models_answer_structured_by_log_likelihood(tmp_path: Path,
                                                       tmp_path_factory: pytest.TempPathFactory) -> None:
    """``hf:`` takes the existing log-likelihood choice path for closed items, recorded as ``loglik``."""
    from medr2.models.registry import load_adapter
    from tests.train_fixtures import tiny_vlm_dir

    tiny = tiny_vlm_dir(tmp_path_factory)
    with pytest.raises(BadInput) as e:
        load_adapter(ModelConfig(f"hf:{tiny}", extra={"structured": "preset", "choice": "generate"}))
    assert e.value.field == "--structured-answers"
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=2)
    run = tmp_path / "run"
    run_eval(EvalConfig(bench=bench, model=ModelConfig(f"hf:{tiny}"), out=run, split="all", limit=8,
                        structured_answers=True))
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["identity"]["structured_answers"] == "loglik" and "#choice=loglik" in manifest["model"]["key"]
    with Store.open(run) as store:
        stored = list(store.iter_predictions(with_request=False))
    assert stored and all(sp.prediction.status == "ok" for sp in stored)


@pytest.mark.parametrize("mode", sorted(STRUCTURED_MODES.names()))
def test_ray_http_bodies_carry_the_same_constraint(tmp_path: Path, mode: str) -> None:
    """``--executor ray`` builds each body in a worker from the stored messages: with structured answers it is
    byte for byte the body a local run sends (the constraint included)."""
    from medr2 import BoxConvention, GenSettings, Request
    from medr2.models.openai import OpenAIAdapter
    from medr2.run.prompts import MODES, messages_json, render_messages
    from medr2.run.ray_executor import BODY_KEY, _BodySpec, _preprocess, _settings_dict

    bench = make_bench(tmp_path / "bench", n_cases=2)
    local = OpenAIAdapter("m", base_urls=["http://127.0.0.1:9/v1"], structured=mode)
    settings = GenSettings(max_new_tokens=16, seed=0)
    spec = _BodySpec(model="m", extra_body=json.dumps(local.extra_body, sort_keys=True),
                     max_tokens_field=local.max_tokens_field, bench_root=str(bench.root),
                     settings=json.dumps(_settings_dict(settings)), structured=mode)
    constrained = 0
    for item in bench.items:
        msgs = tuple(render_messages(item, mode=MODES["independent"], history=(), conv=BoxConvention()))
        req = Request("k", msgs, settings, bench.root, item.item_id, meta={"item": item})
        row = {"request_hash": "k", "item_id": item.item_id, "messages": json.dumps(messages_json(msgs)),
               "form": item.form, "options": json.dumps(list(item.options))}
        sent = _preprocess(spec, row)["payload"][BODY_KEY]
        assert sent.encode("utf-8") == local.body(req)
        constrained += sent != OpenAIAdapter("m", base_urls=["http://127.0.0.1:9/v1"]).body(req).decode("utf-8")
    assert constrained == sum(1 for it in bench.items if it.form != "text")


def test_a_server_that_ignores_the_constraint_is_said_not_silent(tmp_path: Path) -> None:
    """A server that drops the constraint and answers prose (as ``transformers serve`` does with ``response_format``):
    each closed answer is stored as sent with a note saying the constraint was not followed, ``medr2 eval`` counts
    them in a warning, and scoring reads the prose with the ordinary reader."""
    from medr2.bench.format import load_bench
    from tests.cli_inproc import run_cli

    bench = tmp_path / "bench"
    make_bench(bench, n_cases=2)
    items = {it.item_id: it for it in load_bench(bench).items}
    closed = sum(1 for it in items.values() if it.form in CONSTRAINED_FORMS)

    async def respond(request: web.Request, raw: bytes, body: Any) -> web.StreamResponse:
        value, _ = _value(body)
        said = json.loads(value)["answer"] if value.startswith("{") else value
        return json_response(completion(f"I think the answer is {said}."))

    run = tmp_path / "run"
    with ScriptedServer(respond) as srv:
        code, out = run_cli("eval", "--bench", str(bench), "--model", "openai:m", "--base-url", srv.url, "--out",
                            str(run), "--split", "all", "--structured-answers", "--no-progress")
    assert code == 0, out
    said = re.search(r"structured answers not followed: (\d+) of (\d+) answers", " ".join(out.split()))
    assert said is not None and int(said.group(1)) == closed, out
    with Store.open(run) as store:
        stored = list(store.iter_predictions(with_request=False))
    assert len(stored) == int(said.group(2))
    for sp in stored:
        notes = [n for n in sp.meta.get("notes", ()) if n.startswith("structured answer (json_schema) not followed")]
        assert len(notes) == (items[sp.prediction.item_id].form in CONSTRAINED_FORMS), (sp.prediction.raw, notes)
        assert sp.prediction.raw is not None and sp.prediction.raw.startswith("I think")  # kept as sent
    score_run(run, n_resamples=0, mixed_splits=True)
    table = load_table(run)
    mcq = table[table["form"] == "mcq"]
    assert len(mcq) and mcq["parsed"].notna().all()  # "I think the answer is D." read by the reader
