"""One ``ModelConfig`` from ``medr2 eval``'s options (or ``medr2.evaluate``'s keywords) to the adapter."""

from __future__ import annotations

import json
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import medr2
from medr2 import BadInput, ModelConfig
from medr2.models.config import DEFAULT_MAX_NEW_TOKENS
from medr2.models.presets import get_preset
from tests.run_fixtures import make_bench


def test_from_cli_folds_options_and_backoff_into_extra() -> None:
    cfg = ModelConfig.from_cli("openai:m", base_url=["http://a/v1", "http://b/v1"], model_option=["dtype=float32",
                               "max_model_len=2048", "backoff_initial_s=9"], backoff=0.25, retries=2, timeout_s=3.0)
    assert cfg.base_urls == ("http://a/v1", "http://b/v1")
    assert dict(cfg.extra) == {"dtype": "float32", "max_model_len": 2048, "backoff_initial_s": 0.25}  # --backoff wins
    assert (cfg.retries, cfg.timeout_s) == (2, 3.0)
    assert ModelConfig.from_cli("openai:m", base_url="http://a/v1", model_option={"x": [1]}).extra == {"x": [1]}
    assert ModelConfig.from_cli("openai:m") == ModelConfig("openai:m")


def test_generation_uses_the_preset_budget_unless_given() -> None:
    thinking = get_preset("qwen3-vl-thinking")
    assert ModelConfig("openai:m").generation(None).max_new_tokens == DEFAULT_MAX_NEW_TOKENS
    assert ModelConfig("openai:m").generation(thinking).max_new_tokens == thinking.max_new_tokens
    assert ModelConfig("openai:m", max_new_tokens=33, seed=4).generation(thinking).max_new_tokens == 33
    assert ModelConfig("openai:m", preset="qwen3-vl-thinking").resolve_preset() == thinking
    with pytest.raises(BadInput, match="preset"):
        ModelConfig("openai:m", preset="no-such-preset").resolve_preset()


def test_the_bench_is_no_setting() -> None:
    """The runner sets the bench it reads; two records of the same settings are equal whatever bench they carry."""
    assert ModelConfig("baseline:random", bench=object()) == ModelConfig("baseline:random")  # type: ignore[arg-type]
    assert "bench" not in repr(ModelConfig("baseline:random"))


def test_evaluate_takes_the_record_or_its_keywords_not_both(tmp_path: Path) -> None:
    bench = make_bench(tmp_path / "bench", n_cases=2)
    by_keywords = medr2.evaluate(bench.root, "baseline:random", tmp_path / "a", split="all", seed=3, batch_size=2)
    by_record = medr2.evaluate(bench.root, ModelConfig("baseline:random", seed=3, batch_size=2), tmp_path / "b",
                               split="all")
    assert by_keywords.sent == by_record.sent > 0
    a, b = (json.loads((tmp_path / run / "manifest.json").read_text()) for run in ("a", "b"))
    assert a["identity"] == b["identity"] and a["model"] == b["model"]
    assert a["identity"]["generation"]["seed"] == 3
    with pytest.raises(BadInput, match="given twice.*retries"):
        medr2.evaluate(bench.root, ModelConfig("baseline:random"), tmp_path / "c", split="all", retries=1)


def _records() -> st.SearchStrategy[ModelConfig]:
    from medr2.models.presets import PRESETS

    return st.builds(
        ModelConfig, spec=st.sampled_from(["baseline:random", "baseline:oracle"]),
        # the presets whose boxes are in pixels, as the baselines give them (another space is refused)
        preset=st.none() | st.sampled_from(sorted(n for n in PRESETS.names() if PRESETS[n].box.space == "pixel")),
        base_urls=st.lists(st.sampled_from(["http://a/v1", "http://b/v1"]), max_size=2).map(tuple),
        api_key_env=st.none() | st.just("SOME_KEY"), concurrency=st.integers(1, 64),
        timeout_s=st.floats(0.5, 600), retries=st.integers(0, 9), batch_size=st.integers(1, 64),
        seed=st.integers(0, 2**31), max_new_tokens=st.none() | st.integers(1, 4096),
        temperature=st.sampled_from([0.0, 0.7]), extra=st.dictionaries(st.sampled_from(["a", "b"]), st.integers()))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(record=_records())
def test_the_record_reaches_the_adapter_registry_unchanged(record: ModelConfig, tmp_path: Path) -> None:
    """Whatever the settings, the registry's factory receives the very record ``EvalConfig`` carries (the bench it
    reads set by the runner), and the run's generation settings are the record's."""
    from medr2.models.registry import load_adapter
    from medr2.run.runner import EvalConfig, run_eval

    bench = tmp_path / "bench"
    if not bench.exists():
        make_bench(bench, n_cases=2)
    seen: list[ModelConfig] = []

    def loader(config: ModelConfig) -> Any:
        seen.append(config)
        return load_adapter(config)

    out = Path(tempfile.mkdtemp(dir=tmp_path))
    run_eval(EvalConfig(bench=bench, model=record, out=out / "run", split="all", limit=2), adapter_factory=loader)
    assert seen == [record] and seen[0].bench is not None and record.bench is None
    generation = json.loads((out / "run" / "manifest.json").read_text())["identity"]["generation"]
    assert generation == {**generation, **asdict(record.generation(record.resolve_preset())), "extra": []}
