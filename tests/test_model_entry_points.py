"""Every entry point that makes a model hands its settings to the adapter through one ``ModelConfig`` (issue 38).

The entry points are found, not listed: the API verbs (``medr2.api.VERBS``) and the commands of ``medr2 --help``
whose code reaches :func:`medr2.models.registry.load_adapter` (the package's reference graph, read from its
source: ``tests/model_entry_graph.py``). Each is driven with settings given its own way (options, keywords, the
record) against a real ``openai:`` adapter and a local OpenAI-compatible server that accepts one API key only:
the key (read from the variable ``--api-key-env`` names) reaches the server, and the adapter's own account of its
settings (``manifest.json``'s ``model.settings``) holds what was given."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import medr2
from medr2 import ModelConfig
from medr2.api import VERBS
from medr2.cli import app
from tests.cli_inproc import run_cli
from tests.model_entry_graph import graph, reaches
from tests.openai_server import OpenAIServer
from tests.run_fixtures import make_bench

LOAD = "medr2.models.registry:load_adapter"
KEY_ENV, SECRET = "MEDR2_ENTRY_KEY", "sk-entry-0123456789"
# what the drivers give: the adapter must report exactly these (its settings in the run manifest)
GIVEN = {"api_key_env": KEY_ENV, "concurrency": 3, "timeout_s": 7.0, "retries": 1}


def _api_makers() -> set[str]:
    return {v for v in VERBS if reaches(f"medr2.api:{v}", LOAD)}


def _cli_makers() -> dict[str, str]:
    """command name -> its callback's ``module:qualname``, for the commands that reach the adapter registry."""
    out = {}
    for c in app.registered_commands:
        assert c.callback is not None
        ref = f"{c.callback.__module__}:{c.callback.__qualname__}"
        assert ref in graph(), ref  # the graph knows every command (else it would find nothing for it)
        if reaches(ref, LOAD):
            out[c.name or c.callback.__name__.replace("_", "-")] = ref
    return out


# -- the drivers: each makes its model with GIVEN and returns the run whose manifest the adapter wrote --------


def _eval_cli(bench: Path, out: Path, url: str) -> Path:
    code, text = run_cli("eval", "--bench", str(bench), "--model", "openai:m", "--out", str(out), "--split", "all",
                         "--limit", "3", "--no-progress", "--base-url", url, "--api-key-env", KEY_ENV,
                         "--concurrency", "3", "--timeout", "7", "--retries", "1")
    assert code == 0, text
    return out


def _evaluate_keywords(bench: Path, out: Path, url: str) -> Path:
    medr2.evaluate(bench, "openai:m", out, split="all", limit=3, base_url=url, api_key_env=KEY_ENV, concurrency=3,
                   timeout=7.0, retries=1)
    return out


def _evaluate_record(bench: Path, out: Path, url: str) -> Path:
    medr2.evaluate(bench, ModelConfig("openai:m", base_urls=(url,), **GIVEN), out, split="all", limit=3)
    return out


def _judged(score: Callable[[Path, str], Any]) -> Callable[[Path, Path, str], Path]:
    """A driver scoring a baseline run with the server as its judge (the judge is asked about a sample of the
    parsed closed answers); the judge keeps no manifest: the key reaching the server is what shows."""
    def drive(bench: Path, out: Path, url: str) -> Path:
        medr2.evaluate(bench, "baseline:random", out, split="all", limit=6)
        score(out, url)
        return out

    return drive


def _score_cli(run: Path, url: str) -> None:
    code, text = run_cli("score", str(run), "--mixed-splits", "--resamples", "0", "--judge", "m", "--judge-sample",
                         "3", "--judge-base-url", url, "--judge-api-key-env", KEY_ENV)
    assert code == 0, text


def _score_api(run: Path, url: str) -> None:
    medr2.score(run, judge="m", judge_base_url=url, judge_api_key_env=KEY_ENV, resamples=0, mixed_splits=True,
                judge_sample=3)


API_DRIVERS: dict[str, list[Callable[[Path, Path, str], Path]]] = {
    "evaluate": [_evaluate_keywords, _evaluate_record], "score": [_judged(_score_api)]}
CLI_DRIVERS: dict[str, list[Callable[[Path, Path, str], Path]]] = {
    "eval": [_eval_cli], "score": [_judged(_score_cli)]}
# the demo makes its models from its own configuration (no model option): its runs' settings are checked by the
# quick demo's test (tests/test_demo.py, every run's generation seed is the demo's seed)
BY_ITS_OWN_TEST = {"demo"}


def test_every_entry_point_that_makes_a_model_has_a_driver() -> None:
    api, cli = _api_makers(), _cli_makers()
    assert "evaluate" in api and "eval" in cli  # the graph sees the known path (it is not vacuous)
    assert "build" not in api and "build" not in cli
    assert api == set(API_DRIVERS) | BY_ITS_OWN_TEST
    assert set(cli) == set(CLI_DRIVERS) | BY_ITS_OWN_TEST
    for ref in cli.values():  # each command makes its model through an API verb (which builds the record)
        assert any(f"medr2.api:{v}" in graph()[ref] for v in api), ref


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bench")
    make_bench(root, n_cases=3)
    return root


@pytest.mark.parametrize(("entry", "drive"), [(f"api {n}", d) for n, ds in API_DRIVERS.items() for d in ds]
                         + [(f"cli {n}", d) for n, ds in CLI_DRIVERS.items() for d in ds])
def test_the_settings_given_reach_the_adapter(entry: str, drive: Callable[[Path, Path, str], Path], bench: Path,
                                              tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    with OpenAIServer(api_key=SECRET, model="m") as srv:
        run = drive(bench, tmp_path / "run", srv.url)
        assert srv.stats.requests > 0, entry
        assert srv.stats.auth_headers == {f"Bearer {SECRET}"}, entry
    settings = json.loads((run / "manifest.json").read_text())["model"]["settings"]
    if "eval" in entry:
        assert {k: settings[k] for k in GIVEN} == GIVEN
        assert settings["base_urls"] == [srv.url]
