"""One ``ModelConfig`` from ``medr2 eval``'s options (or ``medr2.evaluate``'s keywords) to the adapter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import medr2
from medr2.errors import BadInput
from medr2.models.config import DEFAULT_MAX_NEW_TOKENS, ModelConfig
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
